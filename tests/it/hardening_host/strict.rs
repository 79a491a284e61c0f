//! Item 10: the host is strict where the protocol document is — a reply of the wrong shape
//! fails its request closed, only `log` (or a message type the host does not know) may come
//! before `register`, a misspelt key in a hook entry is named, an executable that cannot run
//! says why, and the names a hook registers are validated.

use std::os::unix::fs::PermissionsExt;

use serde_json::{json, Value};

use super::{
    assert_refused, assert_start_failure_reported, executable, gate_config, managed, root,
    run_bash, run_print, strict, RAN,
};
use crate::common::hooks::{hook_errors, use_hooks};
use crate::common::{only_tool_end, path_str, Output, TestAgent};

/// The gate `guard` on bash answering its `tool_call` with `frame` (id filled in).
fn replying(frame: Value) -> Value {
    let mut config = gate_config(json!(["bash"]));
    config["on"]["tool_call"] = frame;
    strict("guard", config)
}

/// bash did not run, the model was told the hook failed and its policy fails closed, and the
/// user got a `bad_reply` error naming the hook whose message has `why`.
#[track_caller]
fn assert_failed_closed(agent: &TestAgent, out: &Output, events: &[Value], why: &str) {
    out.assert_ok();
    assert!(!agent.cwd.join(RAN).exists(), "bash ran\n{out}");
    let end = only_tool_end(out);
    assert!(
        end.is_error
            && end.text.starts_with("Blocked: hook guard failed (")
            && end.text.contains(why),
        "{out}"
    );
    assert!(
        hook_errors(events).iter().any(|e| e["hook"] == "guard"
            && e["kind"] == "bad_reply"
            && e["message"].as_str().is_some_and(|m| m.contains(why))),
        "{out}"
    );
}

#[tokio::test]
async fn a_gate_reply_that_is_not_an_object_fails_closed() {
    for (result, why) in [
        (
            json!([]),
            "`result` must be an object or null, not an array",
        ),
        (
            json!([true, "fine"]),
            "`result` must be an object or null, not an array",
        ),
        (
            json!("allow"),
            "`result` must be an object or null, not a string",
        ),
    ] {
        let agent = TestAgent::new();
        use_hooks(&agent, vec![replying(json!({ "result": result }))]);
        let (out, events) = run_bash(&agent).await;
        assert_failed_closed(&agent, &out, &events, why);
    }
}

#[tokio::test]
async fn a_reply_whose_error_is_not_a_string_fails_closed() {
    let agent = TestAgent::new();
    use_hooks(&agent, vec![replying(json!({ "error": null }))]);
    let (out, events) = run_bash(&agent).await;
    assert_failed_closed(&agent, &out, &events, "`error` must be a string");
}

#[tokio::test]
async fn an_unknown_message_type_before_register_is_ignored_and_logged() {
    let agent = TestAgent::new();
    let mut entry = replying(json!({"result": {"block": true, "reason": "strict says no"}}));
    entry["config"]["before"] = json!([
        {"type": "log", "message": "warming up"},
        {"type": "telemetry", "cpu": 3},
    ]);
    use_hooks(&agent, vec![entry]);
    let (out, events) = run_bash(&agent).await;
    super::assert_blocked(&agent, &out, super::NO);
    assert!(
        hook_errors(&events).iter().any(|e| e["hook"] == "guard"
            && e["message"]
                .as_str()
                .is_some_and(|m| m.contains("unknown message type `telemetry`; ignored"))),
        "{out}"
    );
}

#[tokio::test]
async fn a_known_message_other_than_log_before_register_is_a_start_failure() {
    for (frame, ty) in [
        (json!({"type": "reply", "id": 1, "result": {}}), "reply"),
        (
            json!({"type": "call", "id": 1, "method": "ui.notify", "params": {"message": "hi"}}),
            "call",
        ),
    ] {
        let agent = TestAgent::new();
        let mut entry = replying(json!({"result": {}}));
        entry["config"]["before"] = json!([frame]);
        use_hooks(&agent, vec![entry]);
        let out = run_print(&agent).await;
        assert_start_failure_reported(
            &agent,
            &out,
            &[
                "hook guard",
                &format!("expected `register` first, got `{ty}`"),
            ],
        );
    }
}

#[tokio::test]
async fn a_misspelt_key_in_a_hook_entry_is_named() {
    let agent = TestAgent::new();
    let mut typo = strict("other", json!({}));
    typo["timout_ms"] = json!(100);
    use_hooks(&agent, vec![strict("guard", json!({})), typo]);
    let out = run_print(&agent).await;
    let settings = path_str(&agent.agent_dir.join("settings.json"));
    assert_refused(
        &agent,
        &out,
        &[
            "unknown field `timout_ms`",
            "hook entry #2",
            &settings,
            "expected one of",
        ],
    );

    let mut wrong = strict("guard", json!({}));
    wrong["timeout_ms"] = json!("300");
    use_hooks(&agent, vec![wrong]);
    let out = run_print(&agent).await;
    assert_refused(
        &agent,
        &out,
        &[
            "hook entry #1",
            "`timeout_ms`",
            "invalid type: string \"300\"",
        ],
    );
}

#[tokio::test]
async fn an_executable_that_cannot_run_says_why() {
    let agent = TestAgent::new();
    let dir = root(&agent).join("hook-dir");
    std::fs::create_dir_all(&dir).expect("dir");
    let plain = root(&agent).join("plain.py");
    std::fs::write(&plain, "#!/usr/bin/env python3\n").expect("write");
    std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let orphan = executable(
        &root(&agent).join("policy.py"),
        "#!/usr/bin/python9 -u\nprint('hi')\n",
    );
    let cases = [
        (
            dir.clone(),
            format!("{}: it is a directory, not an executable", dir.display()),
        ),
        (
            plain.clone(),
            format!("{}: it is not executable (mode 0644)", plain.display()),
        ),
        (
            orphan.clone(),
            format!(
                "{}: its interpreter /usr/bin/python9 (from the #! line) does not exist",
                orphan.display()
            ),
        ),
    ];
    for (program, why) in cases {
        let out = crate::common::hooks::run_faux(
            &agent,
            crate::common::hooks::bash_then_final(&format!("touch {RAN}")),
            &["-p", "go", "--hook", &path_str(&program)],
        )
        .await;
        assert_refused(&agent, &out, &[&why]);
    }
}

#[tokio::test]
async fn a_managed_hook_whose_interpreter_is_missing_says_so_when_tools_are_refused() {
    let mut agent = TestAgent::new();
    let orphan = executable(&root(&agent).join("policy.py"), "#!/usr/bin/python9\n");
    managed(
        &mut agent,
        json!({"hooks": [{"command": path_str(&orphan), "name": "guard"}]}),
    );
    let (out, _) = run_bash(&agent).await;
    out.assert_ok();
    let end = only_tool_end(&out);
    assert!(
        end.text
            .starts_with("Blocked: policy degraded: managed hook guard is not running: ")
            && end
                .text
                .contains("its interpreter /usr/bin/python9 (from the #! line) does not exist"),
        "{out}"
    );
    assert!(!agent.cwd.join(RAN).exists(), "bash ran\n{out}");
}

fn tool(name: &str) -> Value {
    json!({"name": name, "description": "d", "parameters": {"type": "object"}})
}

#[tokio::test]
async fn names_a_hook_registers_are_validated() {
    let long = "a".repeat(65);
    let cases = [
        (
            json!({"tools": [tool("scan secrets")]}),
            "tool name \"scan secrets\" is invalid",
        ),
        (json!({"tools": [tool(&long)]}), "tool name \"aaaa"),
        (json!({"tools": [tool("")]}), "tool name \"\" is invalid"),
        (
            json!({"commands": [{"name": "audit"}, {"name": "audit"}]}),
            "command \"audit\" is registered twice",
        ),
        (
            json!({"commands": [{"name": "/audit", "description": "d"}]}),
            "command name \"/audit\" is invalid",
        ),
        (
            json!({"flags": [{"name": "--strict", "description": "d"}]}),
            "flag name \"--strict\" is invalid",
        ),
    ];
    for (register, why) in cases {
        let agent = TestAgent::new();
        use_hooks(
            &agent,
            vec![strict("guard", json!({ "register": register }))],
        );
        let out = run_print(&agent).await;
        assert_start_failure_reported(&agent, &out, &["hook guard", "invalid `register`", why]);
    }
}
