//! pi: a terminal coding agent whose extensions run out of process.
//!
//! The library holds the agent core; `main.rs` is a thin binary over it. Folders follow the
//! product's concerns: `provider` (model APIs), `agent` (the loop), `tools` (built-in tools),
//! `config` (models, auth, settings), `controller` (the session controller every front end
//! drives), `modes` (print and json front ends), `cli` (arguments), `watchdog` (the process
//! that owns every process `pi` starts), `term` (what may reach a terminal).

// First, so its printing macros (`term_println!`, …) are in scope in every module below.
#[macro_use]
pub mod term;

pub mod agent;
pub mod app;
pub mod cli;
pub mod config;
pub mod controller;
pub mod delta;
pub mod export;
pub mod hooks;
pub mod mcp;
pub mod message;
pub mod modes;
pub mod oauth;
pub mod provider;
pub mod replay;
pub mod resources;
pub mod session;
pub mod setting_types;
#[cfg(test)]
mod test_support;
pub mod tools;
pub mod watchdog;
