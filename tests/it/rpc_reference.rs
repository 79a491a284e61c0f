//! What TypeScript pi 1.6.0 (`@earendil-works/pi-coding-agent`, pinned in `tests/ts-pi/`) says
//! in RPC mode, pinned from the real program against our mock model: each command's envelope
//! and data keys, the event order of a scripted run, prompts while streaming, framing edge
//! cases and the extension UI sub-protocol. Our `--mode rpc` must give the same answers.
//!
//! Each scenario (`rpc_reference/scenarios.rs`) is recorded live when the package is installed,
//! and its facts are checked on that live transcript *and* on the recorded fixture in
//! `fixtures/rpc/ts-pi-1.6/`; `PI_RPC_RECORD=1` rewrites the fixtures
//! (`tests/ts-pi/record-rpc-fixtures.sh`). Every fixture line must parse into our protocol types
//! (`pi::modes::rpc::protocol`) and serialise back to the same JSON, so the types cannot drift
//! from the real program. Without the package the live half is skipped (and fails on CI,
//! `PI_TS_PI_REQUIRED=1`); the fixture half always runs.
mod facts;
pub mod normalise;
pub mod scenarios;

use std::collections::BTreeSet;

use serde_json::Value;

use pi::modes::rpc::protocol::{decode_line, DecodeError, Incoming, Outgoing};

use crate::common::ts_pi::{Step, TsPi};
use normalise::{fixture_path, read_fixture, write_fixture};

/// The live transcript (normalised; recorded as the fixture under `PI_RPC_RECORD=1`) when TS pi
/// 1.6 is installed, and the fixture: the transcripts a scenario's facts are checked on.
async fn transcripts<F, Fut>(name: &str, record: F) -> Vec<(String, Vec<Step>)>
where
    F: FnOnce(TsPi) -> Fut,
    Fut: std::future::Future<Output = Vec<Step>>,
{
    let mut out = Vec::new();
    if let Some(ts) = TsPi::find_v1_6() {
        let live = record(ts).await;
        if std::env::var("PI_RPC_RECORD").is_ok_and(|v| v == "1") {
            write_fixture(name, &live);
        }
        out.push((format!("live TS pi 1.6 ({name})"), live));
    }
    let path = fixture_path(name);
    out.push((path.display().to_string(), read_fixture(&path)));
    out
}

pub(crate) fn outs(steps: &[Step]) -> impl Iterator<Item = &Value> {
    steps.iter().filter_map(|s| match s {
        Step::Out(v) => Some(v),
        _ => None,
    })
}

/// The one response to the command with this id; panics if there is none or more than one.
#[track_caller]
pub(crate) fn response<'a>(steps: &'a [Step], id: &str) -> &'a Value {
    let found: Vec<&Value> = outs(steps)
        .filter(|v| v["type"] == "response" && v["id"] == id)
        .collect();
    assert_eq!(found.len(), 1, "responses with id {id:?}: {found:?}");
    found[0]
}

pub(crate) fn keys(v: &Value) -> BTreeSet<&str> {
    v.as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

#[track_caller]
pub(crate) fn assert_keys(v: &Value, want: &[&str], what: &str) {
    let want: BTreeSet<&str> = want.iter().copied().collect();
    assert_eq!(keys(v), want, "keys of {what}: {v:.300}");
}

/// A success response's data, after checking the envelope's keys.
#[track_caller]
pub(crate) fn ok_data<'a>(steps: &'a [Step], id: &str, command: &str) -> &'a Value {
    let r = response(steps, id);
    assert_eq!(r["command"], command, "{r}");
    assert_eq!(r["success"], true, "{r}");
    assert_keys(r, &["id", "type", "command", "success", "data"], command);
    &r["data"]
}

/// A success response without data.
#[track_caller]
pub(crate) fn ok_empty(steps: &[Step], id: &str, command: &str) {
    let r = response(steps, id);
    assert_eq!(r["command"], command, "{r}");
    assert_keys(r, &["id", "type", "command", "success"], command);
    assert_eq!(r["success"], true);
}

/// A failure response's error text.
#[track_caller]
pub(crate) fn err_text<'a>(steps: &'a [Step], id: &str, command: &str) -> &'a str {
    let r = response(steps, id);
    assert_eq!(r["command"], command, "{r}");
    assert_keys(r, &["id", "type", "command", "success", "error"], command);
    assert_eq!(r["success"], false);
    r["error"].as_str().unwrap_or_default()
}

/// Event types from the first record after `from` up to and including the first `until`, with
/// runs of `message_update` / `tool_execution_update` folded into one `name*`.
pub(crate) fn event_run(steps: &[Step], from: impl Fn(&Value) -> bool, until: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut on = false;
    for v in outs(steps) {
        if !on {
            on = from(v);
            continue;
        }
        let ty = v["type"].as_str().unwrap_or("?").to_string();
        let folded = if ty.ends_with("_update") && ty != "queue_update" {
            format!("{ty}*")
        } else {
            ty.clone()
        };
        if out.last() != Some(&folded) || !folded.ends_with('*') {
            out.push(folded);
        }
        if ty == until {
            break;
        }
    }
    out
}

/// JSON equality with numbers compared by value (`0` and `0.0` are the same number).
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_json(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, p)| y.get(k).is_some_and(|q| same_json(p, q)))
        }
        _ => a == b,
    }
}

/// Commands TS pi accepts but we refuse on purpose (it does not validate these values).
const DELIBERATELY_INVALID: [&str; 2] = ["set-level-bogus", "steering-bogus"];

/// Every record of a transcript fits our protocol types and serialises back unchanged; every
/// command we sent decodes as our RPC mode would decode it.
#[track_caller]
pub(crate) fn assert_fits_protocol_types(what: &str, steps: &[Step]) {
    for (i, step) in steps.iter().enumerate() {
        match step {
            Step::Out(v) => {
                let parsed: Outgoing = serde_json::from_value(v.clone())
                    .unwrap_or_else(|e| panic!("{what} step {}: {e}\n{v:.400}", i + 1));
                let back = serde_json::to_value(&parsed).expect("serialisable");
                assert!(
                    same_json(&back, v),
                    "{what} step {}: does not round-trip\n  wire: {v:.600}\n  ours: {back:.600}",
                    i + 1
                );
            }
            Step::In(v) => {
                let line = serde_json::to_vec(v).expect("serialisable");
                let id = v["id"].as_str().unwrap_or_default();
                match decode_line(&line) {
                    Ok(Incoming::Command(_) | Incoming::UiResponse(_)) => {
                        assert!(!DELIBERATELY_INVALID.contains(&id), "{what}: {v} decoded")
                    }
                    Err(DecodeError::Unknown { .. }) if v["type"] == "frobnicate" => {}
                    Err(DecodeError::Invalid { .. }) if DELIBERATELY_INVALID.contains(&id) => {}
                    Err(e) => panic!("{what} step {}: {e}\n{v}", i + 1),
                }
            }
            Step::InRaw(_) | Step::Exit(_) => {}
        }
    }
}

#[test]
fn every_fixture_line_fits_the_protocol_types() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/rpc/ts-pi-1.6");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 8,
        "expected the recorded scenarios in {}: {files:?}",
        dir.display()
    );
    for f in files {
        assert_fits_protocol_types(&f.display().to_string(), &read_fixture(&f));
    }
}
