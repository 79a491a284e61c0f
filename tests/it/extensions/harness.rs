//! Running one of pi 1.6.0's example extensions, unchanged, in TypeScript pi 1.6.0 (in process)
//! and in ours (through the extension bridge), on the same scripted model, in RPC mode, and
//! reducing each run to what a user of it observes: the extension's UI requests (dialogs,
//! notifications, status lines, widgets, titles), every tool call's result, the custom messages
//! it adds, and what it leaves in the session file. A test compares the two reductions step by
//! step.
//!
//! Dialogs are answered by the test's [`Answers`]; each step ends once the program has answered
//! the prompt, finished any run it started and then said nothing for a moment (notifications
//! are fire-and-forget in both programs, so they may trail the answer).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Map, Value};

use crate::common::ts_pi::{RpcProcess, TsPi};
use crate::common::{blocks_text, path_str, MockModel, TestAgent, Turn};

/// How long a program may stay silent before a step counts as finished.
const QUIET: Duration = Duration::from_millis(600);

/// pi 1.6.0's example extensions, as pinned in tests/ts-pi.
pub fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/ts-pi/node_modules/@earendil-works/pi-coding-agent/examples/extensions")
        .join(name)
}

/// Whether the extension bridge's dependencies are installed (`npm ci --prefix bridge`, which
/// `.ci/run` does). Without them a test is skipped with a note — or fails, under
/// `PI_TS_PI_REQUIRED=1`, as CI must not silently lose the coverage.
pub fn bridge_ready() -> bool {
    let jiti = Path::new(env!("CARGO_MANIFEST_DIR")).join("bridge/node_modules/jiti/package.json");
    if jiti.is_file() {
        return true;
    }
    let msg = "the extension bridge's dependencies are not installed: run `npm ci --prefix bridge`";
    let required = std::env::var("PI_TS_PI_REQUIRED").is_ok_and(|v| v == "1");
    assert!(!required, "PI_TS_PI_REQUIRED=1 but {msg}");
    eprintln!("skipped: {msg}");
    false
}

/// Which program runs the extension.
#[derive(Clone, Copy)]
pub enum Who<'a> {
    Ts(&'a TsPi),
    Ours,
}

impl Who<'_> {
    fn name(&self) -> &'static str {
        match self {
            Who::Ts(_) => "pi 1.6.0",
            Who::Ours => "ours",
        }
    }
}

/// The answer to a dialog request (`extension_ui_request` with a `select`, `confirm`, `input`
/// or `editor` method): the response's fields besides `type` and `id`.
pub type Answers = fn(&Value) -> Value;

/// Dismisses every dialog.
pub fn dismiss(_: &Value) -> Value {
    json!({"cancelled": true})
}

/// One scripted step: a prompt (an extension command when it starts with `/`), or an RPC
/// command (`command`, e.g. `{"type": "new_session"}`), answered as `answers` says.
pub struct Step<'a> {
    pub prompt: &'a str,
    pub command: Option<Value>,
    pub answers: Answers,
}

pub fn step(prompt: &str) -> Step<'_> {
    answered(prompt, dismiss)
}

pub fn answered(prompt: &str, answers: Answers) -> Step<'_> {
    Step {
        prompt,
        command: None,
        answers,
    }
}

/// An RPC command as a step (its `id` is the harness's).
pub fn command(command: Value, answers: Answers) -> Step<'static> {
    Step {
        prompt: "(command)",
        command: Some(command),
        answers,
    }
}

/// What one run observed: per step, its observations in the order they came; and the
/// session file's extension entries.
#[derive(Debug, Clone, PartialEq)]
pub struct Observed {
    pub steps: Vec<Vec<String>>,
    pub entries: Vec<String>,
    /// Request bodies the model received.
    pub bodies: Vec<Value>,
}

/// `text` without SGR escape sequences (`ESC [ … m`). pi 1.6 colours what an extension styles
/// with `ctx.ui.theme` and sends the escapes to the RPC client; the bridge cannot reach pi's
/// theme, so its text comes unstyled (a named loss), and the words are what is compared.
fn unstyled(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// A dialog or setter request, without its per-run id.
fn ui_request(v: &Value) -> String {
    let mut fields: Map<String, Value> = v.as_object().cloned().unwrap_or_default();
    fields.remove("type");
    fields.remove("id");
    let method = fields
        .remove("method")
        .and_then(|m| m.as_str().map(String::from))
        .unwrap_or_default();
    for v in fields.values_mut() {
        if let Value::String(text) = v {
            *text = unstyled(text);
        }
    }
    format!("ui {method} {}", Value::Object(fields))
}

/// The one line that says what a record shows the user, if it shows anything.
fn observation(v: &Value) -> Option<String> {
    match v["type"].as_str()? {
        "extension_ui_request" => Some(ui_request(v)),
        "tool_execution_end" if v.get("parentToolCallId").is_none() => Some(format!(
            "tool {} error={} {}",
            v["toolName"].as_str().unwrap_or_default(),
            v["isError"].as_bool().unwrap_or(false),
            blocks_text(&v["result"]["content"]),
        )),
        "message_end" if v["message"]["role"] == "custom" => Some(format!(
            "message {} display={} {}",
            v["message"]["customType"].as_str().unwrap_or_default(),
            v["message"]["display"],
            blocks_text(&v["message"]["content"]),
        )),
        "message_end" if v["message"]["role"] == "user" => {
            Some(format!("user {}", blocks_text(&v["message"]["content"])))
        }
        "message_end" if v["message"]["role"] == "assistant" => {
            let text = blocks_text(&v["message"]["content"]);
            (!text.is_empty()).then(|| format!("assistant {text}"))
        }
        _ => None,
    }
}

fn is_dialog(v: &Value) -> bool {
    v["type"] == "extension_ui_request"
        && matches!(
            v["method"].as_str(),
            Some("select" | "confirm" | "input" | "editor")
        )
}

/// Sends one prompt and gathers what it shows, answering dialogs as `step` says.
async fn run_step(rpc: &mut RpcProcess, n: usize, step: &Step<'_>) -> Vec<String> {
    let id = format!("step-{n}");
    let mut line = step
        .command
        .clone()
        .unwrap_or_else(|| json!({"type": "prompt", "message": step.prompt}));
    line["id"] = json!(id);
    rpc.send(line).await;
    let mut out = Vec::new();
    let (mut answered, mut running) = (false, false);
    loop {
        let limit = if answered && !running {
            QUIET
        } else {
            crate::common::rpc::RPC_TIMEOUT
        };
        let Some(v) = rpc.next_within(limit).await else {
            assert!(
                answered && !running,
                "step {n} ({}) never finished:\n{}",
                step.prompt,
                rpc.tail()
            );
            return channels(out);
        };
        match v["type"].as_str().unwrap_or_default() {
            "response" if v["id"] == id.as_str() => {
                answered = true;
                if v["success"] != true {
                    out.push(format!("refused {}", v["error"]));
                } else if step.command.is_some() {
                    out.push(format!(
                        "{} {}",
                        v["command"].as_str().unwrap_or_default(),
                        v["data"]["cancelled"]
                    ));
                }
            }
            "agent_start" => running = true,
            "agent_end" => running = false,
            _ => {}
        }
        if is_dialog(&v) {
            let mut answer = (step.answers)(&v);
            answer["type"] = json!("extension_ui_response");
            answer["id"] = v["id"].clone();
            rpc.send(answer).await;
        }
        out.extend(observation(&v));
    }
}

/// A step's observations as two channels, each in its own order: what the extension showed
/// (UI requests), then what happened in the conversation. A setter is fire-and-forget in both
/// programs, so where it falls among the conversation's events is a matter of timing; within
/// each channel the order is what a user sees.
fn channels(all: Vec<String>) -> Vec<String> {
    let (ui, rest): (Vec<String>, Vec<String>) =
        all.into_iter().partition(|o| o.starts_with("ui "));
    ui.into_iter().chain(rest).collect()
}

/// The extension's entries in the session file: custom entries, names, labels.
fn session_entries(agent: &TestAgent) -> Vec<String> {
    let Some(file) = crate::sessions::session_files(agent).into_iter().next() else {
        return Vec::new();
    };
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|e| match e["type"].as_str()? {
            "custom" => Some(format!(
                "custom {} {}",
                e["customType"].as_str()?,
                e["data"]
            )),
            "session_info" => Some(format!("name {}", e["name"])),
            "label" => Some(format!("label {}", e["label"])),
            _ => None,
        })
        .collect()
}

/// What a test sets up before a run and reads after it (the project's files, say).
pub struct World<'a> {
    pub prepare: &'a dyn Fn(&TestAgent),
    pub inspect: &'a dyn Fn(&TestAgent) -> Vec<String>,
}

/// Runs `extension` in `who` through `steps` against a model playing `turns`; `prepare` sets
/// up the project first.
pub async fn observe(
    who: Who<'_>,
    extension: &Path,
    turns: Vec<Turn>,
    steps: &[Step<'_>],
    world: &World<'_>,
) -> Observed {
    let prepare = world.prepare;
    let mock = MockModel::start(turns).await;
    let agent = TestAgent::with_mock(&mock);
    prepare(&agent);
    let ext = path_str(extension);
    let args = [
        "--provider",
        "mock",
        "--model",
        "mock-model",
        "-e",
        ext.as_str(),
    ];
    let mut rpc = match who {
        Who::Ts(ts) => ts.rpc(&agent, &args),
        Who::Ours => agent.rpc(&args),
    };
    let mut observed = Vec::new();
    for (n, s) in steps.iter().enumerate() {
        observed.push(run_step(&mut rpc, n, s).await);
    }
    rpc.close().await;
    // Each run has its own temporary directories; a user sees "the project", not the path.
    let places = [
        (path_str(&agent.cwd), "<project>"),
        (path_str(&agent.agent_dir), "<agent>"),
        (path_str(&agent.home), "<home>"),
        (path_str(&agent.tmp), "<tmp>"),
    ];
    let placed = |o: &String| {
        places
            .iter()
            .fold(o.clone(), |o, (p, name)| o.replace(p.as_str(), name))
    };
    let observed: Vec<Vec<String>> = observed
        .iter()
        .map(|s| s.iter().map(placed).collect())
        .collect();
    let who_name = who.name();
    let bodies = mock.bodies();
    let mut entries = session_entries(&agent);
    entries.extend((world.inspect)(&agent));
    eprintln!("{who_name}: {observed:#?}\n{entries:#?}");
    Observed {
        steps: observed,
        entries,
        bodies,
    }
}

/// Runs `extension` in pi 1.6.0 and in ours and asserts that a user sees the same; returns
/// ours (for assertions of what that is), or `None` when pi 1.6.0 is not installed.
pub async fn same_in_both(
    extension: &str,
    turns: Vec<Turn>,
    steps: &[Step<'_>],
    prepare: &dyn Fn(&TestAgent),
) -> Option<Observed> {
    let world = World {
        prepare,
        inspect: &|_| Vec::new(),
    };
    same_in_both_world(extension, turns, steps, &world).await
}

/// [`same_in_both`] with what `world.inspect` reads after each run compared too.
pub async fn same_in_both_world(
    extension: &str,
    turns: Vec<Turn>,
    steps: &[Step<'_>],
    world: &World<'_>,
) -> Option<Observed> {
    if !bridge_ready() {
        return None;
    }
    let ts = TsPi::find_v1_6()?;
    let path = example(extension);
    let theirs = observe(Who::Ts(&ts), &path, turns.clone(), steps, world).await;
    let ours = observe(Who::Ours, &path, turns, steps, world).await;
    for (n, (a, b)) in ours.steps.iter().zip(&theirs.steps).enumerate() {
        assert_eq!(
            a, b,
            "{extension}: step {n} ({}) differs\n  ours: {a:#?}\n  pi 1.6.0: {b:#?}",
            steps[n].prompt
        );
    }
    assert_eq!(
        ours.entries, theirs.entries,
        "{extension}: session entries differ"
    );
    Some(ours)
}
