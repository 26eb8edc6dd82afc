//! mcp-tasks server.
