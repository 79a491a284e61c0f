//! The extension host: out-of-process hooks that speak length-prefixed JSON over stdin/stdout.
//!
//! `protocol` holds the message types (no I/O; the `pi-hook` crate's, shared with Rust hooks), `events` the event table, `framing` the codec,
//! `process` spawning and killing, `instance` one supervised hook process, `runner` the
//! per-event semantics over all loaded hooks.

pub mod bridge;
pub mod budget;
pub mod calls;
pub mod claude;
pub mod complete_calls;
pub mod describe;
pub mod events;
pub mod exec_check;
pub mod extension;
pub mod framing;
pub mod host;
pub mod instance;
pub mod lookup;
pub mod managed_env;
pub mod mcp_calls;
pub mod message_calls;
pub mod model_calls;
pub mod process;
/// The protocol's types live in the `pi-hook` crate, which hooks written in Rust use too.
pub use pi_hook::protocol;
#[cfg(test)]
mod protocol_doc_tests;
pub mod provider_calls;
pub mod rate_limit;
pub mod registration;
#[cfg(test)]
mod reply_props;
pub use pi_hook::reply_shape;
pub mod runner;
pub mod sample_payloads;
pub mod session_calls;
pub mod sources;
pub mod spec;
pub mod subscribe;
pub mod tool_calls;
pub mod tool_names;
pub mod ui;
pub mod ui_prompt;
