//! The administrator's managed policy through the real binary (SPEC 4.5, 11): managed hooks
//! load whatever the user, the project or the command line say; `sha256` pins are checked
//! before every spawn (a tampered executable never runs, not even on a restart); a required
//! hook that is down refuses every tool call, or stops start-up under
//! `requiredHookFailure: "exit"`; `allowManagedHooksOnly` ignores every other hook; and a
//! broken policy file stops start-up.
//!
//! The policy file is placed with `PI_MANAGED_SETTINGS` (honoured because the test machine has
//! no `/etc/pi/managed-settings.json`). Hooks whose identity matters are small `sh` wrappers
//! around the scripted hook, so the pinned executable is the wrapper itself and its first
//! line records every spawn in a marker file.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::common::hooks::{
    bash_then_final, final_text, fixture, hook_errors, recorded, run_json, run_pi, scripted,
    use_hooks, HOOK_RUN_TIMEOUT,
};
use crate::common::{kill_group, only_tool_end, path_str, tool_ends, Output, TestAgent};

/// The file the gated `bash` call would create.
const RAN: &str = "bash-ran";

/// Writes `policy` as the managed settings and points `pi` at it.
fn managed(agent: &mut TestAgent, policy: Value) -> PathBuf {
    let path = root(agent).join("managed-settings.json");
    std::fs::write(&path, policy.to_string()).expect("write policy");
    agent.env("PI_MANAGED_SETTINGS", &path_str(&path));
    path
}

/// Outside the project and the agent directory.
fn root(agent: &TestAgent) -> PathBuf {
    agent.agent_dir.parent().expect("root").to_path_buf()
}

/// The scripted `guard` gate on bash: blocks every call with "managed says no".
fn blocking_guard(agent: &TestAgent) -> Value {
    scripted(
        agent,
        "guard",
        json!({"subscriptions": [{"event": "tool_call", "tools": ["bash"]}],
               "on": {"tool_call": {"reply": {"block": true, "reason": "managed says no"}}}}),
    )
}

/// An executable `sh` wrapper around the scripted hook that appends a line to `marker` each
/// time it is spawned (before anything else), then runs `extra` shell code, then the hook.
fn wrapper(agent: &TestAgent, name: &str, marker: &Path, extra: &str) -> PathBuf {
    let path = root(agent).join(name);
    let text = format!(
        "#!/bin/sh\necho spawned >> '{}'\n{extra}\nexec python3 '{}'\n",
        marker.display(),
        fixture("scripted.py")
    );
    std::fs::write(&path, text).expect("write wrapper");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

fn sha256_hex(path: &Path) -> String {
    let bytes = std::fs::read(path).expect("read for hashing");
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `entry` with its command replaced by `program` (the scripted hook's config kept).
fn run_as(mut entry: Value, program: &Path) -> Value {
    entry["command"] = json!(path_str(program));
    entry
}

fn spawns(marker: &Path) -> usize {
    std::fs::read_to_string(marker)
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

#[track_caller]
fn assert_blocked_by_guard(agent: &TestAgent, out: &Output) {
    out.assert_ok();
    let end = only_tool_end(out);
    assert!(end.is_error, "{out}");
    assert_eq!(end.text, "managed says no", "{out}");
    assert!(!agent.cwd.join(RAN).exists(), "bash ran\n{out}");
}

/// The single tool result says the policy is degraded because `guard` is down, and the user
/// was told through a `hook_error`.
#[track_caller]
fn assert_policy_degraded(agent: &TestAgent, out: &Output, events: &[Value]) -> String {
    out.assert_ok();
    assert_eq!(final_text(events), "final text", "{out}");
    assert!(!agent.cwd.join(RAN).exists(), "bash ran\n{out}");
    let end = only_tool_end(out);
    assert!(end.is_error, "{out}");
    assert!(
        end.text
            .starts_with("Blocked: policy degraded: managed hook guard is not running: "),
        "{out}"
    );
    let errors = hook_errors(events);
    assert!(
        errors.iter().any(|e| e["hook"] == "guard"
            && e["kind"] == "policy_degraded"
            && e["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("policy degraded: managed hook guard"))),
        "{errors:?}"
    );
    end.text
}

#[tokio::test]
async fn a_managed_hook_runs_under_no_hooks_and_empty_user_hooks() {
    let mut agent = TestAgent::new();
    let entry = blocking_guard(&agent);
    managed(&mut agent, json!({ "hooks": [entry] }));
    use_hooks(&agent, vec![]);
    let (out, _) = run_json(
        &agent,
        bash_then_final(&format!("touch {RAN}")),
        &["--no-hooks"],
    )
    .await;
    assert_blocked_by_guard(&agent, &out);
}

#[tokio::test]
async fn user_and_project_entries_cannot_replace_or_weaken_a_managed_hook() {
    let mut agent = TestAgent::new();
    let mut entry = blocking_guard(&agent);
    // The administrator's own `fail: "open"` does not weaken a required hook either.
    entry["fail"] = json!("open");
    managed(&mut agent, json!({ "hooks": [entry] }));
    // A user entry with the managed hook's name and command, in shadow mode, failing open.
    let mut impostor = scripted(&agent, "impostor", json!({}));
    impostor["name"] = json!("guard");
    impostor["mode"] = json!("shadow");
    impostor["fail"] = json!("open");
    use_hooks(&agent, vec![impostor]);
    agent.write_file(
        ".pi/settings.json",
        json!({"hooks": [], "allowManagedHooksOnly": false, "requiredHookFailure": "exit"})
            .to_string(),
    );
    let (out, _) = run_json(&agent, bash_then_final(&format!("touch {RAN}")), &["-a"]).await;
    assert_blocked_by_guard(&agent, &out);
    assert!(
        out.stderr.contains("has the name of a managed hook") && out.stderr.contains("ignored"),
        "{out}"
    );
    assert!(out.stderr.contains("`fail: \"open\"` is ignored"), "{out}");
    assert!(
        recorded(&agent, "impostor").is_empty(),
        "the impostor started\n{out}"
    );
}

#[tokio::test]
async fn a_sha256_mismatch_never_spawns_the_hook_and_tools_are_refused() {
    let mut agent = TestAgent::new();
    let marker = root(&agent).join("guard-spawned");
    let program = wrapper(&agent, "guard.sh", &marker, "");
    let actual = sha256_hex(&program);
    let pinned = "0".repeat(64);
    let mut entry = run_as(blocking_guard(&agent), &program);
    entry["sha256"] = json!(pinned);
    managed(&mut agent, json!({ "hooks": [entry] }));
    let (out, events) = run_json(&agent, bash_then_final(&format!("touch {RAN}")), &[]).await;
    let text = assert_policy_degraded(&agent, &out, &events);
    assert_eq!(spawns(&marker), 0, "the tampered hook was spawned\n{out}");
    for needle in [&pinned, &actual, &path_str(&program)] {
        assert!(
            text.contains(needle.as_str()),
            "{needle} missing from {text:?}"
        );
        assert!(
            out.stdout.contains(needle.as_str()),
            "{needle} never shown\n{out}"
        );
    }
}

#[tokio::test]
async fn a_matching_sha256_in_any_case_runs_the_hook() {
    let mut agent = TestAgent::new();
    let marker = root(&agent).join("guard-spawned");
    let program = wrapper(&agent, "guard.sh", &marker, "");
    let mut entry = run_as(blocking_guard(&agent), &program);
    entry["sha256"] = json!(sha256_hex(&program).to_ascii_uppercase());
    managed(&mut agent, json!({ "hooks": [entry] }));
    let (out, _) = run_json(&agent, bash_then_final(&format!("touch {RAN}")), &[]).await;
    assert_blocked_by_guard(&agent, &out);
    assert_eq!(spawns(&marker), 1, "{out}");
}

/// The pin is checked again before a restart. The wrapper replaces itself with a modified
/// copy as soon as it has started (so the first spawn passed the check), and the hook crashes
/// on the first `bash` call. A second hook holds the next model request (its `context` reply
/// opens a FIFO for writing, which blocks) until the test has seen the refused restart on the
/// JSON stream, so the run cannot end before the supervisor tried.
#[tokio::test]
async fn a_hook_replaced_after_start_is_not_restarted() {
    let mut agent = TestAgent::new();
    let marker = root(&agent).join("guard-spawned");
    // A pinned script runs from its verified descriptor: `$0` is `/proc/self/fd/3`, and
    // `readlink -f` gives the path it was opened at.
    let tamper =
        "p=$(readlink -f \"$0\") && cp \"$p\" \"$p.new\" && echo '# replaced' >> \"$p.new\" \
                  && mv \"$p.new\" \"$p\"";
    let program = wrapper(&agent, "guard.sh", &marker, tamper);
    let pin = sha256_hex(&program);
    let guard = scripted(
        &agent,
        "guard",
        json!({"subscriptions": [{"event": "tool_call", "tools": ["bash"]}],
               "on": {"tool_call": {"fault": "crash"}}}),
    );
    let mut guard = run_as(guard, &program);
    guard["sha256"] = json!(pin);
    let fifo = root(&agent).join("hold");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("run mkfifo");
    assert!(made.success());
    let mut holder = scripted(
        &agent,
        "holder",
        json!({"subscriptions": [{"event": "context"}],
               "on": {"context": [{}, {"touch": path_str(&fifo)}, {}]}}),
    );
    // Far longer than the refused restart takes (about 100 ms), shorter than a hung run.
    holder["timeout_ms"] = json!(10_000);
    managed(&mut agent, json!({ "hooks": [guard] }));
    use_hooks(&agent, vec![holder]);
    let steps = json!([
        {"toolCalls": [{"name": "bash", "arguments": {"command": format!("touch {RAN}")}, "id": "call-1"}]},
        {"toolCalls": [{"name": "bash", "arguments": {"command": format!("touch {RAN}")}, "id": "call-2"}]},
        "final text"
    ]);
    let mut args = agent.faux_args(steps);
    args.extend(["--mode", "json", "--hook-events", "go"].map(String::from));

    let mut child = agent
        .command(&args)
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn pi");
    let pid = child.id().expect("pid") as i32;
    let stdout = child.stdout.take().expect("stdout");
    let watch = async {
        let mut lines = BufReader::new(stdout).lines();
        let mut events = Vec::new();
        let mut released = false;
        while let Some(line) = lines.next_line().await.expect("read pi stdout") {
            let ev: Value = serde_json::from_str(&line).expect("JSON line");
            let refused = ev["type"] == "hook_error"
                && ev["kind"] == "integrity"
                && ev["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("sha256 mismatch"));
            if refused && !released {
                // Opening the read end lets the holder's blocked open for writing finish.
                let fifo = fifo.clone();
                tokio::task::spawn_blocking(move || std::fs::read(fifo))
                    .await
                    .expect("join")
                    .expect("read fifo");
                released = true;
            }
            events.push(ev);
        }
        (events, child.wait().await.expect("wait for pi"))
    };
    let (events, status) = match tokio::time::timeout(HOOK_RUN_TIMEOUT, watch).await {
        Ok(r) => r,
        Err(_) => {
            kill_group(pid);
            panic!("pi hung; the restart was never refused");
        }
    };
    assert!(status.success(), "{status}");
    assert_eq!(spawns(&marker), 1, "the replaced hook was spawned again");
    assert!(!agent.cwd.join(RAN).exists(), "bash ran");
    let ends = tool_ends(&events);
    assert_eq!(ends.len(), 2, "{events:?}");
    assert!(
        ends[0].text.starts_with("Blocked: hook guard failed ("),
        "{:?}",
        ends[0].text
    );
    let second = &ends[1].text;
    assert!(
        second.starts_with("Blocked: policy degraded: managed hook guard is not running: ")
            && second.contains("sha256 mismatch")
            && second.contains(&pin)
            && second.contains("(quarantined)"),
        "{second:?}"
    );
    assert_eq!(final_text(&events), "final text");
}

#[tokio::test]
async fn allow_managed_hooks_only_ignores_user_and_cli_hooks() {
    let mut agent = TestAgent::new();
    let allow = scripted(
        &agent,
        "guard",
        json!({"subscriptions": [{"event": "tool_call", "tools": ["bash"]}]}),
    );
    managed(
        &mut agent,
        json!({ "hooks": [allow], "allowManagedHooksOnly": true }),
    );
    let user_marker = root(&agent).join("user-spawned");
    let user = wrapper(&agent, "user.sh", &user_marker, "");
    // A broken entry that will not run anyway does not stop start-up either.
    use_hooks(
        &agent,
        vec![json!(path_str(&user)), json!("./no-such-hook")],
    );
    let cli_marker = root(&agent).join("cli-spawned");
    let cli = wrapper(&agent, "cli.sh", &cli_marker, "");
    let (out, _) = run_json(
        &agent,
        bash_then_final(&format!("touch {RAN}")),
        &["--hook", &path_str(&cli)],
    )
    .await;
    out.assert_ok();
    assert!(
        agent.cwd.join(RAN).exists(),
        "the managed gate allows bash\n{out}"
    );
    assert!(
        !recorded(&agent, "guard").is_empty(),
        "the managed hook did not run"
    );
    assert_eq!(spawns(&user_marker), 0, "the user hook ran\n{out}");
    assert_eq!(spawns(&cli_marker), 0, "the --hook ran\n{out}");
    assert!(
        out.stderr.contains("3 hook(s) ignored: the managed policy")
            && out.stderr.contains("allowManagedHooksOnly"),
        "{out}"
    );
}

#[tokio::test]
async fn a_required_hook_that_cannot_start_refuses_tools_by_default() {
    let mut agent = TestAgent::new();
    let mut entry = scripted(&agent, "guard", json!({"start": "crash"}));
    entry["fail"] = json!("open");
    managed(&mut agent, json!({ "hooks": [entry] }));
    let (out, events) = run_json(&agent, bash_then_final(&format!("touch {RAN}")), &[]).await;
    let text = assert_policy_degraded(&agent, &out, &events);
    assert!(text.contains("boom: cannot load my policy file"), "{text}");
    assert!(
        out.stderr.contains("every tool call will be refused"),
        "the user is told at start-up\n{out}"
    );
}

#[tokio::test]
async fn print_mode_shows_the_degraded_policy_on_stderr() {
    let mut agent = TestAgent::new();
    let entry = scripted(&agent, "guard", json!({"start": "crash"}));
    managed(&mut agent, json!({ "hooks": [entry] }));
    let mut args = agent.faux_args(bash_then_final(&format!("touch {RAN}")));
    args.extend(["-p", "go"].map(String::from));
    let out = run_pi(&agent, &args).await;
    out.assert_ok();
    assert!(!agent.cwd.join(RAN).exists(), "bash ran\n{out}");
    assert!(
        out.stderr.contains(
            "hook guard failed on tool_call: policy degraded: managed hook guard is not running"
        ),
        "{out}"
    );
}

#[tokio::test]
async fn required_hook_failure_exit_stops_start_up() {
    let mut agent = TestAgent::new();
    let entry = scripted(&agent, "guard", json!({"start": "crash"}));
    managed(
        &mut agent,
        json!({ "hooks": [entry], "requiredHookFailure": "exit" }),
    );
    let (out, _) = run_json(&agent, bash_then_final(&format!("touch {RAN}")), &[]).await;
    out.assert_code(1);
    assert!(!agent.cwd.join(RAN).exists(), "bash ran\n{out}");
    assert!(
        out.stderr
            .contains("policy degraded: managed hook guard is not running: ")
            && out.stderr.contains("boom: cannot load my policy file")
            && out.stderr.contains("requiredHookFailure: \"exit\""),
        "{out}"
    );
}

#[tokio::test]
async fn an_invalid_policy_file_stops_start_up() {
    let mut agent = TestAgent::new();
    let path = managed(&mut agent, json!({}));
    std::fs::write(&path, "{\"hooks\": [").expect("write");
    let (out, _) = run_json(&agent, bash_then_final(&format!("touch {RAN}")), &[]).await;
    out.assert_code(1);
    assert!(
        out.stderr.contains(&path_str(&path)) && out.stderr.contains("not valid JSON"),
        "{out}"
    );
    assert!(!agent.cwd.join(RAN).exists(), "bash ran\n{out}");
    // `pi hooks` reads the same policy the same way.
    let listed = run_pi(&agent, &["hooks"]).await;
    listed.assert_code(1);
    assert!(listed.stderr.contains("not valid JSON"), "{listed}");

    std::fs::write(&path, r#"{"allowManagedHookOnly": true}"#).expect("write");
    let (out, _) = run_json(&agent, bash_then_final(&format!("touch {RAN}")), &[]).await;
    out.assert_code(1);
    assert!(out.stderr.contains("unknown field"), "{out}");
}

#[tokio::test]
async fn pi_hooks_lists_a_managed_hook_under_no_hooks() {
    let mut agent = TestAgent::new();
    let entry = blocking_guard(&agent);
    managed(&mut agent, json!({ "hooks": [entry] }));
    let out = run_pi(&agent, &["hooks", "--no-hooks"]).await;
    out.assert_ok();
    assert!(out.stdout.contains("guard  (managed: "), "{out}");
}
