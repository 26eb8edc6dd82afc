//! The integration tests of mcp-tasks-sqlite-map, one binary.

mod shared_mapping;
