//! pi 1.6.0's own example extensions (its package's `examples/extensions/`, pinned in
//! tests/ts-pi), unchanged, through the extension bridge: each test runs one in TypeScript pi
//! 1.6.0 and in ours on the same scripted model over RPC and compares what a user observes —
//! dialogs and notifications, blocked calls, tool results, custom messages, session entries
//! (`extensions/harness.rs`). The README's table of the 78 examples says which run.

mod faults;
mod harness;
mod protocol;

use serde_json::{json, Value};

use crate::common::{wire, Turn};
use harness::{answered, command, same_in_both, same_in_both_world, step, World};

fn select(answer: &'static str) -> fn(&Value) -> Value {
    match answer {
        "Yes" => |_| json!({"value": "Yes"}),
        _ => |_| json!({"value": "No"}),
    }
}

#[tokio::test]
async fn permission_gate_asks_before_a_dangerous_command_as_in_pi_1_6() {
    let turns = vec![
        Turn::tools(&[("bash", json!({"command": "sudo rm -rf ./build"}))]),
        Turn::text("blocked, fine"),
        Turn::tools(&[(
            "bash",
            json!({"command": "chmod 777 ok.txt && echo allowed"}),
        )]),
        Turn::text("ran it"),
        Turn::tools(&[("bash", json!({"command": "echo harmless"}))]),
        Turn::text("done"),
    ];
    let steps = [
        answered("clean the build", select("No")),
        answered("try again", select("Yes")),
        step("say something harmless"),
    ];
    let prepare = |a: &crate::common::TestAgent| {
        a.write_file("ok.txt", "x");
    };
    let Some(ours) = same_in_both("permission-gate.ts", turns, &steps, &prepare).await else {
        return;
    };
    assert!(
        ours.steps[0]
            .iter()
            .any(|o| o.starts_with("ui select") && o.contains("sudo rm -rf ./build")),
        "{:?}",
        ours.steps[0]
    );
    assert!(
        ours.steps[0].contains(&"tool bash error=true Blocked by user".to_string()),
        "{:?}",
        ours.steps[0]
    );
    assert!(
        ours.steps[2].iter().all(|o| !o.starts_with("ui select")),
        "{:?}",
        ours.steps[2]
    );
}

#[tokio::test]
async fn protected_paths_blocks_writes_to_protected_files_as_in_pi_1_6() {
    let turns = vec![
        Turn::tools(&[
            ("write", json!({"path": ".env", "content": "KEY=1"})),
            ("write", json!({"path": "notes.txt", "content": "kept"})),
        ]),
        Turn::text("one of two"),
    ];
    let Some(ours) =
        same_in_both("protected-paths.ts", turns, &[step("write files")], &|_| {}).await
    else {
        return;
    };
    assert!(
        ours.steps[0].contains(&"tool write error=true Path \".env\" is protected".to_string()),
        "{:?}",
        ours.steps[0]
    );
    assert!(
        ours.steps[0]
            .iter()
            .any(|o| o.starts_with("ui notify")
                && o.contains("Blocked write to protected path: .env"))
    );
}

#[tokio::test]
async fn hello_registers_a_tool_the_model_calls_as_in_pi_1_6() {
    let turns = vec![
        Turn::tools(&[("hello", json!({"name": "Ana"}))]),
        Turn::text("greeted"),
    ];
    let Some(ours) = same_in_both("hello.ts", turns, &[step("greet Ana")], &|_| {}).await else {
        return;
    };
    assert!(
        ours.steps[0].contains(&"tool hello error=false Hello, Ana!".to_string()),
        "{:?}",
        ours.steps[0]
    );
    let schema = wire::tool_schema(&ours.bodies[0], "hello").expect("hello offered to the model");
    assert_eq!(schema["properties"]["name"]["type"], "string", "{schema}");
}

#[tokio::test]
async fn a_command_names_the_session_as_in_pi_1_6() {
    let steps = [
        step("/session-name"),
        step("/session-name Release prep"),
        step("/session-name"),
    ];
    let Some(ours) = same_in_both("session-name.ts", vec![], &steps, &|_| {}).await else {
        return;
    };
    assert!(
        ours.steps[2]
            .iter()
            .any(|o| o.contains("Session: Release prep")),
        "{:?}",
        ours.steps[2]
    );
}

#[tokio::test]
async fn input_transform_handles_and_rewrites_prompts_as_in_pi_1_6() {
    let turns = vec![Turn::text("brief answer")];
    let steps = [step("ping"), step("?quick what is rust")];
    let Some(ours) = same_in_both("input-transform.ts", turns, &steps, &|_| {}).await else {
        return;
    };
    assert_eq!(
        ours.bodies.len(),
        1,
        "ping was handled without a model call"
    );
    assert!(
        wire::user_text(&ours.bodies[0]).contains("Respond briefly in 1-2 sentences: what is rust")
    );
}

#[tokio::test]
async fn send_user_message_starts_a_run_from_a_command_as_in_pi_1_6() {
    let turns = vec![Turn::text("answered the ask")];
    let steps = [step("/ask"), step("/ask what time is it")];
    let Some(ours) = same_in_both("send-user-message.ts", turns, &steps, &|_| {}).await else {
        return;
    };
    assert!(
        ours.steps[1].contains(&"assistant answered the ask".to_string()),
        "{:?}",
        ours.steps[1]
    );
}

#[tokio::test]
async fn pirate_mode_changes_the_system_prompt_from_a_command_as_in_pi_1_6() {
    let turns = vec![Turn::text("plain"), Turn::text("arr")];
    let steps = [step("hello"), step("/pirate"), step("hello again")];
    let Some(ours) = same_in_both("pirate.ts", turns, &steps, &|_| {}).await else {
        return;
    };
    assert!(!wire::system_text(&ours.bodies[0]).contains("PIRATE MODE"));
    assert!(wire::system_text(&ours.bodies[1]).contains("IMPORTANT: You are now in PIRATE MODE."));
}

#[tokio::test]
async fn bookmark_labels_the_last_answer_as_in_pi_1_6() {
    let turns = vec![Turn::text("worth keeping")];
    let steps = [
        step("/bookmark"),
        step("say something"),
        step("/bookmark keeper"),
        step("/unbookmark"),
    ];
    let Some(ours) = same_in_both("bookmark.ts", turns, &steps, &|_| {}).await else {
        return;
    };
    assert_eq!(
        ours.entries,
        ["label \"keeper\"", "label null"],
        "{:?}",
        ours.entries
    );
}

#[tokio::test]
async fn the_event_bus_and_notifications_work_as_in_pi_1_6() {
    let steps = [step("/emit ahoy")];
    let Some(ours) = same_in_both("event-bus.ts", vec![], &steps, &|_| {}).await else {
        return;
    };
    assert!(
        ours.steps[0]
            .iter()
            .any(|o| o.contains("Event from /emit command: ahoy")),
        "{:?}",
        ours.steps[0]
    );
}

#[tokio::test]
async fn timed_dialogs_pass_their_timeout_as_in_pi_1_6() {
    let steps = [
        answered("/timed", |_| json!({"confirmed": true})),
        answered("/timed-select", |_| json!({"value": "Option B"})),
    ];
    let Some(ours) = same_in_both("timed-confirm.ts", vec![], &steps, &|_| {}).await else {
        return;
    };
    assert!(
        ours.steps[1]
            .iter()
            .any(|o| o.contains("Selected: Option B")),
        "{:?}",
        ours.steps[1]
    );
}

#[tokio::test]
async fn a_terminating_tool_ends_the_run_as_in_pi_1_6() {
    let args =
        json!({"headline": "Ship it", "summary": "All green.", "actionItems": ["tag", "release"]});
    let turns = vec![
        Turn::tools(&[("structured_output", args)]),
        Turn::text("never asked for"),
    ];
    let Some(ours) =
        same_in_both("structured-output.ts", turns, &[step("summarise")], &|_| {}).await
    else {
        return;
    };
    assert_eq!(ours.bodies.len(), 1, "the run ended on the tool's result");
}

#[tokio::test]
async fn inline_bash_expands_commands_with_pi_exec_as_in_pi_1_6() {
    let turns = vec![Turn::text("seen")];
    let steps = [step("the answer is !{echo forty-two}")];
    let Some(ours) = same_in_both("inline-bash.ts", turns, &steps, &|_| {}).await else {
        return;
    };
    assert!(wire::user_text(&ours.bodies[0]).contains("the answer is forty-two"));
}

#[tokio::test]
async fn claude_rules_are_listed_in_the_system_prompt_as_in_pi_1_6() {
    let turns = vec![Turn::text("ok")];
    let prepare = |a: &crate::common::TestAgent| {
        a.write_file(".claude/rules/style.md", "# Style\n");
    };
    let Some(ours) = same_in_both("claude-rules.ts", turns, &[step("hi")], &prepare).await else {
        return;
    };
    assert!(wire::system_text(&ours.bodies[0]).contains("- .claude/rules/style.md"));
}

#[tokio::test]
async fn widgets_are_placed_above_and_below_the_editor_as_in_pi_1_6() {
    let Some(ours) = same_in_both(
        "widget-placement.ts",
        vec![],
        &[step("/nothing-here")],
        &|_| {},
    )
    .await
    else {
        return;
    };
    assert!(
        ours.steps[0]
            .iter()
            .any(|o| o.contains("Below editor widget") && o.contains("belowEditor")),
        "{:?}",
        ours.steps[0]
    );
}

#[tokio::test]
async fn a_tool_keeps_its_state_in_its_results_as_in_pi_1_6() {
    let turns = vec![
        Turn::tools(&[("todo", json!({"action": "add", "text": "write tests"}))]),
        Turn::tools(&[("todo", json!({"action": "add", "text": "ship"}))]),
        Turn::tools(&[("todo", json!({"action": "toggle", "id": 1}))]),
        Turn::tools(&[("todo", json!({"action": "list"}))]),
        Turn::text("listed"),
    ];
    let Some(ours) = same_in_both("todo.ts", turns, &[step("plan the week")], &|_| {}).await else {
        return;
    };
    assert!(
        ours.steps[0]
            .contains(&"tool todo error=false [x] #1: write tests\n[ ] #2: ship".to_string()),
        "{:?}",
        ours.steps[0]
    );
}

#[tokio::test]
async fn the_rpc_demo_drives_every_rpc_dialog_and_setter_as_in_pi_1_6() {
    let turns = vec![
        Turn::tools(&[("bash", json!({"command": "rm -rf build"}))]),
        Turn::text("left it"),
    ];
    let steps = [
        answered("clean up", |_| json!({"value": "Block"})),
        answered("/rpc-input", |_| json!({"value": "typed words"})),
        answered("/rpc-editor", |_| json!({"value": "one\ntwo"})),
        step("/rpc-prefill"),
        command(
            json!({"type": "new_session"}),
            |_| json!({"confirmed": false}),
        ),
    ];
    let Some(ours) = same_in_both("rpc-demo.ts", turns, &steps, &|_| {}).await else {
        return;
    };
    assert!(
        ours.steps[0].iter().any(|o| o.starts_with("ui setTitle")),
        "{:?}",
        ours.steps[0]
    );
    assert!(
        ours.steps[1]
            .iter()
            .any(|o| o.contains("You entered: typed words")),
        "{:?}",
        ours.steps[1]
    );
    assert!(
        ours.steps[4].contains(&"new_session true".to_string()),
        "{:?}",
        ours.steps[4]
    );
}

#[tokio::test]
async fn confirm_destructive_guards_a_new_session_as_in_pi_1_6() {
    let turns = vec![Turn::text("hello back")];
    let steps = [
        step("hello"),
        command(
            json!({"type": "new_session"}),
            |_| json!({"confirmed": false}),
        ),
        command(
            json!({"type": "new_session"}),
            |_| json!({"confirmed": true}),
        ),
    ];
    let Some(ours) = same_in_both("confirm-destructive.ts", turns, &steps, &|_| {}).await else {
        return;
    };
    assert!(
        ours.steps[1].iter().any(|o| o.contains("Clear cancelled")),
        "{:?}",
        ours.steps[1]
    );
    assert!(
        ours.steps[2].contains(&"new_session false".to_string()),
        "{:?}",
        ours.steps[2]
    );
}

#[tokio::test]
async fn model_changes_reach_model_select_as_in_pi_1_6() {
    let steps = [command(
        json!({"type": "set_model", "provider": "mock-anthropic", "modelId": "mock-claude"}),
        harness::dismiss,
    )];
    let Some(ours) = same_in_both("model-status.ts", vec![], &steps, &|_| {}).await else {
        return;
    };
    assert!(
        ours.steps[0]
            .iter()
            .any(|o| o.contains("Model: mock-anthropic/mock-claude")),
        "{:?}",
        ours.steps[0]
    );
}

#[tokio::test]
async fn a_tool_that_replaces_a_built_in_one_is_the_one_the_model_calls_as_in_pi_1_6() {
    let turns = vec![
        Turn::tools(&[
            ("read", json!({"path": ".env"})),
            ("read", json!({"path": "notes.txt"})),
        ]),
        Turn::text("read what I could"),
    ];
    let prepare = |a: &crate::common::TestAgent| {
        a.write_file(".env", "SECRET=1\n");
        a.write_file("notes.txt", "line one\nline two\n");
    };
    let Some(ours) = same_in_both("tool-override.ts", turns, &[step("read them")], &prepare).await
    else {
        return;
    };
    assert!(
        ours.steps[0]
            .iter()
            .any(|o| o.starts_with("tool read error=false Access denied: \".env\"")),
        "{:?}",
        ours.steps[0]
    );
}

#[tokio::test]
async fn a_tool_that_needs_the_terminal_says_so_in_rpc_mode_as_in_pi_1_6() {
    let args = json!({"question": "Which?", "options": [{"label": "A"}, {"label": "B"}]});
    let turns = vec![Turn::tools(&[("question", args)]), Turn::text("ok")];
    let Some(ours) = same_in_both("question.ts", turns, &[step("ask me")], &|_| {}).await else {
        return;
    };
    assert!(
        ours.steps[0]
            .iter()
            .any(|o| o.contains("UI not available (running in non-interactive mode)")),
        "{:?}",
        ours.steps[0]
    );
}

#[tokio::test]
async fn a_status_line_follows_the_turns_as_in_pi_1_6() {
    let turns = vec![
        Turn::tools(&[("bash", json!({"command": "true"}))]),
        Turn::text("done"),
    ];
    same_in_both("status-line.ts", turns, &[step("work")], &|_| {}).await;
}

/// A git repository in the project, with one commit and `dirty.txt` uncommitted.
fn git_project(a: &crate::common::TestAgent) {
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(&a.cwd)
            .env("HOME", &a.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("git")
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["config", "user.email", "t@example.com"]);
    git(&["config", "user.name", "T"]);
    a.write_file("README.md", "x\n");
    git(&["add", "-A"]);
    git(&["commit", "-qm", "start"]);
    a.write_file("dirty.txt", "uncommitted\n");
}

fn last_commit(a: &crate::common::TestAgent) -> Vec<String> {
    let out = std::process::Command::new("git")
        .args(["log", "-1", "--format=%s"])
        .current_dir(&a.cwd)
        .output()
        .expect("git log");
    vec![format!(
        "commit {}",
        String::from_utf8_lossy(&out.stdout).trim()
    )]
}

#[tokio::test]
async fn dirty_repo_guard_asks_before_leaving_uncommitted_work_as_in_pi_1_6() {
    let steps = [
        command(
            json!({"type": "new_session"}),
            |_| json!({"value": "No, let me commit first"}),
        ),
        command(
            json!({"type": "new_session"}),
            |_| json!({"value": "Yes, proceed anyway"}),
        ),
    ];
    let Some(ours) = same_in_both("dirty-repo-guard.ts", vec![], &steps, &git_project).await else {
        return;
    };
    assert!(
        ours.steps[0]
            .iter()
            .any(|o| o.contains("You have 1 uncommitted file(s). new session anyway?")),
        "{:?}",
        ours.steps[0]
    );
    assert!(
        ours.steps[0].contains(&"new_session true".to_string()),
        "{:?}",
        ours.steps[0]
    );
    assert!(
        ours.steps[1].contains(&"new_session false".to_string()),
        "{:?}",
        ours.steps[1]
    );
}

#[tokio::test]
async fn auto_commit_on_exit_commits_with_the_last_answer_as_in_pi_1_6() {
    let turns = vec![Turn::text("Refactored the parser\nand more")];
    let world = World {
        prepare: &git_project,
        inspect: &last_commit,
    };
    let Some(ours) =
        same_in_both_world("auto-commit-on-exit.ts", turns, &[step("refactor")], &world).await
    else {
        return;
    };
    assert!(
        ours.entries
            .contains(&"commit [pi] Refactored the parser".to_string()),
        "{:?}",
        ours.entries
    );
}

#[tokio::test]
async fn a_command_compacts_the_session_as_in_pi_1_6() {
    let turns = vec![Turn::text("hello back"), Turn::text("Summary: greeted.")];
    let steps = [step("hello"), step("/trigger-compact keep it short")];
    let Some(ours) = same_in_both("trigger-compact.ts", turns, &steps, &|_| {}).await else {
        return;
    };
    // A one-exchange session is too small for either pi to compact: the extension's `onError`
    // hears why, in pi's words.
    let failed = "ui notify {\"notifyType\":\"error\",\"message\":\"Compaction failed: Nothing to compact (session too small)\"}";
    assert!(
        ours.steps[1].contains(&failed.to_string()),
        "{:?}",
        ours.steps[1]
    );
}

/// `google/gemini-2.5-flash` (the model custom-compaction.ts summarizes with) served by the
/// scripted model, and a compaction that keeps almost nothing, so two exchanges compact.
fn gemini_on_the_mock(agent: &crate::common::TestAgent) {
    let read = |p: &std::path::Path| -> Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap_or_default()).unwrap_or(json!({}))
    };
    let models_path = agent.agent_dir.join("models.json");
    let mut models = read(&models_path);
    let base = models["providers"]["mock"]["baseUrl"].clone();
    models["providers"]["google"] = json!({"baseUrl": base, "api": "openai-completions",
        "apiKey": "LEAK-google-key", "models": [{"id": "gemini-2.5-flash"}]});
    agent.write_models(&models);
    let mut settings = read(&agent.agent_dir.join("settings.json"));
    settings["compaction"] = json!({"keepRecentTokens": 1});
    agent.write_settings(&settings);
}

/// The summaries of the session's compaction entries.
fn compaction_summaries(agent: &crate::common::TestAgent) -> Vec<String> {
    let Some(file) = crate::sessions::session_files(agent).into_iter().next() else {
        return Vec::new();
    };
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "compaction")
        .map(|e| format!("compaction {}", e["summary"]))
        .collect()
}

#[tokio::test]
async fn custom_compaction_summarizes_with_its_own_model_as_in_pi_1_6() {
    let turns = vec![
        Turn::text("hello back"),
        Turn::text("hello again back"),
        Turn::text("Custom summary: greeted twice."),
    ];
    let steps = [
        step("hello"),
        step("hello again"),
        command(json!({"type": "compact"}), harness::dismiss),
    ];
    let world = World {
        prepare: &gemini_on_the_mock,
        inspect: &compaction_summaries,
    };
    let Some(ours) = same_in_both_world("custom-compaction.ts", turns, &steps, &world).await else {
        return;
    };
    assert!(
        ours.entries
            .contains(&"compaction \"Custom summary: greeted twice.\"".to_string()),
        "{:?}",
        ours.entries
    );
    // The summary request went to the extension's model, with its prompt.
    let asked = ours.bodies[2].to_string();
    assert!(asked.contains("gemini-2.5-flash"), "{asked}");
    assert!(asked.contains("conversation summarizer"), "{asked}");
}

#[tokio::test]
async fn tools_registered_while_pi_runs_are_offered_as_in_pi_1_6() {
    let turns = vec![
        Turn::tools(&[
            ("echo_session", json!({"message": "one"})),
            ("echo_extra", json!({"message": "two"})),
        ]),
        Turn::text("echoed"),
    ];
    let steps = [step("/add-echo-tool echo_extra"), step("echo both")];
    let Some(ours) = same_in_both("dynamic-tools.ts", turns, &steps, &|_| {}).await else {
        return;
    };
    assert!(
        ours.steps[1].contains(&"tool echo_session error=false [session] one".to_string()),
        "{:?}",
        ours.steps[1]
    );
    assert!(
        ours.steps[1].contains(&"tool echo_extra error=false [echo_extra] two".to_string()),
        "{:?}",
        ours.steps[1]
    );
}

#[tokio::test]
async fn prompt_sections_an_extension_edits_reach_the_model_as_in_pi_1_6() {
    let turns = vec![Turn::text("ok")];
    let Some(ours) = same_in_both("prompt-customizer.ts", turns, &[step("hi")], &|_| {}).await
    else {
        return;
    };
    let system = wire::system_text(&ours.bodies[0]);
    assert!(
        system.contains("- Use `read` for file contents; it supports text and images."),
        "{system}"
    );
}

/// Examples whose interesting part is pi's own screen (or a host pi 1.6's RPC mode does not
/// serve either): loaded unchanged, through one exchange with a tool call, a user sees in RPC
/// mode what pi 1.6.0 shows.
const SMOKE: &[&str] = &[
    "auto-commit-on-exit.ts",
    "border-status-editor.ts",
    "built-in-tool-renderer.ts",
    "custom-footer.ts",
    "custom-header.ts",
    "debug-provider.ts",
    "entry-renderer.ts",
    "git-checkpoint.ts",
    "github-issue-autocomplete.ts",
    "hidden-thinking-label.ts",
    "input-transform-streaming.ts",
    "interactive-shell.ts",
    "mac-system-theme.ts",
    "message-renderer.ts",
    "minimal-mode.ts",
    "modal-editor.ts",
    "notify.ts",
    "overlay-qa-tests.ts",
    "overlay-test.ts",
    "plan-mode",
    "preset.ts",
    "provider-payload.ts",
    "questionnaire.ts",
    "rainbow-editor.ts",
    "reload-runtime.ts",
    "shutdown-command.ts",
    "snake.ts",
    "space-invaders.ts",
    "summarize.ts",
    "tic-tac-toe.ts",
    "tools.ts",
    "truncated-tool.ts",
    "working-indicator.ts",
    "working-message-test.ts",
    "commands.ts",
    "doom-overlay",
    "git-merge-and-resolve.ts",
    "dynamic-resources",
    "handoff.ts",
    "qna.ts",
    "custom-compaction.ts",
    "event-bus.ts",
    "file-trigger.ts",
    "jev-router.ts",
    "subagent",
    "with-deps",
    "project-trust.ts",
];

/// Runs each of `names` through one exchange with a tool call in both programs and says which
/// differ.
async fn smoke(names: &[&str]) {
    if !harness::bridge_ready() {
        return;
    }
    let Some(ts) = crate::common::ts_pi::TsPi::find_v1_6() else {
        return;
    };
    let mut differ = Vec::new();
    for name in names {
        let turns = vec![
            Turn::tools(&[("bash", json!({"command": "echo hi"}))]),
            Turn::text("done"),
        ];
        let path = harness::example(name);
        let world = World {
            prepare: &|_| {},
            inspect: &|_| Vec::new(),
        };
        let steps = [step("say hi")];
        let theirs =
            harness::observe(harness::Who::Ts(&ts), &path, turns.clone(), &steps, &world).await;
        let ours = harness::observe(harness::Who::Ours, &path, turns, &steps, &world).await;
        if ours.steps != theirs.steps || ours.entries != theirs.entries {
            differ.push(format!(
                "{name}:\n  ours: {:?}\n  pi 1.6.0: {:?}",
                ours.steps, theirs.steps
            ));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

#[tokio::test]
async fn examples_load_and_an_exchange_looks_the_same_as_in_pi_1_6_a() {
    smoke(&SMOKE[..12]).await;
}

#[tokio::test]
async fn examples_load_and_an_exchange_looks_the_same_as_in_pi_1_6_b() {
    smoke(&SMOKE[12..24]).await;
}

#[tokio::test]
async fn examples_load_and_an_exchange_looks_the_same_as_in_pi_1_6_c() {
    smoke(&SMOKE[24..36]).await;
}

#[tokio::test]
async fn examples_load_and_an_exchange_looks_the_same_as_in_pi_1_6_d() {
    smoke(&SMOKE[36..]).await;
}

#[tokio::test]
async fn a_spinner_in_the_title_turns_while_the_agent_works_as_in_pi_1_6() {
    let turns = vec![
        Turn::tools(&[("bash", json!({"command": "sleep 0.6"}))]),
        Turn::text("done"),
    ];
    let Some(ours) = same_in_both_titles("titlebar-spinner.ts", turns).await else {
        return;
    };
    assert!(
        ours.contains(&"ui setTitle {\"title\":\"⠋ π - project\"}".to_string()),
        "{ours:?}"
    );
}

/// The first two distinct titles a run set and the last: how many frames a spinner shows is a
/// matter of timing; that it starts from the base title, turns, and stops on it are not.
async fn same_in_both_titles(extension: &str, turns: Vec<Turn>) -> Option<Vec<String>> {
    if !harness::bridge_ready() {
        return None;
    }
    let ts = crate::common::ts_pi::TsPi::find_v1_6()?;
    let path = harness::example(extension);
    let world = World {
        prepare: &|_| {},
        inspect: &|_| Vec::new(),
    };
    let steps = [step("work")];
    let titles = |o: &harness::Observed| {
        let all: Vec<String> = o.steps[0]
            .iter()
            .filter(|s| s.starts_with("ui setTitle"))
            .cloned()
            .collect();
        let mut seen: Vec<String> = Vec::new();
        for t in &all {
            if !seen.contains(t) {
                seen.push(t.clone());
            }
        }
        seen.truncate(2);
        seen.extend(all.last().cloned());
        seen
    };
    let theirs = titles(
        &harness::observe(harness::Who::Ts(&ts), &path, turns.clone(), &steps, &world).await,
    );
    let ours = titles(&harness::observe(harness::Who::Ours, &path, turns, &steps, &world).await);
    assert_eq!(ours, theirs, "{extension}: titles differ");
    Some(ours)
}

#[tokio::test]
async fn the_system_prompt_an_extension_reads_is_the_one_the_model_gets() {
    if !harness::bridge_ready() {
        return;
    }
    let turns = vec![Turn::text("ok")];
    let mock = crate::common::MockModel::start(turns).await;
    let agent = crate::common::TestAgent::with_mock(&mock);
    let ext = crate::common::path_str(&harness::example("system-prompt-header.ts"));
    let mut rpc = agent.rpc(&[
        "--provider",
        "mock",
        "--model",
        "mock-model",
        "-e",
        ext.as_str(),
    ]);
    rpc.send(json!({"type": "prompt", "id": "p", "message": "hi"}))
        .await;
    // The status comes from an `agent_start` handler, fire-and-forget: before or after the run ends.
    let (mut status, mut ended) = (None, false);
    while status.is_none() || !ended {
        let v = rpc.next().await;
        ended |= v["type"] == "agent_end";
        if v["type"] == "extension_ui_request" && v["statusKey"] == "system-prompt" {
            status = Some(v);
        }
    }
    let status = status.unwrap_or_default();
    rpc.close().await;
    let chars = wire::system_text(&mock.bodies()[0]).chars().count();
    // pi 1.6.0 counts its own prompt, which is not ours word for word (prompt_reference.rs).
    assert_eq!(
        status["statusText"],
        format!("System: {chars} chars"),
        "{status}"
    );
}
