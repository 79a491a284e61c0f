//! Write pi hooks in Rust. A pi hook is any executable that speaks length-prefixed JSON on
//! stdin/stdout (`hook-protocol.md` in pi's repository is the normative description); this
//! crate is that protocol for Rust:
//!
//! - [`protocol`]: every message as a plain serde type — the very types the host uses, so a
//!   hook built on them cannot drift from pi;
//! - [`framing`]: the 4-byte big-endian length prefix, with the host's limits and typed errors,
//!   as a small blocking reader and writer;
//! - [`Hook`]: a helper that does the handshake and the bookkeeping — register events, tools
//!   and commands with closures, answer requests on worker threads, make host calls, exit on
//!   EOF or `shutdown`.
//!
//! ```no_run
//! use pi_hook::{Gate, Hook};
//!
//! let mut hook = Hook::new("no-sudo");
//! hook.on_tool_call(&["bash"], |call, _ctx| {
//!     if call.str_arg("command").is_some_and(|c| c.contains("sudo")) {
//!         Gate::block("sudo is not allowed here")
//!     } else {
//!         Gate::allow()
//!     }
//! });
//! hook.run();
//! ```

pub mod content;
pub mod framing;
mod hook;
pub mod protocol;
pub mod reply_shape;

pub use content::{ContentBlock, UserContent};
pub use hook::{
    CommandOutput, Context, Gate, HandlerError, Hook, HostError, RunError, ToolCall, ToolOutput,
};
pub use protocol::{FailPolicy, ToolDecl};
