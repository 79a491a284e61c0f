//! Session operations through the real binary and a real hook: compaction (cancelled by a
//! hook, summarized by a hook, summarized by the model, after a run past the threshold, and on
//! a context overflow with the turn retried), tree navigation with branch summaries and
//! labels, fork and clone. The hook (fixtures/hooks/it/session_ops.py) runs `/op METHOD JSON`
//! commands and records the session events it sees.

use serde_json::{json, Value};

use crate::common::hooks::fixture;
use crate::common::wire;
use crate::common::{MockModel, TestAgent, Turn};
use crate::sessions::session_files;

const MODEL: &str = "mock/mock-model";

/// The test hook with `config` (plus a record file), as the user's only hook.
fn use_ops_hook(agent: &TestAgent, config: Value) {
    let mut config = config;
    config["record"] = json!(record_path(agent).display().to_string());
    agent.write_settings(&json!({
        "compaction": {"enabled": true, "reserveTokens": 16384, "keepRecentTokens": 20},
        "hooks": [{
            "command": format!("python3 {}", fixture("session_ops.py")),
            "name": "session-ops",
            "config": config,
            "timeout_ms": 20000,
        }],
    }));
}

fn record_path(agent: &TestAgent) -> std::path::PathBuf {
    agent.agent_dir.parent().unwrap().join("ops-record.jsonl")
}

fn recorded(agent: &TestAgent, event: &str) -> Vec<Value> {
    std::fs::read_to_string(record_path(agent))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["event"] == event)
        .map(|v| v["payload"].clone())
        .collect()
}

fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn op(method: &str, params: Value) -> String {
    format!("/op {method} {params}")
}

/// Answers of `/op` commands, one JSON value per stdout line.
fn answers(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// A session of two exchanges, each prompt long enough that the first one can be compacted
/// away (keepRecentTokens is 20). Returns the file and the user/assistant entry ids in order.
async fn two_exchanges(agent: &TestAgent) -> (std::path::PathBuf, Vec<String>) {
    let q1 = format!("first question {}", "alpha ".repeat(30));
    let q2 = format!("second question {}", "beta ".repeat(30));
    agent
        .run(&["--model", MODEL, "-p", &q1, &q2])
        .await
        .assert_ok();
    let files = session_files(agent);
    assert_eq!(files.len(), 1);
    // The conversation's messages (the system message declaring the prompt left out).
    let ids = lines(&files[0])
        .iter()
        .filter(|l| l["type"] == "message" && l["message"]["role"] != "system")
        .map(|l| l["id"].as_str().unwrap().to_string())
        .collect();
    (files[0].clone(), ids)
}

fn path_str(p: &std::path::Path) -> String {
    p.display().to_string()
}

#[tokio::test]
async fn compaction_a_hook_cancels_one_a_hook_summarizes_and_one_the_model_summarizes() {
    let mock = MockModel::start(vec![
        Turn::text("A1"),
        Turn::text("A2"),
        Turn::text("A3"),
        Turn::text("## Goal\nMODEL SUMMARY"),
        Turn::text("A4"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    use_ops_hook(&agent, json!({"compact": "cancel"}));
    let (file, ids) = two_exchanges(&agent).await;
    let session = path_str(&file);

    let out = agent
        .run(&[
            "--session",
            &session,
            "-p",
            &op("session.compact", json!({})),
        ])
        .await;
    out.assert_ok();
    assert_eq!(
        answers(&out.stdout),
        vec![json!({"cancelled": true})],
        "{out}"
    );
    assert!(lines(&file).iter().all(|l| l["type"] != "compaction"));
    let asked = recorded(&agent, "session_before_compact");
    assert_eq!(asked.len(), 1);
    let prep = &asked[0]["preparation"];
    assert_eq!(
        prep["first_kept_entry_id"],
        json!(ids[2]),
        "the cut keeps the last exchange"
    );
    assert_eq!(asked[0]["reason"], "manual");
    assert_eq!(
        mock.requests().len(),
        2,
        "a cancelled compaction calls no model"
    );

    // A hook supplies the summary.
    use_ops_hook(
        &agent,
        json!({"compact": {"summary": "HOOK SUMMARY: the user asked two questions"}}),
    );
    let out = agent
        .run(&[
            "--session",
            &session,
            "-p",
            &op("session.compact", json!({})),
        ])
        .await;
    out.assert_ok();
    assert_eq!(answers(&out.stdout)[0]["cancelled"], false, "{out}");
    let compactions: Vec<Value> = lines(&file)
        .into_iter()
        .filter(|l| l["type"] == "compaction")
        .collect();
    assert_eq!(compactions.len(), 1);
    assert_eq!(compactions[0]["fromHook"], true);
    assert_eq!(compactions[0]["firstKeptEntryId"], json!(ids[2]));
    let notified = recorded(&agent, "session_compact");
    assert_eq!(notified[0]["from_extension"], true);
    assert_eq!(
        mock.requests().len(),
        2,
        "a supplied summary calls no model"
    );

    // The model summarizes when no hook answers (an update of the hook's summary, since a
    // compaction is on the path); the next turn sees only that summary and the kept exchange.
    use_ops_hook(&agent, json!({}));
    let q3 = format!("third question {}", "gamma ".repeat(30));
    let out = agent
        .run(&[
            "--session",
            &session,
            "-p",
            &q3,
            &op(
                "session.compact",
                json!({"custom_instructions": "keep names"}),
            ),
            "fourth",
        ])
        .await;
    out.assert_ok();
    let asked = wire::user_text(&mock.bodies()[3]);
    assert!(
        asked.contains("<previous-summary>\nHOOK SUMMARY"),
        "{asked}"
    );
    assert!(asked.contains("Additional focus: keep names"));
    assert!(
        asked.contains("second question"),
        "the exchange being summarized"
    );
    let last: Vec<Value> = lines(&file)
        .into_iter()
        .filter(|l| l["type"] == "compaction")
        .collect();
    assert_eq!(last.len(), 2);
    assert_eq!(last[1]["fromHook"], false);
    assert!(last[1]["summary"]
        .as_str()
        .unwrap()
        .starts_with("## Goal\nMODEL SUMMARY"));
    let turn = wire::conversation(&mock.bodies()[4]);
    assert!(turn.contains("MODEL SUMMARY"), "{turn}");
    assert!(turn.contains("third question"), "the kept exchange: {turn}");
    assert!(!turn.contains("second question"), "compacted away: {turn}");
    assert!(!turn.contains("first question"), "compacted away: {turn}");
}

#[tokio::test]
async fn threshold_compaction_runs_after_a_run_past_the_window() {
    let mock = MockModel::start(vec![
        Turn::text("A1"),
        Turn::text("A2"),
        Turn::text("THRESHOLD SUMMARY"),
    ])
    .await;
    let agent = TestAgent::new();
    let mut models = mock.models_json();
    // The mock reports 19 tokens per reply: past a 30-token window less a 20-token reserve.
    models["providers"]["mock"]["models"][0]["contextWindow"] = json!(30);
    agent.write_models(&models);
    agent.write_settings(
        &json!({"compaction": {"enabled": true, "reserveTokens": 20, "keepRecentTokens": 20}}),
    );
    let q1 = format!("first question {}", "alpha ".repeat(30));
    let q2 = format!("second question {}", "beta ".repeat(30));
    let out = agent
        .run(&["--model", MODEL, "--mode", "json", &q1, &q2])
        .await;
    out.assert_ok();
    // After the first run everything is recent: nothing to cut, no event. After the second,
    // the first exchange is summarized.
    let events = out.events();
    let starts: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "compaction_start")
        .collect();
    assert_eq!(starts.len(), 1, "{out}");
    assert_eq!(starts[0]["reason"], "threshold");
    let end = events
        .iter()
        .find(|e| e["type"] == "compaction_end")
        .unwrap();
    assert_eq!(end["aborted"], false);
    assert!(end["result"]["summary"]
        .as_str()
        .unwrap()
        .starts_with("THRESHOLD SUMMARY"));
    let files = session_files(&agent);
    assert!(lines(&files[0]).iter().any(|l| l["type"] == "compaction"));
}

#[tokio::test]
async fn context_overflow_compacts_and_retries_the_turn() {
    let mock = MockModel::start(vec![
        Turn::text("A1"),
        Turn::status(
            400,
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
        ),
        Turn::text("OVERFLOW SUMMARY"),
        Turn::text("answer after the retry"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    agent.write_settings(
        &json!({"compaction": {"enabled": true, "reserveTokens": 16384, "keepRecentTokens": 20}}),
    );
    let q1 = format!("first question {}", "alpha ".repeat(30));
    let q2 = format!("second question {}", "beta ".repeat(30));
    let out = agent.run(&["--model", MODEL, "-p", &q1, &q2]).await;
    out.assert_ok();
    assert_eq!(out.stdout, "answer after the retry\n", "{out}");
    let retry = wire::conversation(&mock.bodies()[3]);
    assert!(retry.contains("OVERFLOW SUMMARY"), "{retry}");
    assert!(retry.contains("second question"), "{retry}");
    assert!(!retry.contains("first question"), "{retry}");
    assert!(
        !retry.contains("maximum context length"),
        "the failed reply is not resent"
    );
}

#[tokio::test]
async fn tree_navigation_leaves_branch_summaries_and_labels() {
    let mock = MockModel::start(vec![
        Turn::text("A1"),
        Turn::text("A2"),
        Turn::text("A3 on the new branch"),
        Turn::text("MODEL BRANCH SUMMARY"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    use_ops_hook(&agent, json!({"tree_summary": "HOOK BRANCH SUMMARY"}));
    let (file, ids) = two_exchanges(&agent).await;
    let session = path_str(&file);
    let before = std::fs::read_to_string(&file).unwrap();

    // Back to the first answer with a hook-supplied summary of the abandoned exchange, a
    // label on it, then a new prompt on the new branch.
    let out = agent
        .run(&[
            "--session",
            &session,
            "-p",
            &op(
                "session.navigate_tree",
                json!({"entry_id": ids[1], "summarize": true}),
            ),
            &op(
                "session.set_label",
                json!({"entry_id": ids[1], "label": "checkpoint"}),
            ),
            "third",
            &op("session.get_tree", json!({})),
        ])
        .await;
    out.assert_ok();
    let a = answers(&out.stdout);
    assert_eq!(a[0]["cancelled"], false, "{out}");
    assert_eq!(a[0]["leaf_id"], json!(ids[1]));
    let all = lines(&file);
    assert!(
        std::fs::read_to_string(&file).unwrap().starts_with(&before),
        "append-only"
    );
    let summary = all.iter().find(|l| l["type"] == "branch_summary").unwrap();
    assert_eq!(summary["fromId"], json!(ids[1]));
    assert_eq!(summary["summary"], "HOOK BRANCH SUMMARY");
    assert_eq!(summary["fromHook"], true);
    let label = all.iter().find(|l| l["type"] == "label").unwrap();
    assert_eq!(
        (label["targetId"].clone(), label["label"].clone()),
        (json!(ids[1]), json!("checkpoint"))
    );
    let turn = wire::conversation(&mock.bodies()[2]);
    assert!(turn.contains("HOOK BRANCH SUMMARY"), "{turn}");
    assert!(
        !turn.contains("second question"),
        "the abandoned branch is gone: {turn}"
    );
    let tree = a.last().unwrap();
    let text = tree.to_string();
    assert!(text.contains("\"label\":\"checkpoint\""), "{text}");
    assert_ne!(
        tree["leaf_id"],
        json!(ids[1]),
        "the new prompt moved the leaf"
    );
    let moved = recorded(&agent, "session_tree");
    assert_eq!(moved[0]["old_leaf_id"], json!(ids[3]));
    assert_eq!(moved[0]["from_extension"], true);

    // Picking a user message moves to its parent and hands its text back; the model writes
    // the summary when no hook does.
    use_ops_hook(&agent, json!({}));
    let out = agent
        .run(&[
            "--session",
            &session,
            "-p",
            &op(
                "session.navigate_tree",
                json!({"entry_id": ids[2], "summarize": true}),
            ),
        ])
        .await;
    out.assert_ok();
    let a = answers(&out.stdout);
    assert!(
        a[0]["editor_text"]
            .as_str()
            .unwrap()
            .starts_with("second question"),
        "{out}"
    );
    assert_eq!(a[0]["leaf_id"], json!(ids[1]));
    let summaries: Vec<Value> = lines(&file)
        .into_iter()
        .filter(|l| l["type"] == "branch_summary")
        .collect();
    assert_eq!(summaries.len(), 2);
    // pi 1.6's preamble, then the model's summary.
    assert!(summaries[1]["summary"].as_str().unwrap().starts_with(
        "The user explored a different conversation branch before returning here.\n\
         Summary of that exploration:\n\nMODEL BRANCH SUMMARY"
    ));
    assert!(wire::user_text(&mock.bodies()[3]).contains("A3 on the new branch"));
}

#[tokio::test]
async fn fork_and_clone_continue_in_new_files_and_a_hook_can_cancel() {
    let mock = MockModel::start(vec![
        Turn::text("A1"),
        Turn::text("A2"),
        Turn::text("A3 in the fork"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    use_ops_hook(&agent, json!({"fork": "cancel"}));
    let (file, ids) = two_exchanges(&agent).await;
    let session = path_str(&file);
    let original = std::fs::read(&file).unwrap();

    let out = agent
        .run(&[
            "--session",
            &session,
            "-p",
            &op("session.fork", json!({"entry_id": ids[2]})),
        ])
        .await;
    out.assert_ok();
    assert_eq!(
        answers(&out.stdout),
        vec![json!({"cancelled": true})],
        "{out}"
    );
    assert_eq!(session_files(&agent).len(), 1);

    use_ops_hook(&agent, json!({}));
    let out = agent
        .run(&[
            "--session",
            &session,
            "-p",
            &op("session.fork", json!({"entry_id": ids[2]})),
            "third",
            &op("session.clone", json!({})),
        ])
        .await;
    out.assert_ok();
    let a = answers(&out.stdout);
    assert!(
        a[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("second question"),
        "{out}"
    );
    let forked = std::path::PathBuf::from(a[0]["session_file"].as_str().unwrap());
    let cloned = std::path::PathBuf::from(a[1]["session_file"].as_str().unwrap());
    assert_eq!(
        std::fs::read(&file).unwrap(),
        original,
        "the source is untouched"
    );
    let f = lines(&forked);
    assert_eq!(f[0]["parentSession"], json!(session));
    let texts: Vec<String> = f
        .iter()
        .filter(|l| l["type"] == "message" && l["message"]["role"] != "system")
        .map(|l| wire::content_text(&l["message"]["content"]))
        .collect();
    assert_eq!(
        texts.len(),
        4,
        "first exchange, then the new one: {texts:?}"
    );
    assert!(texts[0].starts_with("first question"));
    assert_eq!(texts[2], "third");
    assert_eq!(texts[3], "A3 in the fork");
    let turn = wire::user_text(&mock.bodies()[2]);
    assert!(!turn.contains("second question"), "{turn}");
    // The clone copies the fork's whole active path.
    let c = lines(&cloned);
    assert_eq!(c[0]["parentSession"], json!(path_str(&forked)));
    // The system message, the first exchange and the fork's (the prompt declared once).
    assert_eq!(
        c.iter().filter(|l| l["type"] == "message").count(),
        5,
        "the whole path"
    );
    assert_eq!(
        f.iter()
            .filter(|l| l["message"]["role"] == "system")
            .count(),
        1,
        "the fork declares its prompt once"
    );
    let shutdowns = recorded(&agent, "session_shutdown");
    assert!(shutdowns.iter().any(|p| p["reason"] == "fork"));
    let starts = recorded(&agent, "session_start");
    assert!(starts
        .iter()
        .any(|p| p["reason"] == "fork" && p["previous_session_file"] == json!(session)));
}

#[tokio::test]
async fn new_and_switch_replace_the_session_unless_a_hook_cancels() {
    let mock = MockModel::start(vec![
        Turn::text("A1"),
        Turn::text("A2"),
        Turn::text("A3 alone"),
        Turn::text("A4 resumed"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    use_ops_hook(&agent, json!({"switch": "cancel"}));
    let (file, _) = two_exchanges(&agent).await;
    let session = path_str(&file);
    let out = agent
        .run(&["--session", &session, "-p", &op("session.new", json!({}))])
        .await;
    out.assert_ok();
    assert_eq!(
        answers(&out.stdout),
        vec![json!({"cancelled": true})],
        "{out}"
    );

    use_ops_hook(&agent, json!({}));
    let out = agent
        .run(&[
            "--session",
            &session,
            "-p",
            &op("session.new", json!({})),
            "third",
        ])
        .await;
    out.assert_ok();
    let fresh = answers(&out.stdout)[0]["session_file"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(fresh, session);
    let alone = wire::messages(&mock.bodies()[2]);
    assert_eq!(
        alone.iter().filter(|m| m["role"] == "user").count(),
        1,
        "a new session starts empty"
    );
    assert!(lines(std::path::Path::new(&fresh))
        .iter()
        .any(|l| l["message"]["content"][0]["text"] == "third"));

    // From a brand-new run, switch back into the first session and continue it there.
    let out = agent
        .run(&[
            "-p",
            &op("session.switch", json!({"session_file": session})),
            "fourth",
        ])
        .await;
    out.assert_ok();
    let resumed = wire::user_text(&mock.bodies()[3]);
    assert!(resumed.contains("second question"), "{resumed}");
    assert!(lines(&file)
        .iter()
        .any(|l| l["message"]["content"][0]["text"] == "fourth"));
    let asked = recorded(&agent, "session_before_switch");
    assert_eq!(asked.last().unwrap()["reason"], "resume");
    assert_eq!(asked.last().unwrap()["target_session_file"], json!(session));
}

#[tokio::test]
async fn a_hook_can_write_session_entries_from_session_start() {
    let mock = MockModel::start(vec![Turn::text("A1")]).await;
    let agent = TestAgent::with_mock(&mock);
    use_ops_hook(&agent, json!({"start_entry": true}));
    let out = agent.run(&["--model", MODEL, "-p", "hi"]).await;
    out.assert_ok();
    assert!(!out.stderr.contains("failed"), "{out}");
    let files = session_files(&agent);
    let custom: Vec<Value> = lines(&files[0])
        .into_iter()
        .filter(|l| l["type"] == "custom")
        .collect();
    assert_eq!(custom.len(), 1, "{out}");
    assert_eq!(custom[0]["customType"], "ops-start");
    assert_eq!(custom[0]["data"]["reason"], "startup");
}

#[tokio::test]
async fn a_hook_compaction_naming_an_unknown_entry_is_refused_and_nothing_is_written() {
    let mock = MockModel::start(vec![Turn::text("A1"), Turn::text("A2")]).await;
    let agent = TestAgent::with_mock(&mock);
    use_ops_hook(
        &agent,
        json!({"compact": {"summary": "S", "first_kept_entry_id": "nope0000"}}),
    );
    let (file, _) = two_exchanges(&agent).await;
    let before = std::fs::read(&file).unwrap();
    let out = agent
        .run(&[
            "--session",
            &path_str(&file),
            "-p",
            &op("session.compact", json!({})),
        ])
        .await;
    out.assert_ok();
    let a = answers(&out.stdout);
    assert_eq!(a[0]["error"]["code"], "failed", "{out}");
    assert!(a[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("\"nope0000\" is not in the session"));
    assert!(out.stderr.contains("Compaction failed"), "{out}");
    assert_eq!(std::fs::read(&file).unwrap(), before, "nothing was written");
}

/// `session_tree` is a notify: a hook that, as the protocol says, never replies to it must not
/// hold a tree move up until its deadline (it once was sent as an awaited notify).
#[tokio::test]
async fn session_tree_is_a_notify_that_a_silent_hook_does_not_hold_up() {
    let mock = MockModel::start(vec![Turn::text("A1"), Turn::text("A2")]).await;
    let agent = TestAgent::with_mock(&mock);
    use_ops_hook(&agent, json!({}));
    let (file, ids) = two_exchanges(&agent).await;
    let mut settings: Value = serde_json::from_str(
        &std::fs::read_to_string(agent.agent_dir.join("settings.json")).unwrap(),
    )
    .unwrap();
    settings["hooks"].as_array_mut().unwrap().push(json!({
        "command": format!("python3 {}", fixture("strict_host.py")),
        "name": "silent",
        "config": {
            "register": {"subscriptions": [{"event": "session_tree", "deadline_ms": 300}]},
            "on": {"session_tree": null},
        },
    }));
    agent.write_settings(&settings);
    let out = agent
        .run(&[
            "--session",
            &path_str(&file),
            "-p",
            &op("session.navigate_tree", json!({"entry_id": ids[1]})),
        ])
        .await;
    out.assert_ok();
    assert_eq!(answers(&out.stdout)[0]["cancelled"], false, "{out}");
    assert!(
        !out.stderr.contains("hook silent failed"),
        "the silent hook was waited for: {out}"
    );
    assert_eq!(recorded(&agent, "session_tree").len(), 1, "{out}");
}

/// As the seeds have it (pi's `prepareNextTurn`): a run of tool calls that passes the
/// threshold is compacted before its next model call, not only once the run has ended.
#[tokio::test]
async fn threshold_compaction_happens_between_the_turns_of_a_run() {
    let mock = MockModel::start(vec![
        Turn::text("A1"),
        Turn::tools(&[("bash", json!({"command": "echo one"}))]),
        Turn::text("BETWEEN TURNS SUMMARY"),
        Turn::text("TURN PREFIX SUMMARY"),
        Turn::text("done"),
    ])
    .await;
    let agent = TestAgent::new();
    let mut models = mock.models_json();
    // The mock reports 19 tokens per reply: past a 30-token window less a 20-token reserve.
    models["providers"]["mock"]["models"][0]["contextWindow"] = json!(30);
    agent.write_models(&models);
    agent.write_settings(
        &json!({"compaction": {"enabled": true, "reserveTokens": 20, "keepRecentTokens": 20}}),
    );
    let q1 = format!("first question {}", "alpha ".repeat(30));
    let q2 = format!("second question {}", "beta ".repeat(30));
    let out = agent
        .run(&["--model", MODEL, "--mode", "json", &q1, &q2])
        .await;
    out.assert_ok();
    let events = out.events();
    let start = events
        .iter()
        .position(|e| e["type"] == "compaction_start")
        .expect("a compaction");
    assert_eq!(events[start]["reason"], "threshold", "{out}");
    // Inside the second run: after its tool call's turn ended, before the next turn began.
    let second_run = events
        .iter()
        .enumerate()
        .filter(|(_, e)| e["type"] == "agent_start")
        .map(|(i, _)| i)
        .nth(1)
        .expect("two runs");
    let tool_turn_end = (second_run..events.len())
        .find(|&i| events[i]["type"] == "turn_end")
        .expect("the tool turn's end");
    let next_turn = (second_run..events.len())
        .find(|&i| events[i]["type"] == "turn_start" && i > tool_turn_end)
        .expect("the next turn");
    assert!(
        tool_turn_end < start && start < next_turn,
        "compaction at {start}, tool turn ended at {tool_turn_end}, next turn at {next_turn}\n{out}"
    );
    let bodies = mock.bodies();
    let last = bodies.last().expect("the last request");
    assert!(
        last.to_string().contains("SUMMARY"),
        "the next turn's request carries the summary: {last}"
    );
}
