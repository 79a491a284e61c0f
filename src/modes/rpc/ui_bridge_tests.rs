//! `RpcUi` against a test playing the client on the `Outgoing` channel: every way a dialog can
//! end, and the requests the fire-and-forget calls become.

use std::time::Duration;

use serde_json::json;
use tokio::sync::mpsc;

use super::*;

/// Generous bound for "does not hang".
const LONG: Duration = Duration::from_secs(10);

fn confirm() -> Dialog {
    Dialog::Confirm {
        title: "Sure?".into(),
        message: "Really?".into(),
    }
}

fn select() -> Dialog {
    Dialog::Select {
        title: "Pick".into(),
        options: vec!["a".into(), "b".into()],
    }
}

fn response(id: &str, v: serde_json::Value) -> ExtensionUiResponse {
    let mut r = json!({"type": "extension_ui_response", "id": id});
    if let (Some(r), Some(v)) = (r.as_object_mut(), v.as_object()) {
        r.extend(v.clone());
    }
    serde_json::from_value(r).expect("a response")
}

/// The next request written to stdout.
async fn next_request(rx: &mut mpsc::UnboundedReceiver<Outgoing>) -> ExtensionUiRequest {
    match tokio::time::timeout(LONG, rx.recv()).await {
        Ok(Some(Outgoing::UiRequest(r))) => r,
        other => panic!("expected an extension_ui_request, got {other:?}"),
    }
}

fn spawn_dialog(
    ui: &Arc<RpcUi>,
    hook: &'static str,
    dialog: Dialog,
    timeout: Option<Duration>,
) -> tokio::task::JoinHandle<Result<DialogAnswer, UiError>> {
    let ui = ui.clone();
    tokio::spawn(async move { ui.dialog(hook, &dialog, timeout).await })
}

async fn ended(
    h: tokio::task::JoinHandle<Result<DialogAnswer, UiError>>,
) -> Result<DialogAnswer, UiError> {
    tokio::time::timeout(LONG, h)
        .await
        .expect("the dialog never ended")
        .expect("the dialog task panicked")
}

#[tokio::test]
async fn an_answered_dialog_returns_the_clients_answer_and_carries_the_hooks_timeout() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let ui = RpcUi::new(tx);
    let h = spawn_dialog(&ui, "h", select(), Some(Duration::from_secs(30)));
    let req = next_request(&mut rx).await;
    assert_eq!(
        serde_json::to_value(&req).unwrap(),
        json!({"type": "extension_ui_request", "id": req.id, "method": "select", "title": "Pick",
            "options": ["a", "b"], "timeout": 30000})
    );
    assert!(ui.answer(response(&req.id, json!({"value": "b"}))));
    assert_eq!(ended(h).await, Ok(DialogAnswer::Value("b".into())));
    assert_eq!(ui.open_dialogs(), 0);
}

#[tokio::test]
async fn a_timeout_too_large_for_the_clock_still_waits_for_the_answer() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let ui = RpcUi::new(tx);
    let h = spawn_dialog(&ui, "h", confirm(), Some(Duration::from_millis(u64::MAX)));
    let req = next_request(&mut rx).await;
    assert!(matches!(
        req.method,
        UiMethod::Confirm {
            timeout: Some(u64::MAX),
            ..
        }
    ));
    ui.answer(response(&req.id, json!({"confirmed": true})));
    assert_eq!(ended(h).await, Ok(DialogAnswer::Confirmed(true)));
}

#[tokio::test]
async fn a_dialog_the_client_cancels_is_dismissed() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let ui = RpcUi::new(tx);
    let h = spawn_dialog(&ui, "h", confirm(), None);
    let req = next_request(&mut rx).await;
    assert!(serde_json::to_value(&req).unwrap().get("timeout").is_none());
    ui.answer(response(&req.id, json!({"cancelled": true})));
    let answer = ended(h).await.unwrap();
    assert_eq!(answer, DialogAnswer::Dismissed);
    assert_eq!(answer.to_result(&confirm()), json!({"confirmed": false}));
}

#[tokio::test]
async fn a_dialog_nobody_answers_is_dismissed_at_its_timeout_and_a_late_answer_is_ignored() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let ui = RpcUi::new(tx);
    let h = spawn_dialog(&ui, "h", select(), Some(Duration::from_millis(50)));
    let req = next_request(&mut rx).await;
    assert_eq!(ended(h).await, Ok(DialogAnswer::Dismissed));
    assert_eq!(ui.open_dialogs(), 0);
    assert!(!ui.answer(response(&req.id, json!({"value": "a"}))));
}

#[tokio::test]
async fn an_abandoned_call_forgets_its_dialog() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let ui = RpcUi::new(tx);
    let h = spawn_dialog(&ui, "h", confirm(), None);
    let req = next_request(&mut rx).await;
    assert_eq!(ui.open_dialogs(), 1);
    // The hook's call is abandoned (the hook exited or was stopped): its future is dropped.
    h.abort();
    assert!(h.await.unwrap_err().is_cancelled());
    assert_eq!(ui.open_dialogs(), 0);
    assert!(!ui.answer(response(&req.id, json!({"confirmed": true}))));
}

#[tokio::test]
async fn closing_stdin_dismisses_open_dialogs_and_every_later_one() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let ui = RpcUi::new(tx);
    let a = spawn_dialog(&ui, "h", confirm(), None);
    let b = spawn_dialog(&ui, "h", select(), None);
    next_request(&mut rx).await;
    next_request(&mut rx).await;
    ui.close();
    assert_eq!(ended(a).await, Ok(DialogAnswer::Dismissed));
    assert_eq!(ended(b).await, Ok(DialogAnswer::Dismissed));
    let later = spawn_dialog(&ui, "h", confirm(), None);
    assert_eq!(ended(later).await, Ok(DialogAnswer::Dismissed));
    assert_eq!(ui.open_dialogs(), 0);
}

#[tokio::test]
async fn a_dialog_is_dismissed_when_nobody_reads_stdout() {
    let (tx, rx) = mpsc::unbounded_channel();
    let ui = RpcUi::new(tx);
    drop(rx);
    let h = spawn_dialog(&ui, "h", confirm(), None);
    assert_eq!(ended(h).await, Ok(DialogAnswer::Dismissed));
    // Fire-and-forget calls are not the hook's problem then.
    let note = UiUpdate::SetTitle { title: "t".into() };
    assert_eq!(ui.update("h", &note), Ok(()));
}

#[tokio::test]
async fn an_answer_for_an_unknown_id_is_ignored_and_the_open_dialog_keeps_waiting() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let ui = RpcUi::new(tx);
    assert!(!ui.answer(response("nobody", json!({"value": "x"}))));
    let h = spawn_dialog(&ui, "h", select(), None);
    let req = next_request(&mut rx).await;
    assert!(!ui.answer(response("nobody", json!({"value": "a"}))));
    assert!(!h.is_finished());
    assert!(ui.answer(response(&req.id, json!({"value": "a"}))));
    assert_eq!(ended(h).await, Ok(DialogAnswer::Value("a".into())));
    // A second answer for the same id is late.
    assert!(!ui.answer(response(&req.id, json!({"value": "b"}))));
}

#[tokio::test]
async fn an_answer_of_the_wrong_kind_resolves_as_dismissed() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let ui = RpcUi::new(tx);
    let h = spawn_dialog(&ui, "h", select(), None);
    let req = next_request(&mut rx).await;
    ui.answer(response(&req.id, json!({"confirmed": true})));
    let answer = ended(h).await.unwrap();
    assert_eq!(answer.to_result(&select()), json!({"value": null}));
}

#[tokio::test]
async fn concurrent_dialogs_from_two_hooks_are_resolved_by_id() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let ui = RpcUi::new(tx);
    let a = spawn_dialog(&ui, "first", confirm(), None);
    let b = spawn_dialog(&ui, "second", select(), None);
    let r1 = next_request(&mut rx).await;
    let r2 = next_request(&mut rx).await;
    assert_ne!(r1.id, r2.id);
    let (confirm_id, select_id) = match r1.method {
        UiMethod::Confirm { .. } => (r1.id, r2.id),
        _ => (r2.id, r1.id),
    };
    // Answered in the other order.
    ui.answer(response(&select_id, json!({"value": "a"})));
    ui.answer(response(&confirm_id, json!({"confirmed": true})));
    assert_eq!(ended(a).await, Ok(DialogAnswer::Confirmed(true)));
    assert_eq!(ended(b).await, Ok(DialogAnswer::Value("a".into())));
}

#[tokio::test]
async fn fire_and_forget_calls_become_ts_pi_requests() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let ui = RpcUi::new(tx);
    let updates = [
        UiUpdate::Notify {
            message: "m".into(),
            level: NotifyLevel::Warning,
        },
        UiUpdate::SetStatus {
            key: "k".into(),
            text: None,
        },
        UiUpdate::SetWidget {
            key: "w".into(),
            lines: Some(vec!["l".into()]),
            placement: Some(WidgetPlacement::BelowEditor),
        },
        UiUpdate::SetTitle { title: "t".into() },
        UiUpdate::SetEditorText { text: "x".into() },
    ];
    let want = [
        json!({"method": "notify", "message": "m", "notifyType": "warning"}),
        json!({"method": "setStatus", "statusKey": "k"}),
        json!({"method": "setWidget", "widgetKey": "w", "widgetLines": ["l"],
            "widgetPlacement": "belowEditor"}),
        json!({"method": "setTitle", "title": "t"}),
        json!({"method": "set_editor_text", "text": "x"}),
    ];
    let mut ids = std::collections::HashSet::new();
    for (u, want) in updates.iter().zip(want) {
        assert_eq!(ui.update("h", u), Ok(()));
        let req = next_request(&mut rx).await;
        assert!(ids.insert(req.id.clone()), "ids are unique");
        let mut got = serde_json::to_value(&req).unwrap();
        let obj = got.as_object_mut().unwrap();
        obj.remove("id");
        obj.remove("type");
        assert_eq!(got, want);
    }
    assert_eq!(ui.open_dialogs(), 0);
}

/// A client that stops reading stdout cannot make a hook's notifications pile up without
/// bound: past the cap they fail (the hook hears `failed`), and once the writer has written
/// one, the next is queued again. Dialogs are not counted (each is bounded by its hook's call).
#[tokio::test]
async fn notifications_to_a_client_that_does_not_read_stop_at_the_cap() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let ui = RpcUi::new(tx);
    let note = UiUpdate::SetTitle { title: "t".into() };
    for _ in 0..MAX_UNWRITTEN_UPDATES {
        ui.update("h", &note).expect("under the cap");
    }
    let refused = ui.update("h", &note);
    assert!(
        matches!(refused, Err(UiError::Backlog { pending, .. }) if pending == MAX_UNWRITTEN_UPDATES),
        "{refused:?}"
    );
    assert_eq!(refused.map_err(|e| e.code()), Err("failed"));
    // The writer writes one: room for exactly one more.
    let first = next_request(&mut rx).await;
    ui.written(&first);
    ui.update("h", &note).expect("room again after a write");
    assert!(ui.update("h", &note).is_err());
}
