//! The JSON a Claude Code hook reads on stdin, built from pi's event payload: the common
//! fields (`session_id`, `transcript_path` — the Claude Code view of the session, `transcript` —,
//! `cwd`, `permission_mode`, `hook_event_name`) and each event's own, with tool names and
//! arguments in Claude Code's terms (`names`). Pure.

use std::path::Path;

use serde_json::{json, Map, Value};

use super::config::ClaudeEvent;
use super::names::{self, McpOrigins};

/// The session a hook runs in.
#[derive(Clone, Copy)]
pub struct Session<'a> {
    pub session_id: &'a str,
    /// The Claude Code transcript of the session (empty when none could be made).
    pub transcript_path: &'a str,
    pub cwd: &'a Path,
    /// pi's mode (`interactive`, `print`, `json`, `rpc`).
    pub mode: &'a str,
    /// Where the run's MCP tools come from, for their Claude Code names.
    pub mcp: &'a dyn McpOrigins,
}

/// The fields every event carries. pi has no permission modes; `default` is the one whose
/// meaning matches (tools run unless something stops them).
pub fn base(s: &Session, event: ClaudeEvent) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("session_id".into(), json!(s.session_id));
    m.insert("transcript_path".into(), json!(s.transcript_path));
    m.insert("cwd".into(), json!(s.cwd.display().to_string()));
    m.insert("permission_mode".into(), json!("default"));
    m.insert("hook_event_name".into(), json!(event.name()));
    m
}

/// PreToolUse and PermissionRequest (`payload` is `tool_call`'s), PostToolUse and
/// PostToolUseFailure (`tool_result`'s, or a blocked call's): the Claude Code tool name (what
/// the matcher tests) and the stdin. A failure carries the `error` (the result's text), not a
/// `tool_response`; a permission request has no `tool_use_id` (Claude Code's has none).
pub fn tool_event(s: &Session, event: ClaudeEvent, payload: &Value) -> (String, Value) {
    let pi_tool = payload["tool_name"].as_str().unwrap_or_default();
    let input = &payload["input"];
    let (name, tool_input) = names::to_claude_call(pi_tool, input, s.cwd, s.mcp);
    let mut m = base(s, event);
    m.insert("tool_name".into(), json!(name));
    m.insert("tool_input".into(), tool_input.clone());
    match event {
        ClaudeEvent::PermissionRequest => {
            m.insert("permission_suggestions".into(), json!([]));
        }
        ClaudeEvent::PostToolUse => {
            m.insert("tool_use_id".into(), payload["tool_call_id"].clone());
            m.insert(
                "tool_response".into(),
                tool_response(pi_tool, &tool_input, payload),
            );
        }
        ClaudeEvent::PostToolUseFailure => {
            m.insert("tool_use_id".into(), payload["tool_call_id"].clone());
            m.insert("error".into(), json!(text_of(&payload["content"])));
            m.insert("is_interrupt".into(), json!(false));
        }
        _ => {
            m.insert("tool_use_id".into(), payload["tool_call_id"].clone());
        }
    }
    (name, Value::Object(m))
}

fn text_of(content: &Value) -> String {
    content
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// pi's tool result under Claude Code's main keys: the text, `success`, and per tool what
/// Claude Code's own tools report (`stdout` for Bash — pi merges stderr into it —,
/// `filePath` for file tools); pi's `details` as they are.
pub fn tool_response(pi_tool: &str, claude_input: &Value, payload: &Value) -> Value {
    let text = text_of(&payload["content"]);
    let is_error = payload["is_error"].as_bool().unwrap_or(false);
    let mut m = Map::new();
    m.insert("content".into(), json!(text));
    m.insert("success".into(), json!(!is_error));
    m.insert("is_error".into(), json!(is_error));
    match pi_tool {
        "bash" => {
            m.insert("stdout".into(), json!(text));
            m.insert("stderr".into(), json!(""));
            m.insert("interrupted".into(), json!(false));
        }
        "read" | "write" | "edit" => {
            m.insert("filePath".into(), claude_input["file_path"].clone());
        }
        _ => {}
    }
    if !payload["details"].is_null() {
        m.insert("details".into(), payload["details"].clone());
    }
    Value::Object(m)
}

/// SessionStart's `source` for pi's `session_start` reason.
pub fn session_source(reason: &str) -> &str {
    match reason {
        "startup" => "startup",
        "new" => "clear",
        "resume" | "reload" => "resume",
        "fork" => "fork",
        other => other,
    }
}

/// SessionEnd's `reason` for pi's `session_shutdown` reason.
pub fn session_end_reason<'a>(reason: &'a str, mode: &str) -> &'a str {
    match reason {
        "new" => "clear",
        "quit" if mode == "interactive" => "prompt_input_exit",
        _ => "other",
    }
}

/// PreCompact's `trigger`: `manual` for `/compact`, else `auto`.
pub fn compact_trigger(reason: &str) -> &'static str {
    if reason == "manual" {
        "manual"
    } else {
        "auto"
    }
}

/// The value a matcher tests for a non-tool event, if the event has one.
pub fn matcher_subject(event: ClaudeEvent, stdin: &Value) -> Option<String> {
    let key = match event {
        ClaudeEvent::SessionStart => "source",
        ClaudeEvent::SessionEnd => "reason",
        ClaudeEvent::PreCompact => "trigger",
        ClaudeEvent::Notification => "notification_type",
        ClaudeEvent::Setup => "trigger",
        ClaudeEvent::InstructionsLoaded => "load_reason",
        ClaudeEvent::ConfigChange => "source",
        ClaudeEvent::PreToolUse
        | ClaudeEvent::PermissionRequest
        | ClaudeEvent::PostToolUse
        | ClaudeEvent::PostToolUseFailure => "tool_name",
        _ => return None,
    };
    stdin[key].as_str().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> Session<'static> {
        Session {
            session_id: "s1",
            transcript_path: "/sessions/s1.jsonl",
            cwd: Path::new("/proj"),
            mode: "print",
            mcp: &names::NoMcp,
        }
    }

    #[test]
    fn pre_tool_use_speaks_claude_codes_names() {
        let payload = json!({"tool_call_id": "c1", "tool_name": "write",
                             "input": {"path": "a.txt", "content": "x"}});
        let (name, stdin) = tool_event(&session(), ClaudeEvent::PreToolUse, &payload);
        assert_eq!(name, "Write");
        assert_eq!(
            stdin,
            json!({"session_id": "s1", "transcript_path": "/sessions/s1.jsonl", "cwd": "/proj",
                   "permission_mode": "default", "hook_event_name": "PreToolUse",
                   "tool_name": "Write",
                   "tool_input": {"file_path": "/proj/a.txt", "content": "x"},
                   "tool_use_id": "c1"})
        );
        assert_eq!(
            matcher_subject(ClaudeEvent::PreToolUse, &stdin).as_deref(),
            Some("Write")
        );
    }

    struct Registry;

    impl McpOrigins for Registry {
        fn origin(&self, pi_tool: &str) -> Option<(String, String)> {
            (pi_tool == "mcp__seq_think__think").then(|| ("seq-think".into(), "think".into()))
        }
    }

    #[test]
    fn mcp_tools_carry_claude_codes_spelling() {
        let payload = json!({"tool_call_id": "c1", "tool_name": "mcp__seq_think__think",
                             "input": {"thought": "x"}});
        let s = Session {
            mcp: &Registry,
            ..session()
        };
        let (name, stdin) = tool_event(&s, ClaudeEvent::PreToolUse, &payload);
        assert_eq!(name, "mcp__seq-think__think");
        assert_eq!(stdin["tool_name"], "mcp__seq-think__think");
        assert_eq!(stdin["tool_input"], json!({"thought": "x"}));
    }

    #[test]
    fn post_tool_use_carries_the_response() {
        let payload = json!({"tool_call_id": "c1", "tool_name": "bash",
                             "input": {"command": "echo hi"},
                             "content": [{"type": "text", "text": "hi"}], "is_error": false,
                             "details": null});
        let (_, stdin) = tool_event(&session(), ClaudeEvent::PostToolUse, &payload);
        assert_eq!(stdin["tool_response"]["stdout"], "hi");
        assert_eq!(stdin["tool_response"]["success"], true);
        assert_eq!(stdin["tool_input"], json!({"command": "echo hi"}));
    }

    #[test]
    fn a_failure_carries_the_error_and_a_permission_request_no_call_id() {
        let payload = json!({"tool_call_id": "c1", "tool_name": "bash",
                             "input": {"command": "false"},
                             "content": [{"type": "text", "text": "exit 1"}], "is_error": true});
        let (_, stdin) = tool_event(&session(), ClaudeEvent::PostToolUseFailure, &payload);
        assert_eq!(stdin["error"], "exit 1");
        assert_eq!(stdin["is_interrupt"], false);
        assert_eq!(stdin["tool_use_id"], "c1");
        assert!(stdin.get("tool_response").is_none());
        let (_, stdin) = tool_event(&session(), ClaudeEvent::PermissionRequest, &payload);
        assert!(stdin.get("tool_use_id").is_none());
        assert_eq!(stdin["permission_suggestions"], json!([]));
    }

    #[test]
    fn reasons_map_to_claude_codes_words() {
        assert_eq!(session_source("new"), "clear");
        assert_eq!(session_source("startup"), "startup");
        assert_eq!(
            session_end_reason("quit", "interactive"),
            "prompt_input_exit"
        );
        assert_eq!(session_end_reason("quit", "print"), "other");
        assert_eq!(compact_trigger("threshold"), "auto");
        assert_eq!(compact_trigger("manual"), "manual");
    }
}
