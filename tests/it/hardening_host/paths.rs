//! Item 9: a relative hook command in the user's settings resolves against the agent
//! directory, never the directory pi runs in, and `PATH` entries that are empty or relative
//! are skipped when a bare hook command name is looked up — so a repository cannot supply the
//! program a user's hook runs.

use serde_json::json;

use super::{assert_blocked, gate_config, root, run_bash, tagged_hook, NO};
use crate::common::hooks::{run_json, use_hooks};
use crate::common::TestAgent;

/// Which of the tagged hooks ran, in order.
fn ran(marker: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(marker)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

#[tokio::test]
async fn a_relative_command_in_user_settings_resolves_against_the_agent_directory() {
    let agent = TestAgent::new();
    let marker = root(&agent).join("which-ran");
    tagged_hook(&agent.agent_dir.join("bin/gate"), &marker, "agent");
    tagged_hook(&agent.cwd.join("bin/gate"), &marker, "project");
    use_hooks(
        &agent,
        vec![
            json!({"command": "bin/gate", "name": "guard", "config": gate_config(json!(["bash"]))}),
        ],
    );
    let (out, _) = run_bash(&agent).await;
    assert_blocked(&agent, &out, NO);
    assert_eq!(ran(&marker), ["agent"], "{out}");
}

#[tokio::test]
async fn empty_and_relative_path_entries_are_skipped_when_resolving_hook_commands() {
    let mut agent = TestAgent::new();
    let marker = root(&agent).join("which-ran");
    let user_bin = root(&agent).join("user-bin");
    tagged_hook(&user_bin.join("pi-gate"), &marker, "user");
    // Same-named executables in the project, reachable through ".", "" and "bin".
    tagged_hook(&agent.cwd.join("pi-gate"), &marker, "project");
    tagged_hook(&agent.cwd.join("bin/pi-gate"), &marker, "project-bin");
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into());
    agent.env("PATH", &format!(".:bin::{}:{path}", user_bin.display()));

    use_hooks(
        &agent,
        vec![
            json!({"command": "pi-gate", "name": "guard", "config": gate_config(json!(["bash"]))}),
        ],
    );
    let (out, _) = run_bash(&agent).await;
    assert_blocked(&agent, &out, NO);
    assert_eq!(ran(&marker), ["user"], "{out}");

    // `--hook NAME` is looked up the same way.
    use_hooks(&agent, vec![]);
    let (out, _) = run_json(
        &agent,
        crate::common::hooks::bash_then_final("true"),
        &["--hook", "pi-gate"],
    )
    .await;
    out.assert_ok();
    assert_eq!(ran(&marker), ["user", "user"], "{out}");
}
