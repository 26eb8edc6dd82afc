//! mcp-tasks runtime.
