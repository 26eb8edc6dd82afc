//! mcp-tasks client.
