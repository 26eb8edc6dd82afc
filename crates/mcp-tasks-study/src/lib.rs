//! mcp-tasks study.
