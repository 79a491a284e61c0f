//! A hook's notices, statuses, widgets and dialogs (title, message, options) reach the screen
//! as visible text. The `ui-dialogs` test hook makes each call with the text typed after
//! `/ask METHOD` (JSON, so escapes can be typed as `\u001b`).

use serde_json::{json, Value};

use super::*;
use crate::common::hooks::fixture;
use crate::common::pty::PtyPi;
use crate::common::{path_str, TestAgent};

fn ui_hook(agent: &TestAgent) {
    let record = agent.tmp.join("ui-dialogs.jsonl");
    agent.write_settings(&json!({"hooks": [{
        "command": format!("python3 {}", fixture("ui_dialogs.py")),
        "name": "ui-dialogs",
        "config": {"record": path_str(&record)},
        "timeout_ms": 60000,
        "start_timeout_ms": 10000,
    }]}));
}

fn ask(pi: &mut PtyPi, method: &str, params: Value) {
    pi.paste(&format!("/ask {method} {}", ascii_json(&params)));
    pi.enter();
}

#[test]
fn a_hooks_notice_status_and_widgets_are_shown_not_obeyed() {
    let agent = TestAgent::new();
    ui_hook(&agent);
    let mut pi = agent.pty_faux(json!(["ok"]), 200, 40);
    ask(
        &mut pi,
        "ui.set_status",
        json!({"key": "s", "text": payload("status")}),
    );
    pi.wait_text(&shown("status"));
    ask(
        &mut pi,
        "ui.set_widget",
        json!({"key": "w", "lines": [payload("above")]}),
    );
    pi.wait_text(&shown("above"));
    ask(
        &mut pi,
        "ui.set_widget",
        json!({"key": "v", "lines": [payload("below")], "placement": "below_editor"}),
    );
    pi.wait_text(&shown("below"));
    ask(
        &mut pi,
        "ui.notify",
        json!({"message": payload("notice"), "level": "error"}),
    );
    pi.wait_text(&shown("notice"));
    assert_pty_inert(&pi);
    pi.quit();
}

#[test]
fn a_hooks_dialog_title_message_and_options_are_shown_not_obeyed() {
    let agent = TestAgent::new();
    ui_hook(&agent);
    let mut pi = agent.pty_faux(json!(["ok"]), 200, 40);
    ask(
        &mut pi,
        "ui.confirm",
        json!({"title": payload("title"), "message": payload("message")}),
    );
    let screen = pi.wait_text(&shown("title"));
    assert!(has_row(&screen, &shown("message")), "{screen:#?}");
    pi.type_text("n");
    pi.wait_screen("the confirm gone", |s| !has_row(s, &shown("title")));
    ask(
        &mut pi,
        "ui.select",
        json!({"title": payload("pick"), "options": [payload("option"), "plain"]}),
    );
    let screen = pi.wait_text(&shown("pick"));
    assert!(has_row(&screen, &shown("option")), "{screen:#?}");
    pi.esc();
    pi.wait_screen("the select gone", |s| !has_row(s, &shown("pick")));
    assert_pty_inert(&pi);
    pi.quit();
}
