//! `pi hook replay`: what a hook would have decided about every tool call recorded in real
//! session files — so a new policy version (or another hook) is tried on last month's sessions
//! before it is deployed.
//!
//! Three concerns, three modules: [`calls`] reads the recorded tool calls (and what became of
//! each) out of session files; [`source`] is where decisions come from — the
//! [`DecisionSource`] trait, implemented by [`NativeHook`] (a hook command started once, asked
//! exactly as the host's gate asks), and [`claude::ClaudeHooks`] (Claude Code command hooks
//! through the host's own gate); [`report`] turns decisions into the table, the JSON document and the diff between two
//! sources. Nothing here prints: the command's edge (`app::hook_replay`) does.

pub mod calls;
pub mod claude;
mod line;
pub mod report;
mod scan;
pub mod source;

pub use calls::{read_sessions, Recorded, RecordedCall};
pub use source::{Decision, DecisionSource, NativeHook, Outcome};
