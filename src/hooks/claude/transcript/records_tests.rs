use std::path::Path;

use serde_json::json;

use super::*;
use crate::hooks::claude::names::NoMcp;
use crate::message::{ToolCall, Usage, UserMessage};
use crate::session::{MessageEntry, Session};

/// A run with a `seq-think` MCP server.
struct SeqThink;

impl McpOrigins for SeqThink {
    fn origin(&self, pi_tool: &str) -> Option<(String, String)> {
        (pi_tool == "mcp__seq_think__think").then(|| ("seq-think".into(), "think".into()))
    }
}

fn view(mcp: &dyn McpOrigins) -> View<'_> {
    View {
        session_id: "s1",
        cwd: Path::new("/proj"),
        mcp,
    }
}

fn entry(id: &str, message: Message) -> Entry {
    let mut s = Session::in_memory("/proj");
    s.append_message(message).unwrap();
    let mut e = s.entries()[0].clone();
    e.id = id.to_string();
    e
}

fn reply(content: Vec<Content>, stop: StopReason) -> Message {
    let mut a = AssistantMessage::empty("anthropic-messages", "anthropic", "claude-x");
    a.content = content;
    a.stop_reason = stop;
    a.usage = Usage {
        input: 10,
        output: 5,
        cache_read: 100,
        cache_write: 7,
        total_tokens: 122,
        ..Usage::default()
    };
    Message::Assistant(a)
}

#[test]
fn an_assistant_message_is_one_record_per_block_with_claude_codes_names() {
    let msg = reply(
        vec![
            Content::Thinking {
                thinking: "hmm".into(),
                signature: None,
            },
            Content::text("Reading it."),
            Content::ToolCall(ToolCall {
                thought_signature: None,
                id: "c1".into(),
                name: "read".into(),
                arguments: json!({"path": "src/a.rs"}),
            }),
            Content::ToolCall(ToolCall {
                thought_signature: None,
                id: "c2".into(),
                name: "mcp__seq_think__think".into(),
                arguments: json!({"thought": "x"}),
            }),
        ],
        StopReason::ToolUse,
    );
    let recs = records(&view(&SeqThink), &entry("e1", msg), Some("p0"));
    assert_eq!(recs.len(), 4);
    let blocks: Vec<_> = recs.iter().map(|r| &r["message"]["content"][0]).collect();
    assert_eq!(
        blocks[0],
        &json!({"type": "thinking", "thinking": "hmm", "signature": ""})
    );
    assert_eq!(blocks[1], &json!({"type": "text", "text": "Reading it."}));
    assert_eq!(
        blocks[2],
        &json!({"type": "tool_use", "id": "c1", "name": "Read",
                "input": {"file_path": "/proj/src/a.rs"}})
    );
    assert_eq!(blocks[3]["name"], "mcp__seq-think__think");
    let id = &recs[0]["message"]["id"];
    for r in &recs {
        assert_eq!(r["type"], "assistant");
        assert_eq!(&r["message"]["id"], id, "one message, several records");
        assert_eq!(r["message"]["role"], "assistant");
        assert_eq!(r["message"]["model"], "claude-x");
        assert_eq!(r["message"]["stop_reason"], "tool_use");
        assert_eq!(
            r["message"]["usage"],
            json!({"input_tokens": 10, "output_tokens": 5,
                   "cache_read_input_tokens": 100, "cache_creation_input_tokens": 7})
        );
        assert_eq!(r["sessionId"], "s1");
        assert_eq!(r["cwd"], "/proj");
        assert_eq!(r["isSidechain"], false);
    }
    assert_eq!(recs[0]["parentUuid"], "p0");
    for pair in recs.windows(2) {
        assert_eq!(pair[1]["parentUuid"], pair[0]["uuid"]);
    }
    // The same entry gives the same ids when the transcript is written again.
    let again = records(
        &view(&SeqThink),
        &entry("e1", reply(vec![Content::text("a")], StopReason::Stop)),
        None,
    );
    assert_eq!(again[0]["uuid"], recs[0]["uuid"]);
    assert_eq!(again[0]["message"]["stop_reason"], "end_turn");
}

#[test]
fn prompts_and_results_are_user_records() {
    let prompt = records(&view(&NoMcp), &entry("u1", Message::user("hi")), None);
    assert_eq!(prompt.len(), 1);
    assert_eq!(prompt[0]["type"], "user");
    assert_eq!(prompt[0]["parentUuid"], serde_json::Value::Null);
    assert_eq!(
        prompt[0]["message"],
        json!({"role": "user", "content": "hi"})
    );
    assert!(prompt[0]["timestamp"].as_str().unwrap().ends_with('Z'));

    let result = Message::ToolResult(ToolResultMessage {
        tool_call_id: "c1".into(),
        tool_name: "bash".into(),
        content: vec![Content::text("out")],
        details: None,
        is_error: true,
        structured_content: None,
        usage: None,
        duration_ms: None,
        timestamp: 0,
    });
    let r = records(&view(&NoMcp), &entry("r1", result), None);
    assert_eq!(
        r[0]["message"],
        json!({"role": "user", "content": [{"tool_use_id": "c1", "type": "tool_result",
               "content": "out", "is_error": true}]})
    );

    let image = Message::User(UserMessage {
        content: UserContent::Blocks(vec![
            Content::text("see"),
            Content::Image {
                data: "AAAA".into(),
                mime_type: "image/png".into(),
            },
        ]),
        timestamp: 0,
    });
    let i = records(&view(&NoMcp), &entry("i1", image), None);
    assert_eq!(
        i[0]["message"]["content"][1],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}})
    );
}

#[test]
fn a_failed_request_is_recorded_as_claude_codes_api_error_and_other_entries_write_nothing() {
    let mut a = AssistantMessage::empty("x", "x", "m");
    a.stop_reason = StopReason::Error;
    a.error_message = Some("overloaded".into());
    let r = records(&view(&NoMcp), &entry("a1", Message::Assistant(a)), None);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0]["isApiErrorMessage"], true);
    assert_eq!(
        r[0]["message"]["content"][0]["text"],
        "API Error: overloaded"
    );

    let mut s = Session::in_memory("/proj");
    s.append_model_change("p", "m").unwrap();
    let first = s.entries()[0].id.clone();
    s.append_label(&first, Some("x")).unwrap();
    for e in s.entries() {
        assert!(records(&view(&NoMcp), e, None).is_empty(), "{e:?}");
    }
    let raw = Entry {
        kind: EntryKind::Message(MessageEntry {
            message: AgentMessage::Raw(json!({"role": "bashExecution", "command": "ls"})),
            extra: Default::default(),
        }),
        ..s.entries()[0].clone()
    };
    assert!(records(&view(&NoMcp), &raw, None).is_empty());
}
