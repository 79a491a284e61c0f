//! The scripted conversations with TypeScript pi 1.6 whose transcripts become the fixtures.
//! Each starts a fresh mock model and hermetic agent, drives `--mode rpc`, closes stdin (or
//! watches the process die) and returns the normalised transcript. Live-only facts that a
//! transcript cannot show (what reached the model) are asserted here. The same scripts drive
//! our `pi` ([`Program::Ours`]), so `rpc_mode.rs` can compare its transcripts with the
//! fixtures.

use serde_json::{json, Value};

use super::normalise::Normaliser;
use crate::common::ts_pi::{RpcProcess, Step, TsPi};

/// The program a scenario drives.
#[derive(Clone, Copy)]
pub enum Program<'a> {
    /// TypeScript pi 1.6 (recording the reference).
    Ts(&'a TsPi),
    /// Our `pi`.
    Ours,
}

impl Program<'_> {
    pub fn rpc(&self, agent: &TestAgent, args: &[&str]) -> RpcProcess {
        match self {
            Program::Ts(ts) => ts.rpc(agent, args),
            Program::Ours => agent.rpc(args),
        }
    }

    /// Paths of the program that show up in what it says.
    fn own_paths(&self) -> Vec<(String, &'static str)> {
        match self {
            Program::Ts(ts) => vec![(path_str(&ts.package_dir), "TS_PI")],
            Program::Ours => Vec::new(),
        }
    }
}
use crate::common::{path_str, wire, MockModel, TestAgent, Turn};

/// One scenario's world: the mock, the agent dir, and the running TypeScript pi.
struct World {
    mock: MockModel,
    /// Held so its temporary directories outlive the process.
    _agent: TestAgent,
    rpc: RpcProcess,
    norm: Normaliser,
}

impl World {
    async fn start(
        ts: &Program<'_>,
        turns: Vec<Turn>,
        prepare: impl FnOnce(&TestAgent, &MockModel),
    ) -> World {
        Self::start_with(ts, turns, prepare, &[]).await
    }

    /// [`World::start`] with more arguments on the command line.
    async fn start_with(
        ts: &Program<'_>,
        turns: Vec<Turn>,
        prepare: impl FnOnce(&TestAgent, &MockModel),
        extra: &[&str],
    ) -> World {
        let mock = MockModel::start(turns).await;
        let agent = TestAgent::with_mock(&mock);
        prepare(&agent, &mock);
        let mut args = vec!["--provider", "mock", "--model", "mock-model"];
        args.extend_from_slice(extra);
        let rpc = ts.rpc(&agent, &args);
        let mut literals = vec![
            (path_str(&agent.agent_dir), "AGENT_DIR"),
            (path_str(&agent.cwd), "CWD"),
            (path_str(&agent.home), "HOME"),
            (path_str(&agent.tmp), "TMP"),
            (mock.uri(), "MOCK"),
        ];
        literals.extend(ts.own_paths());
        let norm = Normaliser::new(&literals);
        World {
            mock,
            _agent: agent,
            rpc,
            norm,
        }
    }

    /// Close stdin, wait for exit 0, and return the normalised transcript.
    async fn finish(mut self) -> Vec<Step> {
        let code = self.rpc.close().await;
        assert_eq!(
            code,
            Some(0),
            "stdin EOF must end RPC mode with 0:\n{}",
            self.rpc.tail()
        );
        self.norm.steps(&self.rpc.transcript)
    }
}

/// A prompt whose answer makes one `bash` call, then the queries that read the result back.
pub async fn scripted_run(ts: &Program<'_>) -> Vec<Step> {
    let turns = vec![
        Turn::tools(&[("bash", json!({"command": "echo hi"}))]),
        Turn::text("All done."),
    ];
    let mut w = World::start(ts, turns, |_, _| {}).await;
    let r = &mut w.rpc;
    r.request(json!({"id": "state-0", "type": "get_state"}))
        .await;
    r.request(json!({"id": "run", "type": "prompt", "message": "run it"}))
        .await;
    r.event("agent_settled").await;
    r.request(json!({"id": "messages", "type": "get_messages"}))
        .await;
    let entries = r
        .request(json!({"id": "entries", "type": "get_entries"}))
        .await;
    let first = entries["data"]["entries"][0]["id"].clone();
    r.request(json!({"id": "entries-since", "type": "get_entries", "since": first}))
        .await;
    r.request(json!({"id": "entries-bad", "type": "get_entries", "since": "nope"}))
        .await;
    r.request(json!({"id": "tree", "type": "get_tree"})).await;
    r.request(json!({"id": "stats", "type": "get_session_stats"}))
        .await;
    r.request(json!({"id": "last", "type": "get_last_assistant_text"}))
        .await;
    r.request(json!({"id": "forkable", "type": "get_fork_messages"}))
        .await;
    r.request(json!({"id": "state-1", "type": "get_state"}))
        .await;
    assert_eq!(w.mock.pending(), 0, "both scripted turns were used");
    w.finish().await
}

/// Prompts while a tool runs: without `streamingBehavior` (refused), as steer and follow-up
/// (queued), the queue read and cleared, then abort.
pub async fn streaming(ts: &Program<'_>) -> Vec<Step> {
    // The call runs until aborted; the test never waits for it to end on its own.
    let turns = vec![Turn::tools(&[("bash", json!({"command": "sleep 60"}))])];
    let mut w = World::start(ts, turns, |_, _| {}).await;
    let r = &mut w.rpc;
    r.request(json!({"id": "start", "type": "prompt", "message": "start"}))
        .await;
    r.event("tool_execution_start").await;
    r.request(json!({"id": "plain", "type": "prompt", "message": "no behaviour"}))
        .await;
    r.request(
        json!({"id": "steer", "type": "prompt", "message": "steer me",
        "streamingBehavior": "steer"}),
    )
    .await;
    r.request(
        json!({"id": "follow", "type": "prompt", "message": "follow me",
        "streamingBehavior": "followUp"}),
    )
    .await;
    r.request(json!({"id": "steer-cmd", "type": "steer", "message": "steer again"}))
        .await;
    r.request(json!({"id": "follow-cmd", "type": "follow_up", "message": "follow again"}))
        .await;
    r.request(json!({"id": "state-busy", "type": "get_state"}))
        .await;
    r.request(json!({"id": "clear", "type": "clear_queue"}))
        .await;
    r.request(json!({"id": "abort", "type": "abort"})).await;
    r.request(json!({"id": "state-idle", "type": "get_state"}))
        .await;
    w.finish().await
}

/// Framing and envelope edge cases, ending with the line that kills TypeScript pi 1.6.
pub async fn framing(ts: &Program<'_>) -> Vec<Step> {
    let mut w = World::start(ts, vec![], |_, _| {}).await;
    let r = &mut w.rpc;
    let any_response = |v: &Value| v["type"] == "response";
    r.request(json!({"id": "unknown", "type": "frobnicate"}))
        .await;
    // Small raw writes are recorded as their text (LF left out), so the fixture can be replayed.
    for raw in [
        "{not json\n",
        "\n",
        "42\n",
        "{\"id\":\"no-type\"}\n",
        "{\"id\":7,\"type\":\"get_available_thinking_levels\"}\r\n",
    ] {
        r.send_raw(raw.as_bytes(), raw.trim_end_matches('\n')).await;
        r.until(any_response).await;
    }
    r.request(json!({"id": "separators", "type": "set_session_name",
        "name": "a\u{2028}b\u{2029}c"}))
        .await;
    let (first, rest) = (
        r#"{"id":"split","type":"get_av"#,
        "ailable_thinking_levels\"}\n",
    );
    r.send_raw(first.as_bytes(), first).await;
    // Nothing in pi signals that it read the first part; a pause makes a separate read likely.
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    r.send_raw(rest.as_bytes(), rest.trim_end_matches('\n'))
        .await;
    r.until(any_response).await;
    // TS pi has no line limit: a valid command over 64 MiB is simply answered. It assembles a
    // line by re-scanning its whole buffer on every read, so this one line costs it a minute of
    // CPU: it is sent only when recording (PI_RPC_RECORD=1) or when PI_RPC_BIG_LINE=1.
    if ["PI_RPC_RECORD", "PI_RPC_BIG_LINE"]
        .iter()
        .any(|k| std::env::var(k).is_ok_and(|v| v == "1"))
    {
        let pad = "x".repeat(64 * 1024 * 1024 + 1);
        let big = format!(r#"{{"id":"big","type":"get_available_thinking_levels","pad":"{pad}"}}"#);
        drop(pad);
        r.send_raw(
            format!("{big}\n").as_bytes(),
            r#"{"id":"big","type":"get_available_thinking_levels","pad":"<64 MiB + 1 bytes of x>"}"#,
        )
        .await;
        r.until(any_response).await;
    }
    r.request(json!({"id": "after", "type": "get_state"})).await;
    r.send_raw(b"null\n", "null").await;
    if let Program::Ours = ts {
        // Ours answers it and goes on.
        r.until(any_response).await;
        return w.finish().await;
    }
    let code = r.wait_exit().await;
    assert_ne!(
        code,
        Some(0),
        "TypeScript pi 1.6 dies on a `null` line:\n{}",
        r.tail()
    );
    w.norm.steps(&w.rpc.transcript)
}

/// Model and thinking-level commands over three models, one of them reasoning.
pub async fn models(ts: &Program<'_>) -> Vec<Step> {
    let mut w = World::start(ts, vec![], |agent, mock| {
        let mut models = mock.models_json();
        models["providers"]["mock"]["models"]
            .as_array_mut()
            .expect("models list")
            .push(json!({"id": "mock-reasoner", "reasoning": true}));
        agent.write_models(&models);
    })
    .await;
    let r = &mut w.rpc;
    r.request(json!({"id": "models", "type": "get_available_models"}))
        .await;
    r.request(
        json!({"id": "set", "type": "set_model", "provider": "mock-anthropic",
        "modelId": "mock-claude"}),
    )
    .await;
    r.request(
        json!({"id": "set-missing", "type": "set_model", "provider": "nope",
        "modelId": "x"}),
    )
    .await;
    r.request(json!({"id": "cycle", "type": "cycle_model"}))
        .await;
    r.request(json!({"id": "levels-plain", "type": "get_available_thinking_levels"}))
        .await;
    r.request(json!({"id": "cycle-level-plain", "type": "cycle_thinking_level"}))
        .await;
    r.request(
        json!({"id": "set-reasoner", "type": "set_model", "provider": "mock",
        "modelId": "mock-reasoner"}),
    )
    .await;
    r.request(json!({"id": "levels", "type": "get_available_thinking_levels"}))
        .await;
    r.request(json!({"id": "set-level", "type": "set_thinking_level", "level": "high"}))
        .await;
    r.request(json!({"id": "cycle-level", "type": "cycle_thinking_level"}))
        .await;
    r.request(json!({"id": "set-level-bogus", "type": "set_thinking_level", "level": "bogus"}))
        .await;
    r.request(json!({"id": "state", "type": "get_state"})).await;
    w.finish().await
}

/// Mode switches, idle aborts, commands from a prompt template and a skill, session names.
pub async fn settings(ts: &Program<'_>) -> Vec<Step> {
    let mut w = World::start(ts, vec![], |agent, _| {
        let write = |rel: &str, text: &str| {
            let p = agent.agent_dir.join(rel);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(p, text).expect("write");
        };
        write(
            "prompts/fix-tests.md",
            "---\ndescription: Fix failing tests\n---\nFix the failing tests.\n",
        );
        write(
            "skills/demo/SKILL.md",
            "---\nname: demo\ndescription: A demo skill\n---\nDo the demo.\n",
        );
    })
    .await;
    let r = &mut w.rpc;
    r.request(json!({"id": "commands", "type": "get_commands"}))
        .await;
    r.request(json!({"id": "steering", "type": "set_steering_mode", "mode": "all"}))
        .await;
    r.request(json!({"id": "follow-up", "type": "set_follow_up_mode", "mode": "all"}))
        .await;
    r.request(json!({"id": "steering-bogus", "type": "set_steering_mode", "mode": "bogus"}))
        .await;
    // TS pi stores the bogus mode as it is (get_state would report it); put a real one back.
    r.request(json!({"id": "steering-back", "type": "set_steering_mode", "mode": "all"}))
        .await;
    r.request(json!({"id": "auto-compaction", "type": "set_auto_compaction", "enabled": false}))
        .await;
    r.request(json!({"id": "auto-retry", "type": "set_auto_retry", "enabled": false}))
        .await;
    r.request(json!({"id": "abort-retry", "type": "abort_retry"}))
        .await;
    r.request(json!({"id": "abort", "type": "abort"})).await;
    r.request(json!({"id": "abort-bash", "type": "abort_bash"}))
        .await;
    r.request(json!({"id": "clear", "type": "clear_queue"}))
        .await;
    r.request(json!({"id": "name-empty", "type": "set_session_name", "name": "  "}))
        .await;
    r.request(json!({"id": "name", "type": "set_session_name", "name": "my work"}))
        .await;
    r.request(json!({"id": "last", "type": "get_last_assistant_text"}))
        .await;
    r.request(json!({"id": "state", "type": "get_state"})).await;
    w.finish().await
}

/// `bash` with and without output and failure; its output reaches the model with the next
/// prompt.
pub async fn bash(ts: &Program<'_>) -> Vec<Step> {
    let mut w = World::start(ts, vec![Turn::text("I saw it.")], |_, _| {}).await;
    let r = &mut w.rpc;
    r.request(json!({"id": "two-lines", "type": "bash", "command": "printf 'one\\ntwo\\n'"}))
        .await;
    r.request(json!({"id": "fails", "type": "bash", "command": "echo oops >&2; exit 3"}))
        .await;
    r.request(
        json!({"id": "hidden", "type": "bash", "command": "echo secret",
        "excludeFromContext": true}),
    )
    .await;
    r.request(json!({"id": "ask", "type": "prompt", "message": "what ran?"}))
        .await;
    r.event("agent_settled").await;
    r.request(json!({"id": "messages", "type": "get_messages"}))
        .await;
    let bodies = w.mock.bodies();
    let users: Vec<String> = wire::messages(&bodies[0])
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| wire::content_text(&m["content"]))
        .collect();
    let all = users.join("\n");
    assert!(
        all.contains("Ran `printf 'one\\ntwo\\n'`") && all.contains("one\ntwo"),
        "{all}"
    );
    assert!(all.contains("exit 3") || all.contains("oops"), "{all}");
    assert!(
        !all.contains("secret"),
        "excludeFromContext output reached the model: {all}"
    );
    w.finish().await
}

/// Compaction, fork, clone and new session, with their failures on an unsaved session.
pub async fn session_ops(ts: &Program<'_>) -> Vec<Step> {
    let turns = vec![
        Turn::text("first answer"),
        Turn::text("second answer"),
        Turn::text("SUMMARY"),
        Turn::text("TURN CONTEXT"),
    ];
    let mut w = World::start(ts, turns, |agent, _| {
        // Keep nothing verbatim, so a two-exchange session has something to compact.
        agent.write_settings(&json!({"compaction": {"keepRecentTokens": 1}}));
    })
    .await;
    let r = &mut w.rpc;
    r.request(json!({"id": "clone-unsaved", "type": "clone"}))
        .await;
    r.request(json!({"id": "compact-empty", "type": "compact"}))
        .await;
    for (id, text) in [("one", "one"), ("two", "two")] {
        r.request(json!({"id": id, "type": "prompt", "message": text}))
            .await;
        r.event("agent_settled").await;
    }
    r.request(json!({"id": "compact", "type": "compact", "customInstructions": "be brief"}))
        .await;
    let forkable = r
        .request(json!({"id": "forkable", "type": "get_fork_messages"}))
        .await;
    let first = forkable["data"]["messages"][0]["entryId"].clone();
    r.request(json!({"id": "fork", "type": "fork", "entryId": first}))
        .await;
    r.request(json!({"id": "fork-bad", "type": "fork", "entryId": "nope"}))
        .await;
    r.request(json!({"id": "state-forked", "type": "get_state"}))
        .await;
    r.request(json!({"id": "clone", "type": "clone"})).await;
    r.request(json!({"id": "new", "type": "new_session"})).await;
    r.request(json!({"id": "state-new", "type": "get_state"}))
        .await;
    w.finish().await
}

/// The extension UI sub-protocol, driven by a TypeScript extension command that calls every
/// `ctx.ui` method RPC supports.
pub async fn extension_ui(ts: &TsPi) -> Vec<Step> {
    let ext = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/rpc/ts-ui-demo-extension.ts");
    let mock = MockModel::start(vec![]).await;
    let agent = TestAgent::with_mock(&mock);
    let rpc = ts.rpc(
        &agent,
        &[
            "--provider",
            "mock",
            "--model",
            "mock-model",
            "-e",
            &path_str(&ext),
        ],
    );
    let norm = Normaliser::new(&[
        (path_str(&agent.agent_dir), "AGENT_DIR"),
        (path_str(&agent.cwd), "CWD"),
        (path_str(&ext), "EXTENSION"),
        (path_str(&ts.package_dir), "TS_PI"),
        (mock.uri(), "MOCK"),
    ]);
    let mut w = World {
        mock,
        _agent: agent,
        rpc,
        norm,
    };
    let r = &mut w.rpc;
    r.request(json!({"id": "commands", "type": "get_commands"}))
        .await;
    r.send(json!({"id": "demo", "type": "prompt", "message": "/ui-demo"}))
        .await;
    let dialog = |method: &'static str| {
        move |v: &Value| v["type"] == "extension_ui_request" && v["method"] == method
    };
    let select = r.until(dialog("select")).await;
    r.send(json!({"type": "extension_ui_response", "id": select["id"], "value": "b"}))
        .await;
    let confirm = r.until(dialog("confirm")).await;
    r.send(json!({"type": "extension_ui_response", "id": confirm["id"], "confirmed": true}))
        .await;
    let input = r.until(dialog("input")).await;
    r.send(json!({"type": "extension_ui_response", "id": input["id"], "cancelled": true}))
        .await;
    let editor = r.until(dialog("editor")).await;
    r.send(json!({"type": "extension_ui_response", "id": editor["id"], "value": "edited"}))
        .await;
    // The second select has a 50 ms timeout and is never answered.
    r.until(dialog("select")).await;
    // The prompt's response comes whenever pi's preflight is done; `finish` collects it if the
    // notifications came first.
    r.until(|v| {
        v["method"] == "notify" && v["message"].as_str().is_some_and(|m| m.starts_with("done"))
    })
    .await;
    w.finish().await
}

/// The whole-scenario conversation: a prompt whose answer runs a tool once the client has
/// confirmed it in a hook's dialog (pi 1.6: an extension's `ctx.ui.confirm`), a model switch,
/// compaction, the session's stats, an HTML export, a new session and the state after it.
pub async fn whole(ts: &Program<'_>) -> Vec<Step> {
    let turns = vec![
        Turn::tools(&[("bash", json!({"command": "echo hi"}))]),
        Turn::text("All done."),
        Turn::text("SUMMARY"),
        Turn::text("TURN CONTEXT"),
    ];
    // The dialog: pi 1.6's extension, or our hook, asks to confirm the tool call.
    let ext = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/rpc/ts-confirm-extension.ts");
    let ext = path_str(&ext);
    let extra: Vec<&str> = match ts {
        Program::Ts(_) => vec!["-e", &ext],
        Program::Ours => Vec::new(),
    };
    let ours = matches!(ts, Program::Ours);
    let mut w = World::start_with(
        ts,
        turns,
        |agent, _| {
            // Keep nothing verbatim, so the one exchange has something to compact.
            let mut settings = json!({"compaction": {"keepRecentTokens": 1}});
            if ours {
                settings["hooks"] = json!([{
                    "command": format!("python3 {}", crate::common::hooks::fixture("ui_dialogs.py")),
                    "name": "ui-dialogs",
                    "config": {"gate": "confirm"},
                    "timeout_ms": 3000,
                    "start_timeout_ms": 5000,
                }]);
            }
            agent.write_settings(&settings);
        },
        &extra,
    )
    .await;
    let r = &mut w.rpc;
    r.request(json!({"id": "run", "type": "prompt", "message": "run it"}))
        .await;
    let confirm = r
        .until(|v| v["type"] == "extension_ui_request" && v["method"] == "confirm")
        .await;
    r.send(json!({"type": "extension_ui_response", "id": confirm["id"], "confirmed": true}))
        .await;
    r.event("agent_settled").await;
    r.request(
        json!({"id": "set-model", "type": "set_model", "provider": "mock-anthropic",
        "modelId": "mock-claude"}),
    )
    .await;
    r.request(json!({"id": "compact", "type": "compact"})).await;
    r.request(json!({"id": "stats", "type": "get_session_stats"}))
        .await;
    r.request(json!({"id": "export", "type": "export_html"}))
        .await;
    r.request(json!({"id": "new", "type": "new_session"})).await;
    r.request(json!({"id": "state", "type": "get_state"})).await;
    w.finish().await
}
