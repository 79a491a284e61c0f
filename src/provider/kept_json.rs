//! The JSON of messages a request already carried, written again as it was.
//!
//! Every model request carries the whole conversation, and all but its newest messages were in
//! the request before, so writing each body from scratch makes a run's serialization grow with
//! the square of its length (on the 50-call benchmark it was a fifth of pi's own work). A body
//! builder asks here first: a message seen in the previous request comes back as its JSON, a
//! new one is written once and kept. Messages are known by their allocation, and the cache
//! holds each message it keeps, so no other message can take that address while its JSON is
//! kept. Entries are kept in request order and looked up from where the last hit was: a
//! request is nearly always the previous one plus new messages, so a lookup is a pointer
//! comparison (hashing the addresses cost more than writing small messages). Only the messages of the latest request are kept, and at most [`KEEP_BYTES`] of JSON:
//! past that a request's messages are written as before, so a huge resumed context does not
//! hold a second copy of itself.

use std::sync::{Arc, Mutex, MutexGuard};

use serde::Serialize;
use serde_json::value::RawValue;

use crate::message::Message;

/// The most JSON kept for one request's messages.
pub const KEEP_BYTES: usize = 4 << 20;

type Entry = (Arc<Message>, Arc<RawValue>);

/// Kept JSON, in the order of the request that last carried it.
#[derive(Default)]
pub struct KeptJson {
    entries: Vec<Entry>,
}

impl KeptJson {
    pub const fn new() -> Mutex<Option<KeptJson>> {
        Mutex::new(None)
    }
}

/// One request's use of the cache: entries it asks for move to the next generation, and
/// whatever it did not ask for is dropped when it ends.
pub struct Pass<'k> {
    slot: MutexGuard<'k, Option<KeptJson>>,
    old: KeptJson,
    /// Where the next lookup in `old` starts: just after the last hit.
    cursor: usize,
    new: KeptJson,
    bytes: usize,
}

impl<'k> Pass<'k> {
    /// Starts a request's pass over `slot` (one slot per wire format).
    pub fn begin(slot: &'k Mutex<Option<KeptJson>>) -> Pass<'k> {
        let mut slot = slot.lock().unwrap_or_else(|p| p.into_inner());
        let old = slot.take().unwrap_or_default();
        let new = KeptJson {
            entries: Vec::with_capacity(old.entries.len() + 4),
        };
        Pass {
            slot,
            old,
            cursor: 0,
            new,
            bytes: 0,
        }
    }

    /// The JSON `message` was written as in the previous request, if it was kept.
    pub fn get(&mut self, message: &Arc<Message>) -> Option<Arc<RawValue>> {
        let rest = self.old.entries.get(self.cursor..)?;
        let at = rest.iter().position(|(m, _)| Arc::ptr_eq(m, message))?;
        let (held, json) = &rest[at];
        self.cursor += at + 1;
        self.bytes += json.get().len();
        self.new.entries.push((Arc::clone(held), Arc::clone(json)));
        Some(Arc::clone(json))
    }

    /// `wire` (what `message` becomes on the wire) as JSON, kept for the next request while
    /// there is room. `None` when there is none or it cannot be written: the caller then
    /// writes `wire` itself, as it would without a cache.
    pub fn keep<T: Serialize>(
        &mut self,
        message: &Arc<Message>,
        wire: &T,
    ) -> Option<Arc<RawValue>> {
        if self.bytes >= KEEP_BYTES {
            return None;
        }
        let json: Arc<RawValue> = serde_json::value::to_raw_value(wire).ok()?.into();
        self.bytes += json.get().len();
        self.new
            .entries
            .push((Arc::clone(message), Arc::clone(&json)));
        Some(json)
    }
}

impl Drop for Pass<'_> {
    fn drop(&mut self) {
        *self.slot = Some(std::mem::take(&mut self.new));
        // The previous generation's leftovers (messages this request no longer carries) are
        // dropped here, with the lock still held but nothing else to do.
        self.old.entries.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(text: &str) -> Arc<Message> {
        Arc::new(Message::user(text))
    }

    #[test]
    fn a_message_of_the_last_request_comes_back_and_one_it_dropped_does_not() {
        let slot = KeptJson::new();
        let (a, b) = (user("a"), user("b"));
        {
            let mut pass = Pass::begin(&slot);
            assert!(pass.get(&a).is_none());
            assert_eq!(pass.keep(&a, &"A").unwrap().get(), "\"A\"");
            pass.keep(&b, &"B");
        }
        {
            let mut pass = Pass::begin(&slot);
            assert_eq!(pass.get(&a).unwrap().get(), "\"A\"");
        }
        // `b` was not part of the second request, so it is gone.
        let mut pass = Pass::begin(&slot);
        assert!(pass.get(&b).is_none());
        assert_eq!(pass.get(&a).unwrap().get(), "\"A\"");
    }

    #[test]
    fn an_equal_message_in_another_allocation_is_written_anew() {
        let slot = KeptJson::new();
        let a = user("same");
        Pass::begin(&slot).keep(&a, &"old wire");
        let twin = user("same");
        assert!(Pass::begin(&slot).get(&twin).is_none());
    }

    #[test]
    fn nothing_more_is_kept_past_the_budget() {
        let slot = KeptJson::new();
        let big = "x".repeat(KEEP_BYTES);
        let (a, b) = (user("a"), user("b"));
        let mut pass = Pass::begin(&slot);
        assert!(pass.keep(&a, &big).is_some());
        assert!(pass.keep(&b, &"small").is_none());
    }
}
