//! RPC mode (`--mode rpc`), wire-compatible with TypeScript pi 1.6.0: `framing` splits stdin
//! into JSONL records and writes one record per line; `protocol` is what the records mean
//! (plain serde types, no I/O); `server` reads commands and owns the one writer of stdout;
//! `dispatch` maps each command to its session controller call and the result to a response;
//! `events` maps the controller's events to RPC's; `stdio` gives the server its pipes.

pub mod dispatch;
pub mod events;
pub mod framing;
#[cfg(test)]
mod framing_props;
pub mod protocol;
pub mod server;
pub mod stdio;
pub mod ui_bridge;
