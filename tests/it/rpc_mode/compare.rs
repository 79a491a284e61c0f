//! Comparing our transcript of a scenario with TypeScript pi 1.6's recorded one.
//!
//! Responses are matched by id: the same `command`, the same `success`, the same data keys
//! (the same JSON kind when the data is not an object), and for failures with a command the
//! same error text. The order of records is compared as a sequence of tokens — each event's
//! type, `response <id>` for a response — with runs of `message_update` folded into one
//! (chunking is the model's, not the protocol's) and `tool_execution_update` left out (a
//! tool's progress comes when its output does, at no fixed point of the conversation).
//!
//! Two differences hold everywhere and are applied here, by name: TS pi 1.6 makes the system
//! prompt a message of the context (a `system` message_start/message_end pair opens every
//! run, and `get_messages`/`messageCount` count it), ours keeps it out of the messages; and
//! ours adds `hook_*` events, which TS pi does not have.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::common::ts_pi::Step;
use crate::rpc_reference::{keys, outs};

/// What one scenario is allowed to differ in, each named by the test that uses it.
#[derive(Debug, Default)]
pub struct Differences {
    /// Commands (by id) TS pi accepts and we refuse on purpose.
    pub refused: Vec<&'static str>,
    /// Failures (by id) whose error text is ours, not TS pi's.
    pub error_text: Vec<&'static str>,
    /// Failures without a `command` (JSON that is not a typed command): compared by shape
    /// only; TS pi says "Unknown command: undefined", ours names what is wrong.
    pub untyped_errors_differ: bool,
    /// Responses without an id that only ours sends (at the end of the transcript).
    pub ours_only_responses: usize,
    /// Our exit code, when it is not TS pi's.
    pub exit: Option<Option<i32>>,
    /// Commands (by id) the fixture has but the scenario sends only when recording.
    pub not_sent: Vec<&'static str>,
}

/// The records' order as tokens (see the module comment).
fn tokens(steps: &[Step], ours: bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for v in outs(steps) {
        let ty = v["type"].as_str().unwrap_or("?");
        // A tool's progress comes when its output does, not at a point of the protocol.
        let progress = ty == "tool_execution_update";
        if progress || (ours && ty.starts_with("hook_")) {
            continue;
        }
        let token = match ty {
            "response" => format!("response {}", v["id"]),
            t if t.ends_with("_update") && t != "queue_update" => format!("{t}*"),
            t => t.to_string(),
        };
        if out.last() == Some(&token) && token.ends_with('*') {
            continue;
        }
        out.push(token);
    }
    out
}

fn data_shape(v: &Value) -> String {
    match v.get("data") {
        None => "no data".into(),
        Some(Value::Object(_)) => format!("keys {:?}", keys(&v["data"])),
        Some(Value::Null) => "null".into(),
        Some(other) => format!("a {}", kind(other)),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Array(_) => "list",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "boolean",
        Value::Object(_) => "object",
        Value::Null => "null",
    }
}

fn responses(steps: &[Step]) -> Vec<&Value> {
    outs(steps).filter(|v| v["type"] == "response").collect()
}

/// Panics with every difference found, naming the scenario.
#[track_caller]
pub fn compare(name: &str, reference: &[Step], ours: &[Step], allowed: &Differences) {
    let mut problems: Vec<String> = Vec::new();
    let unsent = |v: &Value| allowed.not_sent.iter().any(|id| v["id"] == *id);
    let theirs: Vec<&Value> = responses(reference)
        .into_iter()
        .filter(|v| !unsent(v))
        .collect();
    let mine = responses(ours);
    let (with_id, without_id): (Vec<&Value>, Vec<&Value>) =
        theirs.iter().partition(|v| v.get("id").is_some());
    for t in &with_id {
        let id = &t["id"];
        let found: Vec<&&Value> = mine.iter().filter(|m| &m["id"] == id).collect();
        let [m] = found.as_slice() else {
            problems.push(format!("{id}: {} responses from ours", found.len()));
            continue;
        };
        compare_one(&format!("{id}"), t, m, allowed, &mut problems);
    }
    let mine_without: Vec<&&Value> = mine.iter().filter(|v| v.get("id").is_none()).collect();
    if mine_without.len() != without_id.len() + allowed.ours_only_responses {
        problems.push(format!(
            "{} responses without an id from ours, {} from TS pi (+{} allowed)",
            mine_without.len(),
            without_id.len(),
            allowed.ours_only_responses
        ));
    }
    for (i, (t, m)) in without_id.iter().zip(&mine_without).enumerate() {
        compare_one(&format!("id-less #{i}"), t, m, allowed, &mut problems);
    }
    let ids: BTreeSet<String> = mine.iter().map(|v| v["id"].to_string()).collect();
    for t in &theirs {
        if !ids.contains(&t["id"].to_string()) && t.get("id").is_some() {
            problems.push(format!("{}: no response from ours", t["id"]));
        }
    }

    let mut our_order = tokens(ours, true);
    for _ in 0..allowed.ours_only_responses {
        match our_order.iter().rposition(|t| t == "response null") {
            Some(i) => {
                our_order.remove(i);
            }
            None => problems.push("an id-less response of ours is missing".into()),
        }
    }
    let unsent_tokens: Vec<String> = allowed
        .not_sent
        .iter()
        .map(|id| format!("response {}", Value::from(*id)))
        .collect();
    let their_order: Vec<String> = tokens(reference, false)
        .into_iter()
        .filter(|t| !unsent_tokens.contains(t))
        .collect();
    if our_order != their_order {
        let at = our_order
            .iter()
            .zip(&their_order)
            .position(|(a, b)| a != b)
            .unwrap_or(our_order.len().min(their_order.len()));
        let from = at.saturating_sub(3);
        problems.push(format!(
            "record order differs at {at}:\n  ours:   {:?}\n  TS pi:  {:?}",
            &our_order[from..our_order.len().min(at + 6)],
            &their_order[from..their_order.len().min(at + 6)]
        ));
    }

    let exit = |s: &[Step]| {
        s.iter().rev().find_map(|st| match st {
            Step::Exit(c) => Some(*c),
            _ => None,
        })
    };
    let want_exit = allowed.exit.or_else(|| exit(reference));
    if exit(ours) != want_exit {
        problems.push(format!("exit {:?}, expected {:?}", exit(ours), want_exit));
    }
    assert!(
        problems.is_empty(),
        "{name}: ours differs from TS pi 1.6:\n{}",
        problems.join("\n")
    );
}

fn compare_one(
    what: &str,
    theirs: &Value,
    mine: &Value,
    allowed: &Differences,
    problems: &mut Vec<String>,
) {
    let id = theirs["id"].as_str().unwrap_or("");
    if allowed.refused.contains(&id) {
        if mine["success"] != false {
            problems.push(format!("{what}: ours should refuse it: {mine}"));
        }
        return;
    }
    for key in ["command", "success"] {
        if theirs.get(key) != mine.get(key) {
            problems.push(format!(
                "{what}: {key} {:?} from ours, {:?} from TS pi",
                mine.get(key),
                theirs.get(key)
            ));
        }
    }
    if theirs["success"] == true {
        let (t, m) = (data_shape(theirs), data_shape(mine));
        if t != m {
            problems.push(format!("{what}: data {m} from ours, {t} from TS pi"));
        }
        return;
    }
    let untyped = theirs.get("command").is_none();
    let parse = theirs["command"] == "parse";
    let text_may_differ =
        parse || (untyped && allowed.untyped_errors_differ) || allowed.error_text.contains(&id);
    if !text_may_differ && theirs["error"] != mine["error"] {
        problems.push(format!(
            "{what}: error {} from ours, {} from TS pi",
            mine["error"], theirs["error"]
        ));
    }
}
