//! Issue 8, items 1, 2, 9 and 10: tool filters mean what the protocol says, a managed hook
//! cannot be swapped through the user's environment, untrusted paths stay untrusted, and the
//! host is strict where the protocol document is.
//!
//! Most hooks here are `fixtures/hooks/it/strict_host.py`, which writes exactly the frames its
//! configuration names (a `register` with bad filters or names, a `reply` with `"error":
//! null`, frames before `register`) and can report the environment it was started with.

mod filters;
mod managed_env;
mod paths;
mod strict;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::common::hooks::{bash_then_final, fixture, run_faux, run_json};
use crate::common::{only_tool_end, path_str, Output, TestAgent};

/// The file the gated `bash` call would create.
const RAN: &str = "bash-ran";

/// The block reason of [`gate`].
const NO: &str = "strict says no";

/// A settings entry running the strict hook as `name` with `config`.
fn strict(name: &str, config: Value) -> Value {
    json!({
        "command": format!("python3 {}", fixture("strict_host.py")),
        "name": name,
        "config": config,
        "timeout_ms": 3000,
        "start_timeout_ms": 5000,
    })
}

/// The strict hook's configuration for a `tool_call` gate with `filter` that blocks every call
/// it is asked about with "strict says no".
fn gate_config(filter: Value) -> Value {
    json!({
        "register": {"subscriptions": [{"event": "tool_call", "tools": filter}]},
        "on": {"tool_call": {"result": {"block": true, "reason": "strict says no"}}},
    })
}

/// [`strict`] as the gate `guard` of [`gate_config`].
fn gate(filter: Value) -> Value {
    strict("guard", gate_config(filter))
}

/// Outside the project and the agent directory.
fn root(agent: &TestAgent) -> PathBuf {
    agent.agent_dir.parent().expect("root").to_path_buf()
}

/// Writes an executable file.
fn executable(path: &Path, text: &str) -> PathBuf {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("create dir");
    }
    std::fs::write(path, text).expect("write executable");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path.to_path_buf()
}

/// An `sh` wrapper that appends `tag` to `marker`, then runs the strict hook (whose config
/// comes from `hello`).
fn tagged_hook(path: &Path, marker: &Path, tag: &str) -> PathBuf {
    executable(
        path,
        &format!(
            "#!/bin/sh\necho {tag} >> '{}'\nexec python3 '{}'\n",
            marker.display(),
            fixture("strict_host.py")
        ),
    )
}

/// Writes `policy` as the managed settings and points `pi` at it.
fn managed(agent: &mut TestAgent, policy: Value) {
    let path = root(agent).join("managed-settings.json");
    std::fs::write(&path, policy.to_string()).expect("write policy");
    agent.env("PI_MANAGED_SETTINGS", &path_str(&path));
}

/// A JSON-mode run in which the model calls `bash` to create [`RAN`], then answers.
async fn run_bash(agent: &TestAgent) -> (Output, Vec<Value>) {
    run_json(agent, bash_then_final(&format!("touch {RAN}")), &[]).await
}

/// A print-mode run of the same script, for start-up failures (stderr, exit code).
async fn run_print(agent: &TestAgent) -> Output {
    run_faux(
        agent,
        bash_then_final(&format!("touch {RAN}")),
        &["-p", "go"],
    )
    .await
}

/// The run ended normally and the single `bash` call was refused with `reason`.
#[track_caller]
fn assert_blocked(agent: &TestAgent, out: &Output, reason: &str) {
    out.assert_ok();
    let end = only_tool_end(out);
    assert!(end.is_error, "{out}");
    assert_eq!(end.text, reason, "{out}");
    assert!(!agent.cwd.join(RAN).exists(), "bash ran\n{out}");
}

/// A settings hook did not start: pi went on without it (exit 0, as the seeds load the rest),
/// its fail-closed policy kept bash from running, and stderr has every one of `needles`.
#[track_caller]
fn assert_start_failure_reported(agent: &TestAgent, out: &Output, needles: &[&str]) {
    out.assert_ok();
    assert!(!agent.cwd.join(RAN).exists(), "bash ran\n{out}");
    for n in needles {
        assert!(out.stderr.contains(n), "stderr does not say {n:?}\n{out}");
    }
}

/// pi refused to start (exit 1), bash did not run, and stderr has every one of `needles`.
#[track_caller]
fn assert_refused(agent: &TestAgent, out: &Output, needles: &[&str]) {
    out.assert_code(1);
    assert!(!agent.cwd.join(RAN).exists(), "bash ran\n{out}");
    for n in needles {
        assert!(out.stderr.contains(n), "stderr does not say {n:?}\n{out}");
    }
}
