//! MCP: pi's client for Model Context Protocol servers (issue 11). So far the configuration:
//! `mcp.json` files in the common `{"mcpServers": {…}}` format, each entry checked and turned
//! into a typed server description, tool names and per-tool exposure. Connecting (rmcp) comes
//! next.

pub mod config;
pub mod edit;
