//! How much a hook may leave behind in pi: the tools it registers (kept in memory for as long
//! as its process runs, and described to the model) and the session entries it writes (kept in
//! memory and in the session file for good). Both are bounded per item and in total per hook,
//! so a hook that floods `tools.register` or `session.append_entry` gets an error (`too_large`)
//! instead of taking pi's memory and disk — 40 calls of 12 MB each once took pi to 525 MB.
//!
//! The numbers are generous for real use and small next to a machine:
//! - a tool definition (its JSON: name, description, schemas, prompt text) at most 256 KiB —
//!   real tools are a few KiB, the largest schemas (MCP servers with long enums) tens of KiB;
//! - a hook's tools at most 4 MiB in all — hundreds of real tools, or sixteen of the largest;
//! - a session entry a hook writes (`session.append_entry`'s `custom_type` and `data`, a
//!   `message.send`'s content and details, a user message's text, a session name or label) at
//!   most 1 MiB — a state snapshot, or a message far larger than a model's context;
//! - a hook's entries at most 16 MiB per generation of hooks (from the moment pi starts, or
//!   opens, replaces or reloads the session, to the next such moment) — an audit entry of 500
//!   bytes on each of 30 000 tool calls.
//!
//! Sizes are the compact JSON of what the hook sent, counted without building it. Pure apart
//! from the ledgers' locks.

use std::collections::HashMap;
use std::sync::Mutex;

use serde::Serialize;

/// The largest tool definition a hook may register.
pub const MAX_TOOL_BYTES: usize = 256 * KIB;
/// The most a hook's registered tools may take in all.
pub const MAX_HOOK_TOOL_BYTES: usize = 4 * MIB;
/// The largest session entry a hook may write.
pub const MAX_ENTRY_BYTES: usize = MIB;
/// The most a hook's session entries may take in one generation.
pub const MAX_HOOK_ENTRY_BYTES: usize = 16 * MIB;

const KIB: usize = 1024;
const MIB: usize = 1024 * KIB;

/// A limit as people write it: `256 KiB`, `16 MiB`.
fn shown(limit: usize) -> String {
    if limit.is_multiple_of(MIB) {
        format!("{} MiB", limit / MIB)
    } else if limit.is_multiple_of(KIB) {
        format!("{} KiB", limit / KIB)
    } else {
        format!("{limit} bytes")
    }
}

/// What went past a limit. Answered to the hook with the error code [`TooLarge::CODE`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TooLarge {
    #[error(
        "tool {name:?} is {size} bytes as JSON; a tool definition may be at most {}",
        shown(MAX_TOOL_BYTES)
    )]
    Tool { name: String, size: usize },
    #[error(
        "hook {hook}'s tools would take {total} bytes as JSON; a hook's tools may take at most \
         {} in all (unregister some first)",
        shown(MAX_HOOK_TOOL_BYTES)
    )]
    HookTools { hook: String, total: usize },
    #[error(
        "{what} of {size} bytes refused: a session entry from a hook may be at most {}",
        shown(MAX_ENTRY_BYTES)
    )]
    Entry { what: &'static str, size: usize },
    #[error(
        "{what} of {size} bytes refused: hook {hook} has written {used} bytes of session \
         entries since the session was opened, and a hook's entries may take at most {} in all",
        shown(MAX_HOOK_ENTRY_BYTES)
    )]
    HookEntries {
        what: &'static str,
        hook: String,
        size: usize,
        used: usize,
    },
}

impl TooLarge {
    /// The host-call error code of every size refusal.
    pub const CODE: &'static str = "too_large";
}

/// Counts what is written to it.
struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 = self.0.saturating_add(buf.len());
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The length of `value` as compact JSON, without building the text. A value that cannot be
/// serialised (which no JSON value is) counts as too large for anything.
pub fn json_size<T: Serialize + ?Sized>(value: &T) -> usize {
    let mut c = Counter(0);
    match serde_json::to_writer(&mut c, value) {
        Ok(()) => c.0,
        Err(_) => usize::MAX,
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The sizes of the tools each hook registered with `tools.register`.
#[derive(Debug, Default)]
pub struct ToolLedger {
    sizes: Mutex<HashMap<String, HashMap<String, usize>>>,
}

impl ToolLedger {
    /// Admits `added` (name and size of each tool) for `hook`, whose tools will be those of
    /// `register` (`registered` bytes), its earlier tools named in `kept`, and `added`; on
    /// success they are what the ledger knows of the hook from now on. An earlier tool the
    /// ledger does not know counts as nothing (it cannot be larger than what was admitted).
    pub fn admit(
        &self,
        hook: &str,
        registered: usize,
        kept: &[String],
        added: &[(String, usize)],
    ) -> Result<(), TooLarge> {
        let mut all = lock(&self.sizes);
        let before = all.get(hook);
        let mut next: HashMap<String, usize> = kept
            .iter()
            .filter_map(|n| Some((n.clone(), *before?.get(n)?)))
            .collect();
        next.extend(added.iter().cloned());
        let total = next
            .values()
            .fold(registered, |sum, size| sum.saturating_add(*size));
        if total > MAX_HOOK_TOOL_BYTES {
            return Err(TooLarge::HookTools {
                hook: hook.to_string(),
                total,
            });
        }
        all.insert(hook.to_string(), next);
        Ok(())
    }
}

/// Checks one tool definition of `size` bytes. The refusal shows at most 64 characters of the
/// name: the name may be what made it large.
pub fn check_tool(name: &str, size: usize) -> Result<(), TooLarge> {
    if size > MAX_TOOL_BYTES {
        return Err(TooLarge::Tool {
            name: name.chars().take(64).collect(),
            size,
        });
    }
    Ok(())
}

/// Checks a hook's `register` tools together.
pub fn check_registered(hook: &str, total: usize) -> Result<(), TooLarge> {
    if total > MAX_HOOK_TOOL_BYTES {
        return Err(TooLarge::HookTools {
            hook: hook.to_string(),
            total,
        });
    }
    Ok(())
}

/// The bytes of session entries each hook has written in this generation.
#[derive(Debug, Default)]
pub struct EntryLedger {
    used: Mutex<HashMap<String, usize>>,
}

impl EntryLedger {
    /// Reserves `size` bytes for one entry `what` of `hook`; [`refund`](Self::refund) them if
    /// the entry is not written after all.
    pub fn charge(&self, hook: &str, what: &'static str, size: usize) -> Result<(), TooLarge> {
        if size > MAX_ENTRY_BYTES {
            return Err(TooLarge::Entry { what, size });
        }
        let mut used = lock(&self.used);
        let so_far = used.get(hook).copied().unwrap_or(0);
        if so_far.saturating_add(size) > MAX_HOOK_ENTRY_BYTES {
            return Err(TooLarge::HookEntries {
                what,
                hook: hook.to_string(),
                size,
                used: so_far,
            });
        }
        used.insert(hook.to_string(), so_far + size);
        Ok(())
    }

    pub fn refund(&self, hook: &str, size: usize) {
        if let Some(u) = lock(&self.used).get_mut(hook) {
            *u = u.saturating_sub(size);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_size_is_the_compact_length() {
        let v = json!({"a": [1, "x\"y"], "b": null});
        assert_eq!(json_size(&v), v.to_string().len());
    }

    #[test]
    fn a_hooks_tools_are_bounded_one_by_one_and_in_total() {
        assert!(check_tool("t", MAX_TOOL_BYTES).is_ok());
        let e = check_tool("t", MAX_TOOL_BYTES + 1).unwrap_err();
        assert!(e.to_string().contains("256 KiB"), "{e}");
        let ledger = ToolLedger::default();
        let tool = |i: usize| (format!("t{i}"), 200 * KIB);
        for i in 0..20 {
            let kept: Vec<String> = (0..i).map(|k| format!("t{k}")).collect();
            ledger.admit("h", 0, &kept, &[tool(i)]).unwrap();
        }
        let kept: Vec<String> = (0..20).map(|k| format!("t{k}")).collect();
        let e = ledger.admit("h", 0, &kept, &[tool(20)]).unwrap_err();
        assert!(e.to_string().contains("4 MiB"), "{e}");
        // Dropping tools makes room again; tools of `register` count too.
        ledger.admit("h", 0, &kept[..10], &[tool(20)]).unwrap();
        assert!(ledger
            .admit("h", 3 * MIB, &kept[..10], &[tool(21)])
            .is_err());
        // Another hook has its own budget.
        ledger.admit("other", 0, &[], &[tool(0)]).unwrap();
    }

    #[test]
    fn a_hooks_entries_are_bounded_one_by_one_and_in_total() {
        let ledger = EntryLedger::default();
        let e = ledger
            .charge("h", "session.append_entry", MAX_ENTRY_BYTES + 1)
            .unwrap_err();
        assert!(e.to_string().contains("1 MiB"), "{e}");
        for _ in 0..16 {
            ledger
                .charge("h", "session.append_entry", MAX_ENTRY_BYTES)
                .unwrap();
        }
        let e = ledger.charge("h", "message.send", 1).unwrap_err();
        assert!(e.to_string().contains("16 MiB"), "{e}");
        ledger.refund("h", 10);
        ledger.charge("h", "message.send", 10).unwrap();
        ledger.charge("other", "message.send", 10).unwrap();
    }
}
