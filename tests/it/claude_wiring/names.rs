//! An inline command — a pipeline or an interpreter's `-c` as Claude Code's documentation
//! writes many hooks — is shown under a name that reads as the command (its start,
//! shortened), not as its first word: in `hook_decision`, `--explain-hooks` and `pi hooks`.

use serde_json::json;

use super::{settings, FLAG};
use crate::common::hooks::{decisions, run_json, run_pi};
use crate::common::TestAgent;

const GREP_GATE: &str =
    "grep -q 'rm -rf' && { echo 'rm -rf is not allowed' >&2; exit 2; } || exit 0";
const PY_AUDIT: &str =
    "python3 -c \"import json,sys; d=json.load(sys.stdin); open('audit.log','a').write(d['tool_name'])\"";

const GREP_NAME: &str = "claude:PreToolUse:grep -q 'rm -rf' && { echo 'rm -rf is…";
const PY_NAME: &str = "claude:PreToolUse:python3 -c \"import json,sys;…";

#[tokio::test]
async fn inline_command_hooks_are_named_after_what_they_run() {
    let agent = TestAgent::new();
    settings(
        &agent,
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": PY_AUDIT},
            {"type": "command", "command": GREP_GATE},
            {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/check.sh 2>/dev/null"}]}]}),
    );
    agent.write_file(".claude/hooks/check.sh", "");
    std::fs::set_permissions(
        agent.cwd.join(".claude/hooks/check.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let steps = crate::common::hooks::bash_then_final("rm -rf build");
    let (out, events) = run_json(&agent, steps, &FLAG).await;
    out.assert_ok();
    let d = decisions(&events, "tool_call")
        .into_iter()
        .find(|d| d["toolCallId"] == "call-1")
        .unwrap_or_else(|| panic!("no decision\n{out}"));
    let hooks: Vec<&str> = d["answers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["hook"].as_str().unwrap())
        .collect();
    assert_eq!(hooks, [PY_NAME, GREP_NAME], "{out}");
    assert_eq!(d["outcome"], "block");

    // A script keeps its file name, whatever follows it.
    let list = run_pi(&agent, &["hooks", FLAG[0], FLAG[1]]).await;
    list.assert_ok();
    for name in [PY_NAME, GREP_NAME, "claude:PreToolUse:check.sh"] {
        assert!(list.stdout.contains(name), "{name} not in\n{list}");
    }

    let steps = crate::common::hooks::bash_then_final("rm -rf build");
    let mut args = agent.faux_args(steps);
    args.extend(["--explain-hooks", FLAG[0], FLAG[1], "-p", "go"].map(String::from));
    let out = crate::common::hooks::run_pi(&agent, &args).await;
    out.assert_ok();
    assert!(
        out.stderr.contains(GREP_NAME) && out.stderr.contains(PY_NAME),
        "{out}"
    );
}
