//! The integration test binary: black-box tests of the `pi` executable against a mock model
//! server (wiremock) and the scripted `faux` provider, in hermetic temp homes.

#![allow(clippy::unwrap_used, clippy::expect_used)]
// a test crate: a panic is a failure report
// The tests' own notes (skips, figures) are for the person running them, not pi's output.
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]

mod common;

mod auth_cli;
mod auth_print;
mod boundaries;
mod cache_warm;
mod catalog;
mod claude_events;
mod claude_hooks;
mod claude_names;
mod claude_wiring;
mod cli;
mod controller;
mod cost;
mod hardening_grants;
mod hardening_host;
mod hardening_keys;
mod hardening_limits;
mod hardening_orphans;
mod hardening_sessions;
mod hardening_terminal;
mod harness;
mod hooks_author;
mod hooks_boundary;
mod hooks_cli;
mod hooks_faults;
mod hooks_messages;
mod hooks_model;
mod hooks_prompt;
mod hooks_replay;
mod hooks_samples;
mod hooks_seeds;
mod hooks_semantics;
mod hooks_state;
mod hooks_tool_surface;
mod hooks_tools;
mod import_changelog;
mod interactive;
mod interactive_clipboard;
mod interactive_commands;
mod interactive_editor;
mod interactive_keys;
mod interactive_sessions;
mod interactive_themes;
mod json_mode;
mod managed;
mod mcp;
mod mcp_cli;
mod mcp_faults;
mod model_commands;
mod model_flags;
mod oauth;
mod prompt_reference;
mod providers;
mod providers_google;
mod providers_mistral;
mod providers_responses;
mod providers_vertex;
mod resources;
mod rpc_mode;
mod rpc_reference;
mod rpc_ui;
mod session_cli;
mod session_cwd;
mod session_ops;
mod sessions;
mod signals;
mod tools;
mod trust;
mod ts_compat;
