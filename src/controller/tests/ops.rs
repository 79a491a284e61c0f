//! Every operation's result, with pi's RPC keys: state, models and thinking, entries and the
//! tree, fork points, statistics, commands, fork/clone/new/switch, tree navigation and
//! compaction.

use serde_json::json;

use super::*;
use crate::agent::QueueMode;
use crate::controller::{CommandSource, ControllerError, PromptRequest};
use crate::provider::ThinkingLevel;
use crate::session::EntryKind;

async fn exchange(h: &mut Harness, text: &str) {
    h.ctl.prompt(PromptRequest::text(text)).await.unwrap();
    h.until(is_settled).await;
}

fn models_json() -> Value {
    json!({"providers": {"local": {
    "baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "k",
    "models": [
        {"id": "small"},
        {"id": "think", "reasoning": true, "contextWindow": 32000,
         "cost": {"input": 3, "output": 15}}
    ]}}})
}

#[tokio::test]
async fn get_state_has_pis_keys_and_follows_the_settings_operations() {
    let h = start(Opts::default()).await;
    let state = h.ctl.get_state();
    assert_eq!(
        keys(&state),
        [
            "autoCompactionEnabled",
            "followUpMode",
            "isCompacting",
            "isStreaming",
            "messageCount",
            "model",
            "pendingMessageCount",
            "sessionFile",
            "sessionId",
            "steeringMode",
            "thinkingLevel"
        ]
    );
    assert_eq!(state.session_id, h.ctl.session_id());
    assert_eq!(state.steering_mode, "one-at-a-time");
    h.ctl.set_steering_mode(QueueMode::All);
    h.ctl.set_follow_up_mode(QueueMode::All);
    h.ctl.set_auto_compaction(false);
    h.ctl.set_auto_retry(false);
    h.ctl.set_session_name("  my   work ").unwrap();
    let state = h.ctl.get_state();
    assert_eq!(state.steering_mode, "all");
    assert_eq!(state.follow_up_mode, "all");
    assert!(!state.auto_compaction_enabled);
    assert_eq!(state.session_name.as_deref(), Some("my work"));
    assert!(!h.ctl.agent().config().retry.enabled);
    assert!(matches!(
        h.ctl.set_session_name("   "),
        Err(ControllerError::EmptyName)
    ));
    h.close().await;
}

#[tokio::test]
async fn models_are_set_and_cycled_and_thinking_follows_what_the_model_can_do() {
    let mut h = start(Opts {
        models_json: Some(models_json()),
        ..Opts::default()
    })
    .await;
    let models = h.ctl.get_available_models();
    let ids: Vec<&str> = models.models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["small", "think"]);
    assert_eq!(
        keys(&models.models[1]),
        [
            "api",
            "baseUrl",
            "contextWindow",
            "cost",
            "id",
            "input",
            "maxTokens",
            "name",
            "provider",
            "reasoning"
        ]
    );
    assert_eq!(models.models[1].cost.output, 15.0);
    // The faux model has no reasoning: only "off".
    assert_eq!(h.ctl.get_available_thinking_levels().levels, ["off"]);
    assert!(h.ctl.cycle_thinking_level().is_none());
    assert_eq!(
        h.ctl.set_thinking_level(ThinkingLevel::High),
        ThinkingLevel::Off
    );

    let think = h.ctl.set_model("local", "think").unwrap();
    assert_eq!(
        (think.provider.as_str(), think.id.as_str()),
        ("local", "think")
    );
    assert_eq!(h.ctl.get_state().model.unwrap().id, "think");
    assert_eq!(h.ctl.agent().config().model.context_window, 32000);
    assert_eq!(
        h.ctl.get_available_thinking_levels().levels,
        ["off", "minimal", "low", "medium", "high"]
    );
    assert_eq!(
        h.ctl.set_thinking_level(ThinkingLevel::Max),
        ThinkingLevel::High
    );
    assert_eq!(h.ctl.get_state().thinking_level, "high");
    assert!(h
        .drain()
        .iter()
        .any(|e| matches!(e, AgentEvent::ThinkingLevelChanged { level } if level == "high")));
    let cycled = h.ctl.cycle_thinking_level().unwrap();
    assert_eq!(
        serde_json::to_value(&cycled).unwrap(),
        json!({"level": "off"})
    );

    let next = h.ctl.cycle_model().unwrap().unwrap();
    assert_eq!(keys(&next), ["isScoped", "model", "thinkingLevel"]);
    assert_eq!(next.model.id, "small");
    {
        let session = h.ctl.session();
        let s = session.lock();
        let changes: Vec<String> = s
            .entries()
            .iter()
            .filter_map(|e| match &e.kind {
                EntryKind::ModelChange(m) => Some(format!("{}/{}", m.provider, m.model_id)),
                _ => None,
            })
            .collect();
        assert_eq!(changes, ["faux/faux-1", "local/think", "local/small"]);
    }
    let missing = h.ctl.set_model("local", "nope").unwrap_err();
    assert_eq!(missing.to_string(), "Model not found: local/nope");
    h.close().await;
}

#[tokio::test]
async fn entries_tree_fork_points_and_statistics_answer_with_pis_shapes() {
    let mut h = start(Opts {
        script: json!(["a1", "a2"]),
        ..Opts::default()
    })
    .await;
    exchange(&mut h, "q1").await;
    exchange(&mut h, "q2").await;
    let all = h.ctl.get_entries(None).unwrap();
    assert_eq!(keys(&all), ["entries", "leafId"]);
    let first = all.entries[0].id().unwrap().to_string();
    let after = h.ctl.get_entries(Some(&first)).unwrap();
    assert_eq!(after.entries.len(), all.entries.len() - 1);
    assert_eq!(after.leaf_id, all.leaf_id);
    assert!(h.ctl.get_entries(Some("nope0000")).is_err());
    let tree = serde_json::to_value(h.ctl.get_tree().unwrap()).unwrap();
    assert!(tree["tree"][0]["entry"]["id"].is_string(), "{tree}");
    assert_eq!(tree["leafId"], json!(all.leaf_id));
    let forks = serde_json::to_value(h.ctl.get_fork_messages()).unwrap();
    let texts: Vec<&str> = forks["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["q1", "q2"]);
    assert!(forks["messages"][0]["entryId"].is_string());
    assert_eq!(
        serde_json::to_value(h.ctl.get_last_assistant_text()).unwrap(),
        json!({"text": "a2"})
    );
    let stats = h.ctl.get_session_stats();
    assert_eq!(
        keys(&stats),
        [
            "assistantMessages",
            "contextUsage",
            "cost",
            "sessionFile",
            "sessionId",
            "tokens",
            "toolCalls",
            "toolResults",
            "totalMessages",
            "userMessages"
        ]
    );
    assert_eq!(
        (stats.counts.user_messages, stats.counts.assistant_messages),
        (2, 2)
    );
    // The system message counts in the total, as in pi 1.6.
    assert_eq!(stats.counts.total_messages, 5);
    assert!(stats.counts.tokens.total > 0 && stats.counts.tokens.output > 0);
    assert_eq!(stats.counts.cost, 0.0);
    let usage = stats.context_usage.unwrap();
    assert_eq!(
        usage.context_window,
        h.ctl.agent().config().model.context_window
    );
    assert!(usage.tokens.unwrap() > 0);
    h.close().await;
}

#[tokio::test]
async fn fork_clone_new_and_switch_continue_in_other_sessions() {
    let mut h = start(Opts {
        script: json!(["a1", "a2", "a3"]),
        ..Opts::default()
    })
    .await;
    exchange(&mut h, "q1").await;
    exchange(&mut h, "q2").await;
    let original_id = h.ctl.session_id();
    let original_file = h.ctl.get_state().session_file.unwrap();
    let q2 = h.ctl.get_fork_messages().messages[1].entry_id.clone();

    let fork = h.ctl.fork(&q2).await.unwrap();
    assert_eq!(
        serde_json::to_value(&fork).unwrap(),
        json!({"text": "q2", "cancelled": false})
    );
    let state = h.ctl.get_state();
    assert_ne!(state.session_id, original_id);
    assert_eq!(fork.session_id.as_deref(), Some(state.session_id.as_str()));
    assert_eq!(h.user_texts(), ["q1"], "the fork stops before q2");
    exchange(&mut h, "q3").await;

    let clone = h.ctl.clone_session().await.unwrap();
    assert_eq!(
        serde_json::to_value(&clone).unwrap(),
        json!({"cancelled": false})
    );
    assert_eq!(
        h.user_texts(),
        ["q1", "q3"],
        "a clone keeps the whole branch"
    );

    let fresh = h
        .ctl
        .new_session(Some(original_file.clone()))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&fresh).unwrap(),
        json!({"cancelled": false})
    );
    assert!(h.ctl.get_messages().messages.is_empty());
    assert_eq!(
        h.ctl.session().lock().header().parent_session.as_deref(),
        Some(original_file.as_str())
    );

    let back = h.ctl.switch_session(&original_file).await.unwrap();
    assert!(!back.cancelled);
    assert_eq!(h.ctl.session_id(), original_id);
    assert_eq!(h.user_texts(), ["q1", "q2"]);
    h.close().await;
}

#[tokio::test]
async fn navigate_tree_moves_the_leaf_and_can_leave_a_summary() {
    let mut h = start(Opts {
        script: json!(["a1", "a2", "the abandoned branch asked about q2"]),
        ..Opts::default()
    })
    .await;
    exchange(&mut h, "q1").await;
    exchange(&mut h, "q2").await;
    let q2 = h.ctl.get_fork_messages().messages[1].entry_id.clone();
    let moved = h.ctl.navigate_tree(&q2, true, None, None).await.unwrap();
    assert!(!moved.cancelled);
    assert_eq!(moved.editor_text.as_deref(), Some("q2"));
    assert!(moved.summary_entry_id.is_some());
    let roles: Vec<String> = h
        .ctl
        .get_messages()
        .messages
        .iter()
        .map(|m| m.role().to_string())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "branchSummary"]);
    assert!(h.user_texts()[1].contains("the abandoned branch asked about q2"));
    h.close().await;
}

#[tokio::test]
async fn compact_answers_with_pis_result_and_the_context_starts_from_the_summary() {
    let long = |q: &str| format!("{q} {}", "word ".repeat(60));
    let mut h = start(Opts {
        script: json!(["a1", "a2", "Summary: two questions were asked."]),
        settings: json!({"compaction": {"enabled": true, "reserveTokens": 16384,
                                        "keepRecentTokens": 20}}),
        ..Opts::default()
    })
    .await;
    exchange(&mut h, &long("q1")).await;
    exchange(&mut h, &long("q2")).await;
    h.drain();
    let c = h.ctl.compact(Some("keep it short".into())).await.unwrap();
    assert_eq!(
        keys(&c),
        [
            "details",
            "estimatedTokensAfter",
            "firstKeptEntryId",
            "summary",
            "tokensBefore",
            "usage"
        ]
    );
    assert!(
        c.usage
            .as_ref()
            .is_some_and(|u| u["output"].as_u64() > Some(0)),
        "{c:?}"
    );
    assert!(
        c.summary.contains("two questions were asked"),
        "{}",
        c.summary
    );
    assert!(c.tokens_before > 0);
    let kinds: Vec<String> = h.drain().iter().map(kind).collect();
    assert_eq!(kinds, ["compaction_start", "compaction_end"]);
    // pi 1.6: the prompt as it stood (the compaction's system message), then the summary.
    let messages = h.ctl.get_messages().messages;
    assert_eq!(messages[0].role(), "system");
    assert_eq!(messages[1].role(), "compactionSummary");
    assert!(!h.ctl.get_state().is_compacting);
    h.close().await;
}

#[tokio::test]
async fn get_commands_lists_hook_commands_templates_and_skills() {
    let h = start(Opts {
        hook: Some(json!({})),
        files: vec![
            (
                "skills/lint/SKILL.md",
                "---\nname: lint\ndescription: Lint the project\n---\nRun the linter.\n",
            ),
            (
                "agent/prompts/review.md",
                "---\ndescription: Review the change\n---\nReview $@\n",
            ),
        ],
        args: vec!["--skill".into(), "../skills/lint".into()],
        ..Opts::default()
    })
    .await;
    let commands = h.ctl.get_commands().commands;
    let find = |name: &str| {
        commands
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no command {name} in {commands:?}"))
    };
    let op = find("op");
    assert_eq!(op.source, CommandSource::Extension);
    assert_eq!(op.source_info.scope, "user");
    let review = find("review");
    assert_eq!(review.source, CommandSource::Prompt);
    assert_eq!(review.description.as_deref(), Some("Review the change"));
    assert_eq!(
        (
            review.source_info.source.as_str(),
            review.source_info.scope.as_str()
        ),
        ("auto", "user"),
        "found in the agent directory, as pi 1.6 says"
    );
    assert!(review.source_info.base_dir.is_some());
    assert!(review.source_info.path.ends_with("review.md"));
    let lint = find("skill:lint");
    assert_eq!(lint.source, CommandSource::Skill);
    assert_eq!(lint.source_info.source, "cli");
    assert_eq!(
        keys(review),
        ["description", "name", "source", "sourceInfo"]
    );
    assert_eq!(
        keys(&review.source_info),
        ["baseDir", "origin", "path", "scope", "source"]
    );
    h.close().await;
}
