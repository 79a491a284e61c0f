//! What RPC's records carry beyond the controller's vocabulary. A command's response data is
//! the controller's own result type (`crate::controller::types`), serialised as it is — one
//! vocabulary for every front end. What is left here is the usage figure `message_update`
//! events carry, which no controller operation returns.

/// pi-ai's `Usage`, as `message_update` carries it: the message type's own, so its numbers
/// print as JavaScript prints them (`0`, not `0.0`).
pub use crate::message::Usage;
