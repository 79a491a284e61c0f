//! Hooks' `ui.*` calls through the controller with a real hook process
//! (`fixtures/hooks/it/ui_dialogs.py`) and the RPC bridge, the test playing the RPC client on
//! the `Outgoing` channel: the round trip, a timeout, the hook's deadline paused while its
//! dialog is open, a dialog dismissed when the run that asked is aborted or when the session
//! is replaced, and the honest `unavailable` / `invalid_params` answers without a UI.

use serde_json::json;
use tokio::sync::mpsc;

use super::*;
use crate::controller::{PromptOutcome, PromptRequest};
use crate::modes::rpc::protocol::{ExtensionUiRequest, ExtensionUiResponse, Outgoing, UiMethod};
use crate::modes::rpc::ui_bridge::RpcUi;

struct Client {
    rx: mpsc::UnboundedReceiver<Outgoing>,
    ui: Arc<RpcUi>,
}

impl Client {
    fn new() -> Client {
        let (tx, rx) = mpsc::unbounded_channel();
        Client {
            rx,
            ui: RpcUi::new(tx),
        }
    }

    /// The next `extension_ui_request` on stdout (bounded wait).
    async fn request(&mut self) -> ExtensionUiRequest {
        match tokio::time::timeout(LONG, self.rx.recv()).await {
            Ok(Some(Outgoing::UiRequest(r))) => r,
            other => panic!("expected an extension_ui_request, got {other:?}"),
        }
    }

    fn answer(&self, req: &ExtensionUiRequest, fields: Value) -> bool {
        let mut v = json!({"type": "extension_ui_response", "id": req.id});
        if let (Some(v), Some(f)) = (v.as_object_mut(), fields.as_object()) {
            v.extend(f.clone());
        }
        let resp: ExtensionUiResponse = serde_json::from_value(v).expect("a response");
        self.ui.answer(resp)
    }
}

async fn start_ui(client: &Client, config: Value, hook_timeout: Option<Duration>) -> Harness {
    start(Opts {
        script: json!([call_read(), "done"]),
        hook: Some(config),
        hook_script: Some("ui_dialogs.py"),
        hook_timeout,
        ui: Some(client.ui.clone()),
        ..Opts::default()
    })
    .await
}

fn call_read() -> Value {
    json!({"toolCalls": [{"name": "read", "arguments": {"path": "notes.txt"}}]})
}

/// Runs `/command` in a task of its own; the test answers the dialogs meanwhile.
fn command(h: &Harness, text: &str) -> tokio::task::JoinHandle<PromptOutcome> {
    let ctl = h.ctl.clone();
    let text = text.to_string();
    tokio::spawn(async move { ctl.prompt(PromptRequest::text(text)).await.expect("ran") })
}

async fn command_text(task: tokio::task::JoinHandle<PromptOutcome>) -> Value {
    let out = tokio::time::timeout(LONG, task)
        .await
        .expect("the command never returned")
        .expect("the command task panicked");
    let text = out.command_text.expect("the command's text");
    serde_json::from_str(&text).unwrap_or(Value::String(text))
}

fn method_name(req: &ExtensionUiRequest) -> String {
    serde_json::to_value(req).expect("serialises")["method"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn a_hooks_dialogs_round_trip_through_the_rpc_client() {
    let mut client = Client::new();
    let h = start_ui(&client, json!({"select_timeout_ms": 30000}), None).await;
    let hello = &h.hellos()[0]["hello"];
    assert_eq!(hello["mode"], "rpc");
    for m in [
        "notify",
        "confirm",
        "select",
        "input",
        "editor",
        "set_status",
        "set_widget",
        "set_title",
        "set_editor_text",
    ] {
        assert_eq!(hello["capabilities"]["ui"][m], true, "{m}: {hello}");
    }
    let task = command(&h, "/dialogs");

    let select = client.request().await;
    assert_eq!(
        select.method,
        UiMethod::Select {
            title: "Pick one".into(),
            options: vec!["a".into(), "b".into()],
            timeout: Some(30000),
        }
    );
    assert!(client.answer(&select, json!({"value": "b"})));
    let confirm = client.request().await;
    assert!(matches!(
        &confirm.method,
        UiMethod::Confirm { timeout: None, .. }
    ));
    client.answer(&confirm, json!({"confirmed": true}));
    let input = client.request().await;
    assert!(
        matches!(&input.method, UiMethod::Input { placeholder: Some(p), .. } if p == "type here")
    );
    client.answer(&input, json!({"cancelled": true}));
    let editor = client.request().await;
    assert!(
        matches!(&editor.method, UiMethod::Editor { prefill: Some(p), .. } if p == "line 1\nline 2")
    );
    client.answer(&editor, json!({"value": "edited"}));
    let mut updates = Vec::new();
    for _ in 0..5 {
        updates.push(serde_json::to_value(client.request().await).expect("serialises"));
    }

    assert_eq!(
        command_text(task).await,
        json!({"select": {"value": "b"}, "confirm": {"confirmed": true}, "input": {"value": null},
            "editor": {"value": "edited"}, "updates": [{}, {}, {}, {}, {}]})
    );
    let methods: Vec<&str> = updates
        .iter()
        .map(|u| u["method"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        methods,
        [
            "notify",
            "setStatus",
            "setWidget",
            "setTitle",
            "set_editor_text"
        ]
    );
    assert_eq!(updates[0]["notifyType"], "warning");
    assert_eq!(updates[2]["widgetPlacement"], "belowEditor");
    // Fire-and-forget requests expect no answer: none is waiting.
    assert_eq!(client.ui.open_dialogs(), 0);
    h.close().await;
}

#[tokio::test]
async fn a_dialog_nobody_answers_is_dismissed_at_the_hooks_timeout() {
    let mut client = Client::new();
    let h = start_ui(&client, json!({}), None).await;
    let task = command(
        &h,
        r#"/ask ui.select {"title": "Nobody answers", "options": ["x"], "timeout_ms": 100}"#,
    );
    let req = client.request().await;
    assert!(matches!(
        req.method,
        UiMethod::Select {
            timeout: Some(100),
            ..
        }
    ));
    assert_eq!(command_text(task).await, json!({"value": null}));
    // The answer that comes too late finds nothing waiting.
    assert!(!client.answer(&req, json!({"value": "x"})));
    h.close().await;
}

#[tokio::test]
async fn a_confirm_the_client_cancels_is_false() {
    let mut client = Client::new();
    let h = start_ui(&client, json!({}), None).await;
    let task = command(&h, r#"/ask ui.confirm {"title": "Sure?", "message": "m"}"#);
    let req = client.request().await;
    client.answer(&req, json!({"cancelled": true}));
    assert_eq!(command_text(task).await, json!({"confirmed": false}));
    h.close().await;
}

#[tokio::test]
async fn the_hooks_deadline_is_paused_while_its_dialog_is_open() {
    let mut client = Client::new();
    // The command's deadline is 300 ms; the user takes longer than that to answer.
    let h = start_ui(&client, json!({}), Some(Duration::from_millis(300))).await;
    let task = command(&h, r#"/ask ui.input {"title": "Name"}"#);
    let req = client.request().await;
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert!(client.answer(&req, json!({"value": "Ana"})));
    assert_eq!(command_text(task).await, json!({"value": "Ana"}));
    h.close().await;
}

#[tokio::test]
async fn aborting_the_run_dismisses_the_dialog_its_gate_opened() {
    let mut client = Client::new();
    let mut h = start_ui(&client, json!({"gate": "confirm"}), None).await;
    h.ctl
        .prompt(PromptRequest::text("read my notes"))
        .await
        .expect("accepted");
    let req = client.request().await;
    assert_eq!(method_name(&req), "confirm");
    tokio::time::timeout(LONG, h.ctl.abort())
        .await
        .expect("abort waits for nothing");
    h.until_recorded("the dismissed confirm", |r| {
        r["method"] == "ui.confirm" && r["answer"] == json!({"confirmed": false})
    })
    .await;
    assert_eq!(client.ui.open_dialogs(), 0);
    assert!(!client.answer(&req, json!({"confirmed": true})));
    h.drain();
    h.close().await;
}

#[tokio::test]
async fn replacing_the_session_while_a_dialog_is_open_resolves_it() {
    let mut client = Client::new();
    let h = start_ui(&client, json!({}), None).await;
    // Asked from a thread of the hook's own: the dialog serves no request, so only the end
    // of the hook's process can end it.
    let task = command(
        &h,
        r#"/ask_later ui.confirm {"title": "Sure?", "message": "m"}"#,
    );
    assert_eq!(command_text(task).await, json!("asked"));
    let req = client.request().await;
    assert_eq!(client.ui.open_dialogs(), 1);
    let old_pid = h.hellos()[0]["pid"].as_u64().expect("a pid");
    tokio::time::timeout(LONG, h.ctl.new_session(None))
        .await
        .expect("the replacement never ended")
        .expect("a new session");
    assert_eq!(client.ui.open_dialogs(), 0);
    assert!(!client.answer(&req, json!({"confirmed": true})));
    let hellos = h.hellos();
    assert_eq!(hellos.len(), 2);
    assert_ne!(hellos[1]["pid"].as_u64(), Some(old_pid));
    h.close().await;
}

#[tokio::test]
async fn without_a_ui_dialogs_answer_their_defaults_and_bad_params_are_named() {
    // The default UI of the harness is print mode's.
    let h = start(Opts {
        hook: Some(json!({})),
        hook_script: Some("ui_dialogs.py"),
        ..Opts::default()
    })
    .await;
    let out = command_text(command(&h, r#"/ask ui.editor {"title": "Edit"}"#)).await;
    assert_eq!(out, json!({"value": null}));
    let out = command_text(command(
        &h,
        r#"/ask ui.confirm {"title": "t", "message": "m"}"#,
    ))
    .await;
    assert_eq!(out, json!({"confirmed": false}));
    let out = command_text(command(&h, r#"/ask ui.select {"title": "t"}"#)).await;
    assert_eq!(out["error"]["code"], "invalid_params", "{out}");
    assert!(
        out["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("`options`")),
        "{out}"
    );
    h.close().await;
}

#[tokio::test]
async fn a_hook_cannot_flood_the_client_with_fire_and_forget_calls() {
    let mut client = Client::new();
    let h = start_ui(&client, json!({}), None).await;
    // 3000 calls would need 15 s to stay within 200 a second; the hook makes them in far less.
    let out = command_text(command(&h, "/flood 3000")).await;
    let ok = out["ok"].as_u64().expect("a count");
    assert!(ok < 3000, "{out}");
    let errors = out["errors"].as_array().expect("errors");
    assert_eq!(errors.len(), 1, "{out}");
    let e = errors[0].as_str().unwrap_or_default();
    assert!(
        e.starts_with("failed: ui.set_status refused: hook ui-dialogs made more than 200"),
        "{e}"
    );
    // Only what was admitted reached the client.
    let mut sent = 0;
    while let Ok(Outgoing::UiRequest(_)) = client.rx.try_recv() {
        sent += 1;
    }
    assert_eq!(sent, ok);
    h.close().await;
}
