//! The moments pi has no hook event for, which only Claude Code hooks see: PreCompact on a
//! `/compact` with nothing to compact, InstructionsLoaded for each context file.

use serde_json::json;

use super::{hook, script, seen, settings, FLAG};
use crate::common::hooks::run_pi;
use crate::common::mock::{MockModel, Turn};
use crate::common::{path_str, TestAgent};
use crate::hooks_messages::request_messages;

#[tokio::test]
async fn pre_compact_sees_a_manual_compact_even_with_nothing_to_compact() {
    let agent = TestAgent::new();
    script(
        &agent,
        "compact.sh",
        "#!/bin/bash\ncat >> \"$CLAUDE_PROJECT_DIR/seen-compact.sh.jsonl\"\necho >> \"$CLAUDE_PROJECT_DIR/seen-compact.sh.jsonl\"\nexit 0\n",
    );
    settings(
        &agent,
        json!({"PreCompact": [{"matcher": "manual", "hooks": [hook("compact.sh")]}]}),
    );
    let mut args = agent.faux_args(json!(["hello"]));
    args.extend(FLAG.iter().map(|s| s.to_string()));
    let mut rpc = agent.rpc(&args);
    let answer = rpc
        .request(json!({"id": "c", "type": "compact", "customInstructions": "keep the plan"}))
        .await;
    rpc.close().await;
    let compacted = seen(&agent, "compact.sh");
    assert_eq!(compacted.len(), 1, "{answer}");
    assert_eq!(compacted[0]["hook_event_name"], "PreCompact");
    assert_eq!(compacted[0]["trigger"], "manual");
    assert_eq!(compacted[0]["custom_instructions"], "keep the plan");
    // Then pi says there is nothing to compact, as before.
    assert_ne!(answer["success"], true, "{answer}");
}

#[tokio::test]
async fn instructions_loaded_sees_each_context_file_and_a_block_stops_its_load() {
    let mock = MockModel::start(vec![Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    std::fs::write(agent.agent_dir.join("AGENTS.md"), "GLOBAL-RULES-7\n").unwrap();
    std::fs::write(
        agent.agent_dir.join("APPEND_SYSTEM.md"),
        "APPENDED-RULES-7\n",
    )
    .unwrap();
    agent.write_file("CLAUDE.md", "PROJECT-RULES-7\n");
    // Exit-code style: project instructions are refused.
    script(
        &agent,
        "instructions.sh",
        r#"#!/bin/bash
input=$(cat)
echo "$input" >> "$CLAUDE_PROJECT_DIR/seen-instructions.sh.jsonl"
kind=$(printf '%s' "$input" | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory_type"])')
if [[ "$kind" == "Project" ]]; then
  echo "project instructions are not reviewed" >&2
  exit 2
fi
exit 0
"#,
    );
    settings(
        &agent,
        json!({"InstructionsLoaded": [{"matcher": "session_start", "hooks": [hook("instructions.sh")]}]}),
    );
    let args = [
        "--model",
        "mock/mock-model",
        "--mode",
        "json",
        FLAG[0],
        FLAG[1],
        "hi",
    ];
    let out = run_pi(&agent, &args).await;
    out.assert_ok();
    let sent: String = request_messages(&mock, 0)
        .into_iter()
        .map(|(_, t)| t)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(sent.contains("GLOBAL-RULES-7"), "{sent}");
    assert!(sent.contains("APPENDED-RULES-7"), "{sent}");
    assert!(
        !sent.contains("PROJECT-RULES-7"),
        "the blocked file must not reach the model: {sent}"
    );
    let project_file = path_str(&agent.cwd.join("CLAUDE.md"));
    assert!(
        out.stderr.contains(&project_file)
            && out.stderr.contains("project instructions are not reviewed"),
        "pi says which file it did not load and why: {out}"
    );
    let seen = seen(&agent, "instructions.sh");
    let mut files: Vec<(String, String)> = seen
        .iter()
        .map(|e| {
            assert_eq!(e["hook_event_name"], "InstructionsLoaded");
            assert_eq!(e["load_reason"], "session_start");
            (
                e["file_path"].as_str().unwrap().to_string(),
                e["memory_type"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    files.sort();
    let mut want = vec![
        (
            path_str(&agent.agent_dir.join("AGENTS.md")),
            "User".to_string(),
        ),
        (
            path_str(&agent.agent_dir.join("APPEND_SYSTEM.md")),
            "User".to_string(),
        ),
        (project_file, "Project".to_string()),
    ];
    want.sort();
    assert_eq!(files, want);
}
