//! Hooks' `ui.*` calls through the real binary, with a real hook
//! (`fixtures/hooks/it/ui_dialogs.py`). In print and JSON mode dialogs answer their defaults
//! and notifications go to stderr. In `pi --mode rpc` they become `extension_ui_request` lines,
//! answered by this test playing the client with `extension_ui_response` — answered,
//! cancelled, timed out, and stdin closed while a dialog is open (pi exits 0, leaving no
//! process).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::hooks::{assert_no_hook_processes, fixture};
use crate::common::rpc::RpcProcess;
use crate::common::{path_str, wait_until, TestAgent};

/// The `ui-dialogs` hook in the user settings (its `config` plus a record file); returns the
/// record's path.
fn use_ui_hook(agent: &TestAgent, config: Value) -> PathBuf {
    let record = agent.tmp.join("ui-dialogs.jsonl");
    let mut config = config;
    config["record"] = json!(path_str(&record));
    agent.write_settings(&json!({"hooks": [{
        "command": format!("python3 {}", fixture("ui_dialogs.py")),
        "name": "ui-dialogs",
        "config": config,
        "timeout_ms": 3000,
        "start_timeout_ms": 5000,
    }]}));
    record
}

/// `pi --mode rpc` over the faux provider with the `ui-dialogs` hook, and its record's path.
fn start(config: Value) -> (TestAgent, RpcProcess, PathBuf) {
    let agent = TestAgent::new();
    let record = use_ui_hook(&agent, config);
    let rpc = agent.rpc(&agent.faux_args(json!(["ok"])));
    (agent, rpc, record)
}

/// The hook's record, one JSON value per line.
fn recorded(record: &PathBuf) -> Vec<Value> {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The hook's recorded answer to `method` (bounded wait).
fn answer_of(record: &PathBuf, method: &str) -> Value {
    let find = || {
        recorded(record)
            .into_iter()
            .find(|r| r["method"] == method)
            .map(|r| r["answer"].clone())
    };
    assert!(
        wait_until(Duration::from_secs(10), || find().is_some()),
        "the hook never recorded an answer to {method}: {:?}",
        recorded(record)
    );
    find().unwrap_or_default()
}

fn dialog(method: &'static str) -> impl Fn(&Value) -> bool {
    move |v: &Value| v["type"] == "extension_ui_request" && v["method"] == method
}

async fn respond(rpc: &mut RpcProcess, req: &Value, fields: Value) {
    let mut resp = json!({"type": "extension_ui_response", "id": req["id"]});
    if let (Some(r), Some(f)) = (resp.as_object_mut(), fields.as_object()) {
        r.extend(f.clone());
    }
    rpc.send(resp).await;
}

/// Every dialog answered, cancelled or left to its timeout, and every fire-and-forget request
/// in pi 1.6's shape; the hook sees the answers with pi's cancel semantics.
#[tokio::test]
async fn hook_dialogs_round_trip_through_the_rpc_client() {
    let (agent, mut rpc, record) = start(json!({"select_timeout_ms": 30000}));
    rpc.send(json!({"id": "d", "type": "prompt", "message": "/dialogs"}))
        .await;
    let select = rpc.until(dialog("select")).await;
    assert_eq!(select["title"], "Pick one");
    assert_eq!(select["options"], json!(["a", "b"]));
    assert_eq!(select["timeout"], 30000);
    respond(&mut rpc, &select, json!({"value": "b"})).await;
    let confirm = rpc.until(dialog("confirm")).await;
    assert!(confirm.get("timeout").is_none(), "{confirm}");
    respond(&mut rpc, &confirm, json!({"confirmed": true})).await;
    let input = rpc.until(dialog("input")).await;
    assert_eq!(input["placeholder"], "type here");
    respond(&mut rpc, &input, json!({"cancelled": true})).await;
    let editor = rpc.until(dialog("editor")).await;
    assert_eq!(editor["prefill"], "line 1\nline 2");
    respond(&mut rpc, &editor, json!({"value": "edited"})).await;
    let notify = rpc.until(dialog("notify")).await;
    assert_eq!(notify["notifyType"], "warning");
    for method in ["setStatus", "setWidget", "setTitle", "set_editor_text"] {
        rpc.until(dialog(method)).await;
    }
    assert_eq!(answer_of(&record, "ui.select"), json!({"value": "b"}));
    assert_eq!(answer_of(&record, "ui.confirm"), json!({"confirmed": true}));
    assert_eq!(answer_of(&record, "ui.input"), json!({"value": null}));
    assert_eq!(answer_of(&record, "ui.editor"), json!({"value": "edited"}));
    assert_eq!(answer_of(&record, "ui.set_editor_text"), json!({}));
    let hello = recorded(&record)
        .into_iter()
        .find(|r| r.get("hello").is_some())
        .expect("the hook's hello");
    assert_eq!(hello["hello"]["mode"], "rpc");
    assert_eq!(hello["hello"]["capabilities"]["ui"]["editor"], true);
    assert_eq!(rpc.close().await, Some(0));
    assert_no_hook_processes(&agent);
}

/// A dialog nobody answers ends at the hook's timeout; the late answer changes nothing.
#[tokio::test]
async fn a_dialog_the_client_never_answers_ends_at_its_timeout() {
    let (_agent, mut rpc, record) = start(json!({}));
    rpc.send(json!({"id": "t", "type": "prompt",
        "message": r#"/ask ui.select {"title": "Nobody answers", "options": ["x"], "timeout_ms": 100}"#}))
        .await;
    let select = rpc.until(dialog("select")).await;
    assert_eq!(select["timeout"], 100);
    assert_eq!(answer_of(&record, "ui.select"), json!({"value": null}));
    respond(&mut rpc, &select, json!({"value": "x"})).await;
    // The connection survives the stray answer.
    let state = rpc.request(json!({"id": "s", "type": "get_state"})).await;
    assert_eq!(state["success"], true, "{state}");
    assert_eq!(rpc.close().await, Some(0));
}

/// stdin closed while a dialog is open: pi does not wait for the answer that cannot come; it
/// exits 0 and leaves no hook process behind (pi's issue #9951).
#[tokio::test]
async fn closing_stdin_with_a_dialog_open_exits_and_leaves_no_process() {
    let (agent, mut rpc, _record) = start(json!({}));
    rpc.send(json!({"id": "c", "type": "prompt",
        "message": r#"/ask ui.confirm {"title": "Sure?", "message": "nobody will answer"}"#}))
        .await;
    rpc.until(dialog("confirm")).await;
    assert_eq!(rpc.close().await, Some(0));
    assert_no_hook_processes(&agent);
}

/// A dialog a hook opens while pi starts (from `session_start`, which the start awaits) is
/// written and its answer read: RPC's writer and reader run before the session starts.
#[tokio::test]
async fn a_dialog_opened_while_pi_starts_is_asked_and_answered() {
    let (_agent, mut rpc, record) = start(json!({"confirm_at_start": true}));
    let confirm = rpc.until(dialog("confirm")).await;
    assert_eq!(confirm["title"], "Start?");
    respond(&mut rpc, &confirm, json!({"confirmed": true})).await;
    assert_eq!(answer_of(&record, "ui.confirm"), json!({"confirmed": true}));
    let state = rpc.request(json!({"id": "s", "type": "get_state"})).await;
    assert_eq!(state["success"], true, "{state}");
    assert_eq!(rpc.close().await, Some(0));
}

#[tokio::test]
async fn print_and_json_mode_answer_dialogs_with_their_defaults_and_notify_on_stderr() {
    for mode in ["print", "json"] {
        let agent = TestAgent::new();
        let record = use_ui_hook(&agent, json!({}));
        let mut args = agent.faux_args(json!(["ok"]));
        if mode == "json" {
            args.extend(["--mode".to_string(), "json".to_string()]);
        }
        args.extend(["-p".to_string(), "/dialogs".to_string()]);
        let out = agent.run(&args).await;
        out.assert_ok();
        // As seed A §8.3 has it: no one to ask, so each dialog answers its default at once.
        for (method, want) in [
            ("ui.select", json!({"value": null})),
            ("ui.confirm", json!({"confirmed": false})),
            ("ui.input", json!({"value": null})),
            ("ui.editor", json!({"value": null})),
            ("ui.set_title", json!({})),
        ] {
            assert_eq!(answer_of(&record, method), want, "{mode} {method}");
        }
        assert_eq!(answer_of(&record, "ui.notify"), json!({}), "{mode}");
        assert!(out.stderr.contains("[ui-dialogs] done"), "{mode}: {out}");
        let hello = recorded(&record)
            .into_iter()
            .find(|r| r.get("hello").is_some())
            .expect("the hook's hello");
        assert_eq!(hello["hello"]["mode"], mode);
        assert_eq!(hello["hello"]["capabilities"]["ui"]["notify"], true);
        assert_eq!(hello["hello"]["capabilities"]["ui"]["confirm"], false);
        assert_no_hook_processes(&agent);
    }
}
