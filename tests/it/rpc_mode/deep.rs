//! Field-by-field comparison of our transcript with TS pi 1.6's: the records are aligned by
//! type, id and role (a longest common subsequence, so one missing record shows as one
//! difference rather than shifting every later one), then every field of every aligned pair is
//! compared — values, and the form of numbers (`0`, not `0.0`).
//!
//! Before comparing, TS pi's transcript loses what we differ in on purpose, each for its
//! reason ([`Allowed`]); everything else must be equal.

use serde_json::Value;

use crate::common::ts_pi::Step;
use crate::rpc_reference::outs;

/// What the field-by-field comparison leaves out of TS pi's transcript, each with its reason.
#[derive(Debug, Default)]
pub struct Allowed {
    /// pi 1.6 makes the system prompt a `role: "system"` message of the conversation (its
    /// events, `agent_end.messages`, `get_messages`, the session's entries and tree,
    /// `messageCount`, `totalMessages`). Ours keeps it out of the conversation.
    pub system_message: bool,
    /// Commands (by id) TS pi accepts and we refuse on purpose (checked by `compare`).
    pub refused: Vec<&'static str>,
    /// `estimatedTokensAfter` counts the system prompt and tools, as pi 1.6 does; the prompt
    /// is 1.6's now (`prompt_reference.rs`) but for the docs section's paths, and some tools'
    /// descriptions are still ours (1135 against 1336 estimated tokens).
    pub prompt_text: bool,
    /// pi 1.6's built-in extensions' commands (`/mcp`, `/llama`): `get_commands` lists
    /// commands we do not have; the ones we have must match.
    pub builtin_commands: bool,
}

/// The records compared: all of them, tool progress included (the bash tool's partial
/// results are 1.6's: an empty one at the start, then the output so far at most every 100 ms),
/// with runs of one command's `bash_execution_update` joined into one (how output divides
/// into reads is the pipe's timing; what it says must be the same).
fn records(steps: &[Step]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for v in outs(steps) {
        if v["type"] == "bash_execution_update" {
            if let Some(last) = out
                .last_mut()
                .filter(|l| l["type"] == "bash_execution_update" && l["id"] == v["id"])
            {
                let joined = format!(
                    "{}{}",
                    last["delta"].as_str().unwrap_or(""),
                    v["delta"].as_str().unwrap_or("")
                );
                last["delta"] = Value::from(joined);
                continue;
            }
        }
        out.push(v.clone());
    }
    out
}

fn is_system(v: &Value) -> bool {
    v.get("role").and_then(Value::as_str) == Some("system")
        || v.pointer("/message/role").and_then(Value::as_str) == Some("system")
}

/// Removes system messages from every list and tree in `v`.
fn drop_system(v: &mut Value) {
    match v {
        Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for mut item in items.drain(..) {
                // A tree node of a system entry gives way to its children.
                if item.pointer("/entry/message/role").and_then(Value::as_str) == Some("system") {
                    if let Some(Value::Array(children)) = item.get_mut("children").map(Value::take)
                    {
                        for mut c in children {
                            drop_system(&mut c);
                            out.push(c);
                        }
                    }
                    continue;
                }
                if is_system(&item) {
                    continue;
                }
                drop_system(&mut item);
                out.push(item);
            }
            *items = out;
        }
        Value::Object(m) => m.values_mut().for_each(drop_system),
        _ => {}
    }
}

/// A system entry's placeholder number (`<ENTRY-n>`) and its parent's.
type Removed = Vec<(u64, Option<u64>)>;

/// The system entries of the transcript.
fn system_entry_ids(records: &[Value]) -> Removed {
    fn walk(v: &Value, out: &mut Removed) {
        match v {
            Value::Object(m) => {
                if m.get("type").and_then(Value::as_str) == Some("message") && is_system(v) {
                    let number = |k: &str| m.get(k).and_then(Value::as_str).and_then(entry_number);
                    if let Some(n) = number("id") {
                        if !out.iter().any(|(r, _)| *r == n) {
                            out.push((n, number("parentId")));
                        }
                    }
                }
                m.values().for_each(|x| walk(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    records.iter().for_each(|r| walk(r, &mut out));
    out
}

fn entry_number(s: &str) -> Option<u64> {
    s.strip_prefix("<ENTRY-")?.strip_suffix('>')?.parse().ok()
}

/// Numbers entry placeholders as they would be without the system entries; a reference to
/// a system entry (its child's `parentId`) becomes one to that entry's parent.
fn renumber(v: &mut Value, removed: &Removed) {
    match v {
        Value::String(s) => {
            if let Some(mut n) = entry_number(s) {
                while let Some((_, parent)) = removed.iter().find(|(r, _)| *r == n) {
                    match parent {
                        Some(p) => n = *p,
                        None => {
                            *v = Value::Null;
                            return;
                        }
                    }
                }
                let before = removed.iter().filter(|(r, _)| *r < n).count() as u64;
                *s = format!("<ENTRY-{}>", n - before);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| renumber(x, removed)),
        Value::Object(m) => m.values_mut().for_each(|x| renumber(x, removed)),
        _ => {}
    }
}

/// TS pi's records without what `allowed` leaves out.
fn theirs_comparable(reference: &[Step], allowed: &Allowed) -> Vec<Value> {
    let mut out = Vec::new();
    let all = records(reference);
    let removed = if allowed.system_message {
        system_entry_ids(&all)
    } else {
        Vec::new()
    };
    let mut system_messages_stored = 0u64;
    for mut r in all {
        if allowed.refused.iter().any(|id| r["id"] == *id) {
            continue;
        }
        if allowed.system_message {
            if is_system(&r) {
                if r["type"] == "message_end" {
                    system_messages_stored += 1;
                }
                continue;
            }
            drop_system(&mut r);
            renumber(&mut r, &removed);
            // One system message opens a context that has any message.
            if let Some(n) = r.pointer_mut("/data/messageCount") {
                if let Some(c) = n.as_u64().filter(|c| *c > 0) {
                    *n = Value::from(c - 1);
                }
            }
            // Each run stored its system message in the session.
            if let Some(n) = r.pointer_mut("/data/totalMessages") {
                if let Some(c) = n.as_u64() {
                    *n = Value::from(c.saturating_sub(system_messages_stored));
                }
            }
        }
        if allowed.prompt_text {
            for at in ["/data/estimatedTokensAfter", "/result/estimatedTokensAfter"] {
                if let Some(n) = r.pointer_mut(at) {
                    *n = Value::from("<depends on the prompt text>");
                }
            }
        }
        if allowed.builtin_commands {
            if let Some(Value::Array(cmds)) = r.pointer_mut("/data/commands") {
                cmds.retain(|c| c.pointer("/sourceInfo/source") != Some(&Value::from("builtin")));
            }
        }
        out.push(r);
    }
    out
}

/// Our records, with what `allowed` leaves out of TS pi's left out alike.
fn ours_comparable(ours: &[Step], allowed: &Allowed) -> Vec<Value> {
    let mut out = records(ours);
    if allowed.prompt_text {
        for r in &mut out {
            for at in ["/data/estimatedTokensAfter", "/result/estimatedTokensAfter"] {
                if let Some(n) = r.pointer_mut(at) {
                    *n = Value::from("<depends on the prompt text>");
                }
            }
        }
    }
    out
}

fn diff(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, va) in x {
                match y.get(k) {
                    Some(vb) => diff(&format!("{path}.{k}"), va, vb, out),
                    None => out.push(format!("{path}.{k}: only TS pi ({})", short(va))),
                }
            }
            for (k, vb) in y {
                if !x.contains_key(k) {
                    out.push(format!("{path}.{k}: only ours ({})", short(vb)));
                }
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                out.push(format!("{path}: {} items vs {} ours", x.len(), y.len()));
            }
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                diff(&format!("{path}[{i}]"), va, vb, out);
            }
        }
        // `Value`'s equality tells 0 from 0.0: each prints as it was written.
        _ if a == b => {}
        (Value::Number(x), Value::Number(y)) if x.as_f64() == y.as_f64() => {
            out.push(format!("{path}: number form {x} vs ours {y}"))
        }
        _ => out.push(format!("{path}: TS {} vs ours {}", short(a), short(b))),
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(120) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}

fn token(v: &Value) -> String {
    format!("{} {} {}", v["type"], v["id"], v["message"]["role"])
}

/// Every difference between TS pi's records (less what `allowed` leaves out) and ours (less
/// our own `hook_*` events), one line each.
pub fn deep_differences(reference: &[Step], ours: &[Step], allowed: &Allowed) -> Vec<String> {
    let theirs = theirs_comparable(reference, allowed);
    let mine: Vec<Value> = ours_comparable(ours, allowed)
        .into_iter()
        .filter(|v| !v["type"].as_str().unwrap_or("").starts_with("hook_"))
        .filter(|v| !allowed.refused.iter().any(|id| v["id"] == *id))
        .collect();
    let (n, m) = (theirs.len(), mine.len());
    let mut lcs = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if token(&theirs[i]) == token(&mine[j]) {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && token(&theirs[i]) == token(&mine[j]) {
            let t = &theirs[i];
            let what = format!(
                "#{i} {} {}",
                t["type"].as_str().unwrap_or("?"),
                t["id"].as_str().unwrap_or("")
            );
            diff(&what, t, &mine[j], &mut out);
            i += 1;
            j += 1;
        } else if j >= m || (i < n && lcs[i + 1][j] >= lcs[i][j + 1]) {
            out.push(format!("#{i} only TS: {}", short(&theirs[i])));
            i += 1;
        } else {
            out.push(format!("ours #{j} only ours: {}", short(&mine[j])));
            j += 1;
        }
    }
    out
}
