//! mcp-tasks sqlite.
