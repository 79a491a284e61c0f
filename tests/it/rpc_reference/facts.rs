//! The facts each scenario pins, checked on the live run and on its fixture.

use serde_json::{json, Value};

use super::scenarios::{self, Program};
use super::*;

/// Runs `check` on every transcript of the scenario, after the checks every transcript gets.
async fn pin<F, Fut>(name: &str, record: F, check: impl Fn(&[Step]))
where
    F: FnOnce(TsPi) -> Fut,
    Fut: std::future::Future<Output = Vec<Step>>,
{
    for (what, steps) in transcripts(name, record).await {
        assert_fits_protocol_types(&what, &steps);
        check(&steps);
    }
}

const STATE_KEYS: [&str; 11] = [
    "model",
    "thinkingLevel",
    "isStreaming",
    "isCompacting",
    "steeringMode",
    "followUpMode",
    "sessionFile",
    "sessionId",
    "autoCompactionEnabled",
    "messageCount",
    "pendingMessageCount",
];

/// The deltas of one `message_update` run, by `assistantMessageEvent.type`, folded like events.
fn delta_kinds(steps: &[Step]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for v in outs(steps).filter(|v| v["type"] == "message_update") {
        let k = v["assistantMessageEvent"]["type"]
            .as_str()
            .unwrap_or("?")
            .to_string();
        let k = if k.ends_with("_delta") {
            format!("{k}*")
        } else {
            k
        };
        if out.last() != Some(&k) || !k.ends_with('*') {
            out.push(k);
        }
    }
    out
}

#[tokio::test]
async fn scripted_run_with_one_tool_call() {
    pin(
        "scripted_run",
        |ts| async move { scenarios::scripted_run(&Program::Ts(&ts)).await },
        |s| {
            let state = ok_data(s, "state-0", "get_state");
            assert_keys(state, &STATE_KEYS, "get_state");
            assert_eq!(state["messageCount"], 0);
            assert_eq!(
                ok_data(s, "run", "prompt"),
                &json!({"disposition": "started"})
            );
            // The prompt is answered before its run starts, and the run ends settled.
            let order = event_run(s, |v| v["id"] == "run", "agent_settled");
            assert_eq!(
                order,
                [
                    "agent_start",
                    "turn_start",
                    "message_start",
                    "message_end", // the system prompt, a message in 1.6
                    "message_start",
                    "message_end", // the user's prompt
                    "message_start",
                    "message_update*",
                    "message_end", // the tool call
                    "tool_execution_start",
                    "tool_execution_update*",
                    "tool_execution_end",
                    "message_start",
                    "message_end", // the tool result
                    "turn_end",
                    "turn_start",
                    "message_start",
                    "message_update*",
                    "message_end", // the answer
                    "turn_end",
                    "agent_end",
                    "agent_settled",
                ]
            );
            let roles: Vec<&Value> = outs(s)
                .filter(|v| v["type"] == "message_start")
                .map(|v| &v["message"]["role"])
                .collect();
            assert_eq!(
                roles,
                ["system", "user", "assistant", "toolResult", "assistant"]
            );
            assert_eq!(
                delta_kinds(s),
                [
                    "toolcall_start",
                    "toolcall_delta*",
                    "toolcall_end",
                    "text_start",
                    "text_delta*",
                    "text_end"
                ]
            );
            let start = outs(s)
                .find(|v| v["assistantMessageEvent"]["type"] == "toolcall_start")
                .expect("toolcall_start");
            assert_keys(
                start,
                &["type", "usage", "assistantMessageEvent"],
                "message_update",
            );
            assert_keys(
                &start["assistantMessageEvent"],
                &["type", "contentIndex", "id", "toolName"],
                "toolcall_start",
            );
            let end = outs(s)
                .find(|v| v["type"] == "tool_execution_end")
                .expect("tool end");
            assert_keys(
                end,
                &[
                    "type",
                    "toolCallId",
                    "toolName",
                    "result",
                    "isError",
                    "durationMs",
                ],
                "tool_execution_end",
            );
            assert_eq!(
                outs(s)
                    .find(|v| v["type"] == "agent_end")
                    .expect("agent_end")["willRetry"],
                false
            );
            assert_eq!(
                outs(s)
                    .find(|v| v["type"] == "agent_settled")
                    .expect("settled"),
                &json!({"type": "agent_settled", "aborted": false})
            );

            assert_eq!(
                ok_data(s, "messages", "get_messages")["messages"]
                    .as_array()
                    .map(Vec::len),
                Some(5)
            );
            let entries = ok_data(s, "entries", "get_entries");
            assert_keys(entries, &["entries", "leafId"], "get_entries");
            let all = entries["entries"].as_array().expect("entries").len();
            let since = ok_data(s, "entries-since", "get_entries")["entries"]
                .as_array()
                .expect("entries")
                .len();
            assert_eq!(
                since + 1,
                all,
                "`since` returns the entries strictly after the cursor"
            );
            assert_eq!(
                err_text(s, "entries-bad", "get_entries"),
                "Entry not found: nope"
            );
            assert_keys(
                ok_data(s, "tree", "get_tree"),
                &["tree", "leafId"],
                "get_tree",
            );
            let stats = ok_data(s, "stats", "get_session_stats");
            assert_keys(
                stats,
                &[
                    "sessionFile",
                    "sessionId",
                    "userMessages",
                    "assistantMessages",
                    "toolCalls",
                    "toolResults",
                    "totalMessages",
                    "tokens",
                    "cost",
                    "contextUsage",
                ],
                "get_session_stats",
            );
            assert_keys(
                &stats["tokens"],
                &["input", "output", "cacheRead", "cacheWrite", "total"],
                "tokens",
            );
            assert_eq!(
                (
                    &stats["userMessages"],
                    &stats["assistantMessages"],
                    &stats["toolCalls"]
                ),
                (&json!(1), &json!(2), &json!(1))
            );
            assert_eq!(
                ok_data(s, "last", "get_last_assistant_text"),
                &json!({"text": "All done."})
            );
            assert_eq!(
                ok_data(s, "forkable", "get_fork_messages")["messages"][0]["text"],
                "run it"
            );
            assert_eq!(ok_data(s, "state-1", "get_state")["messageCount"], 5);
            assert_eq!(s.last(), Some(&Step::Exit(Some(0))));
        },
    )
    .await;
}

#[tokio::test]
async fn prompts_while_streaming_and_abort() {
    pin("streaming", |ts| async move { scenarios::streaming(&Program::Ts(&ts)).await }, |s| {
        assert_eq!(
            err_text(s, "plain", "prompt"),
            "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
        );
        for (id, command) in [("steer", "prompt"), ("follow", "prompt"), ("steer-cmd", "steer"), ("follow-cmd", "follow_up")] {
            assert_eq!(ok_data(s, id, command), &json!({"disposition": "queued"}), "{id}");
        }
        // Each queueing emits the whole queue before its response.
        let queues: Vec<&Value> = outs(s).filter(|v| v["type"] == "queue_update").collect();
        assert_eq!(queues.len(), 5, "{queues:?}");
        assert_eq!(queues[3], &json!({"type": "queue_update", "steering": ["steer me", "steer again"], "followUp": ["follow me", "follow again"]}));
        let busy = ok_data(s, "state-busy", "get_state");
        assert_eq!((&busy["isStreaming"], &busy["pendingMessageCount"]), (&json!(true), &json!(4)));
        assert_eq!(ok_data(s, "clear", "clear_queue"), &json!({"steering": ["steer me", "steer again"], "followUp": ["follow me", "follow again"]}));
        assert_eq!(queues[4], &json!({"type": "queue_update", "steering": [], "followUp": []}));
        // abort answers only once the run has settled, aborted.
        ok_empty(s, "abort", "abort");
        let tail = event_run(s, |v| v["id"] == "clear", "response");
        assert_eq!(tail.last().map(String::as_str), Some("response"));
        assert_eq!(tail[tail.len() - 2], "agent_settled", "{tail:?}");
        assert!(outs(s).any(|v| v == &json!({"type": "agent_settled", "aborted": true})));
        assert_eq!(ok_data(s, "state-idle", "get_state")["isStreaming"], false);
    })
    .await;
}

#[tokio::test]
async fn framing_and_envelope_edge_cases() {
    pin("framing", |ts| async move { scenarios::framing(&Program::Ts(&ts)).await }, |s| {
        assert_eq!(err_text(s, "unknown", "frobnicate"), "Unknown command: frobnicate");
        let answers: Vec<&Value> = outs(s).filter(|v| v["type"] == "response").collect();
        // Not JSON (including an empty line): `command: "parse"` and no id.
        for r in &answers[1..3] {
            assert_keys(r, &["type", "command", "success", "error"], "a parse error");
            assert_eq!(r["command"], "parse");
            assert!(r["error"].as_str().is_some_and(|e| e.starts_with("Failed to parse command: ")), "{r}");
        }
        // JSON without a string `type`: no `command` at all, the id kept.
        assert_eq!(answers[3], &json!({"type": "response", "success": false, "error": "Unknown command: undefined"}));
        assert_eq!(answers[4], &json!({"id": "no-type", "type": "response", "success": false, "error": "Unknown command: undefined"}));
        // A numeric id is echoed as a number; CRLF is accepted.
        assert_eq!(answers[5]["id"], 7);
        assert_eq!(answers[5]["success"], true);
        // U+2028/U+2029 travel inside strings, raw, both ways.
        assert!(outs(s).any(|v| v == &json!({"type": "session_info_changed", "name": "a\u{2028}b\u{2029}c"})));
        ok_empty(s, "separators", "set_session_name");
        ok_data(s, "split", "get_available_thinking_levels");
        // In the fixture always; live only when asked for (it costs TS pi a minute).
        if s.iter().any(|st| matches!(st, Step::InRaw(t) if t.contains("\"big\""))) {
            ok_data(s, "big", "get_available_thinking_levels");
        }
        assert_eq!(ok_data(s, "after", "get_state")["sessionName"], "a\u{2028}b\u{2029}c");
        // A `null` line kills TypeScript pi 1.6 (it reads `null.id`): ours must not copy this.
        assert_eq!(s.last(), Some(&Step::Exit(Some(1))));
    })
    .await;
}

#[tokio::test]
async fn model_and_thinking_commands() {
    pin(
        "models",
        |ts| async move { scenarios::models(&Program::Ts(&ts)).await },
        |s| {
            let models = ok_data(s, "models", "get_available_models")["models"]
                .as_array()
                .expect("models");
            assert_eq!(models.len(), 3);
            let model_keys = [
                "id",
                "name",
                "api",
                "provider",
                "baseUrl",
                "reasoning",
                "input",
                "cost",
                "contextWindow",
                "maxTokens",
            ];
            for m in models {
                assert_keys(m, &model_keys, "a model");
            }
            let set = ok_data(s, "set", "set_model");
            assert_eq!(
                (&set["provider"], &set["id"]),
                (&json!("mock-anthropic"), &json!("mock-claude"))
            );
            assert_eq!(
                err_text(s, "set-missing", "set_model"),
                "Model not found: nope/x"
            );
            assert_keys(
                ok_data(s, "cycle", "cycle_model"),
                &["model", "thinkingLevel", "isScoped"],
                "cycle_model",
            );
            assert_eq!(
                ok_data(s, "levels-plain", "get_available_thinking_levels"),
                &json!({"levels": ["off"]})
            );
            assert_eq!(
                ok_data(s, "cycle-level-plain", "cycle_thinking_level"),
                &Value::Null
            );
            assert_eq!(
                ok_data(s, "levels", "get_available_thinking_levels")["levels"][0],
                "off"
            );
            ok_empty(s, "set-level", "set_thinking_level");
            assert!(
                outs(s).any(|v| v == &json!({"type": "thinking_level_changed", "level": "high"}))
            );
            assert_keys(
                ok_data(s, "cycle-level", "cycle_thinking_level"),
                &["level"],
                "cycle_thinking_level",
            );
            // TS pi does not check the level: an unknown one is a success. Ours refuses it.
            ok_empty(s, "set-level-bogus", "set_thinking_level");
        },
    )
    .await;
}

#[tokio::test]
async fn settings_queue_and_naming_commands() {
    pin(
        "settings",
        |ts| async move { scenarios::settings(&Program::Ts(&ts)).await },
        |s| {
            let commands = ok_data(s, "commands", "get_commands")["commands"]
                .as_array()
                .expect("commands");
            for c in commands {
                assert_keys(
                    c,
                    &["name", "description", "source", "sourceInfo"],
                    "a command",
                );
            }
            let by_source = |src: &str| {
                commands
                    .iter()
                    .filter(|c| c["source"] == src)
                    .map(|c| c["name"].as_str().unwrap_or(""))
                    .collect::<Vec<_>>()
            };
            assert_eq!(by_source("prompt"), ["fix-tests"]);
            assert_eq!(by_source("skill"), ["skill:demo"]);
            for (id, command) in [
                ("steering", "set_steering_mode"),
                ("follow-up", "set_follow_up_mode"),
                ("steering-bogus", "set_steering_mode"),
                ("auto-compaction", "set_auto_compaction"),
                ("auto-retry", "set_auto_retry"),
                ("abort-retry", "abort_retry"),
                ("abort", "abort"),
                ("abort-bash", "abort_bash"),
                ("name", "set_session_name"),
            ] {
                ok_empty(s, id, command);
            }
            assert_eq!(
                ok_data(s, "clear", "clear_queue"),
                &json!({"steering": [], "followUp": []})
            );
            assert_eq!(
                err_text(s, "name-empty", "set_session_name"),
                "Session name cannot be empty"
            );
            // No assistant text yet: `{}`, not the documented `{"text": null}`.
            assert_eq!(ok_data(s, "last", "get_last_assistant_text"), &json!({}));
            let state = ok_data(s, "state", "get_state");
            let mut with_name = STATE_KEYS.to_vec();
            with_name.push("sessionName");
            assert_keys(state, &with_name, "get_state with a name");
            assert_eq!(
                (
                    &state["steeringMode"],
                    &state["followUpMode"],
                    &state["autoCompactionEnabled"],
                    &state["sessionName"]
                ),
                (
                    &json!("all"),
                    &json!("all"),
                    &json!(false),
                    &json!("my work")
                )
            );
        },
    )
    .await;
}

#[tokio::test]
async fn bash_command_and_its_context() {
    pin("bash", |ts| async move { scenarios::bash(&Program::Ts(&ts)).await }, |s| {
        assert_eq!(ok_data(s, "two-lines", "bash"), &json!({"output": "one\ntwo\n", "exitCode": 0, "cancelled": false, "truncated": false}));
        assert_eq!(ok_data(s, "fails", "bash")["exitCode"], 3);
        // Output streams as bash_execution_update events carrying the command's id.
        for id in ["two-lines", "fails", "hidden"] {
            let deltas: String = outs(s)
                .filter(|v| v["type"] == "bash_execution_update" && v["id"] == id)
                .map(|v| v["delta"].as_str().unwrap_or(""))
                .collect();
            assert_eq!(deltas, ok_data(s, id, "bash")["output"].as_str().unwrap_or("?"), "{id}");
        }
        let messages = ok_data(s, "messages", "get_messages")["messages"].as_array().expect("messages");
        let bash: Vec<&Value> = messages.iter().filter(|m| m["role"] == "bashExecution").collect();
        assert_eq!(bash.len(), 3, "each bash command is kept as a bashExecution message");
    })
    .await;
}

#[tokio::test]
async fn compaction_fork_clone_and_new_session() {
    pin("session_ops", |ts| async move { scenarios::session_ops(&Program::Ts(&ts)).await }, |s| {
        assert_eq!(err_text(s, "clone-unsaved", "clone"), "This session has not been saved yet. Send a message before cloning or forking it.");
        assert_eq!(err_text(s, "compact-empty", "compact"), "Nothing to compact (session too small)");
        let failed_end = outs(s).find(|v| v["type"] == "compaction_end").expect("compaction_end");
        assert_eq!(failed_end, &json!({"type": "compaction_end", "reason": "manual", "aborted": false,
            "willRetry": false, "errorMessage": "Compaction failed: Nothing to compact (session too small)"}));
        let compact = ok_data(s, "compact", "compact");
        assert_keys(compact, &["summary", "firstKeptEntryId", "tokensBefore", "estimatedTokensAfter", "usage", "details"], "compact");
        let ends: Vec<&Value> = outs(s).filter(|v| v["type"] == "compaction_end").collect();
        assert_eq!(&ends[1]["result"], compact, "compaction_end carries the same result");
        assert_eq!(ok_data(s, "fork", "fork"), &json!({"text": "one", "cancelled": false}));
        assert_eq!(err_text(s, "fork-bad", "fork"), "Invalid entry ID for forking");
        let forked = ok_data(s, "state-forked", "get_state");
        // Only the system prompt: a fork from the first prompt starts before it.
        assert_eq!(forked["messageCount"], 1);
        assert_eq!(ok_data(s, "new", "new_session"), &json!({"cancelled": false}));
        let fresh = ok_data(s, "state-new", "get_state");
        assert_ne!(fresh["sessionId"], forked["sessionId"]);
    })
    .await;
}

#[tokio::test]
async fn the_whole_scenario() {
    pin(
        "whole",
        |ts| async move { scenarios::whole(&Program::Ts(&ts)).await },
        |s| {
            assert_eq!(
                ok_data(s, "new", "new_session"),
                &json!({"cancelled": false})
            );
            let state = ok_data(s, "state", "get_state");
            // new_session returns to the command line's model, not the one set_model chose.
            assert_eq!(state["model"]["id"], "mock-model", "{state}");
            assert!(ok_data(s, "export", "export_html")["path"].is_string());
        },
    )
    .await;
}

#[tokio::test]
async fn extension_ui_sub_protocol() {
    pin(
        "extension_ui",
        |ts| async move { scenarios::extension_ui(&ts).await },
        |s| {
            let requests: Vec<&Value> = outs(s)
                .filter(|v| v["type"] == "extension_ui_request")
                .collect();
            let methods: Vec<&str> = requests
                .iter()
                .map(|v| v["method"].as_str().unwrap_or("?"))
                .collect();
            assert_eq!(
                methods,
                [
                    "select",
                    "confirm",
                    "input",
                    "editor",
                    "select",
                    "notify",
                    "notify",
                    "setStatus",
                    "setStatus",
                    "setWidget",
                    "setWidget",
                    "setWidget",
                    "setTitle",
                    "set_editor_text",
                    "notify"
                ]
            );
            assert_keys(
                requests[0],
                &["type", "id", "method", "title", "options", "timeout"],
                "select",
            );
            assert_keys(
                requests[1],
                &["type", "id", "method", "title", "message"],
                "confirm without a timeout",
            );
            // Answers arrive as the extension saw them; the unanswered 50 ms select timed out.
            assert_eq!(
                requests[5]["message"],
                "answers: picked=b ok=true typed=undefined edited=edited late=undefined"
            );
            assert_keys(
                requests[6],
                &["type", "id", "method", "message"],
                "notify without a type",
            );
            assert_keys(
                requests[8],
                &["type", "id", "method", "statusKey"],
                "a status cleared",
            );
            assert_keys(
                requests[11],
                &["type", "id", "method", "widgetKey"],
                "a widget cleared",
            );
            // An extension command is "handled": its response comes after the handler finished.
            assert_eq!(
                ok_data(s, "demo", "prompt"),
                &json!({"disposition": "handled"})
            );
            let after_done = event_run(
                s,
                |v| v["method"] == "notify" && v["message"] == "done",
                "response",
            );
            assert_eq!(after_done, ["response"]);
            let commands = ok_data(s, "commands", "get_commands")["commands"]
                .as_array()
                .expect("commands");
            assert!(
                commands
                    .iter()
                    .any(|c| c["name"] == "ui-demo" && c["source"] == "extension"),
                "{commands:?}"
            );
        },
    )
    .await;
}
