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
    /// Commands (by id) TS pi accepts and we refuse on purpose (checked by `compare`).
    pub refused: Vec<&'static str>,
    /// The system messages' `docs` section names where each program's documentation is,
    /// so it and `estimatedTokensAfter` (which counts the prompt, as pi 1.6 does) differ.
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

/// Replaces the `docs` section of every system message in `v`: it names where each
/// program's own documentation is (`prompt_reference.rs` checks its wording).
fn blank_docs(v: &mut Value) {
    match v {
        Value::Object(m) => {
            if let Some(docs) = m
                .get_mut("sections")
                .and_then(Value::as_object_mut)
                .and_then(|s| s.get_mut("docs"))
            {
                if docs.is_string() {
                    *docs = Value::from("<where the docs are>");
                }
            }
            m.values_mut().for_each(blank_docs);
        }
        Value::Array(a) => a.iter_mut().for_each(blank_docs),
        _ => {}
    }
}

/// The placeholders for what depends on the prompt's text, on either side.
fn blank_prompt_text(r: &mut Value) {
    for at in ["/data/estimatedTokensAfter", "/result/estimatedTokensAfter"] {
        if let Some(n) = r.pointer_mut(at) {
            *n = Value::from("<depends on the prompt text>");
        }
    }
    blank_docs(r);
}

/// TS pi's records without what `allowed` leaves out.
fn theirs_comparable(reference: &[Step], allowed: &Allowed) -> Vec<Value> {
    let mut out = Vec::new();
    for mut r in records(reference) {
        if allowed.refused.iter().any(|id| r["id"] == *id) {
            continue;
        }
        if allowed.prompt_text {
            blank_prompt_text(&mut r);
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
        out.iter_mut().for_each(blank_prompt_text);
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
