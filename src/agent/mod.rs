//! The agent loop.
pub mod events;
