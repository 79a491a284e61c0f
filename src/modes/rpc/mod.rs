//! RPC mode's wire layer, wire-compatible with TypeScript pi 1.6.0: `framing` splits stdin into
//! JSONL records and writes one record per line; `protocol` is what the records mean. Neither
//! knows about the session: the mode wires them to the session controller.

pub mod framing;
#[cfg(test)]
mod framing_props;
pub mod protocol;
pub mod ui_bridge;
