//! The moments pi has no hook event for, which only Claude Code hooks see: PreCompact on a
//! `/compact` with nothing to compact.

use serde_json::json;

use super::{hook, script, seen, settings, FLAG};
use crate::common::TestAgent;

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
