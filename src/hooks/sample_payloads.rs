//! A typical payload for every event, for `pi hook test` (when no `--payload` is given) and
//! `pi hook check` (which sends one of each to every subscribed event).

use serde_json::{json, Value};

pub fn for_event(name: &str, cwd: &str) -> Value {
    let user = json!({"role": "user", "content": "list the files", "timestamp": 0});
    let assistant = json!({
        "role": "assistant",
        "content": [{"type": "toolCall", "id": "call_1", "name": "bash", "arguments": {"command": "ls"}}],
        "api": "faux", "provider": "faux", "model": "faux-1",
        "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "stopReason": "toolUse", "timestamp": 0
    });
    let result_content = json!([{"type": "text", "text": "README.md\nsrc"}]);
    match name {
        "tool_call" => {
            json!({"tool_call_id": "call_1", "tool_name": "bash", "input": {"command": "ls"}})
        }
        "tool_result" => {
            json!({"tool_call_id": "call_1", "tool_name": "bash", "input": {"command": "ls"},
                   "content": result_content, "details": null, "structured_content": null,
                   "usage": null, "is_error": false})
        }
        "prepare_arguments" => {
            json!({"tool_call_id": "call_1", "tool_name": "bash", "arguments": {"command": "ls"}})
        }
        "tool_execution_start" => {
            json!({"tool_call_id": "call_1", "tool_name": "bash", "args": {"command": "ls"}})
        }
        "tool_execution_update" => {
            json!({"tool_call_id": "call_1", "tool_name": "bash", "args": {"command": "ls"},
                                          "partial_result": {"content": result_content}})
        }
        "tool_execution_end" => json!({"tool_call_id": "call_1", "tool_name": "bash",
                                       "result": {"content": result_content}, "is_error": false,
                                       "duration_ms": 12}),
        "input" => json!({"text": "list the files", "source": "print"}),
        "before_agent_start" => {
            json!({"prompt": "list the files", "system_prompt": "You are a coding agent.",
                   "system_prompt_options": {"sections": {"preamble": "You are a coding agent."}}})
        }
        "context" => json!({"messages": [user]}),
        "context_with_system" => {
            json!({"messages": [{"role": "system", "content": "You are a coding agent."}, user]})
        }
        "provider_stream_event" => json!({"api": "openai-completions", "provider": "openai",
            "model": "gpt-4o", "event": null,
            "data": {"choices": [{"index": 0, "delta": {"content": "Hi"}}]}}),
        "before_provider_request" => json!({"payload": {"model": "faux-1", "messages": []}}),
        "before_provider_headers" => json!({"headers": {"content-type": "application/json"}}),
        "after_provider_response" => {
            json!({"status": 200, "headers": {"content-type": "text/event-stream"}})
        }
        "message_start" | "message_end" => json!({"message": user}),
        "message_update" => {
            json!({"assistant_message_event": {"type": "text_delta", "contentIndex": 0, "delta": "Hi"}})
        }
        "turn_start" => json!({"turn_index": 0, "timestamp": 0}),
        "turn_end" => json!({"turn_index": 0, "message": assistant, "tool_results": [],
                             "outcome": "completed", "proposal": {"entries": [], "continue": false}}),
        "agent_before_settle" => {
            json!({"message_count": 3, "outcome": "completed",
                   "proposal": {"entries": [], "continue": false}})
        }
        "agent_start" | "agent_settled" => json!({}),
        "agent_end" => json!({"messages": [user, assistant]}),
        "session_start" => json!({"reason": "startup"}),
        "session_shutdown" => json!({"reason": "quit"}),
        "session_info_changed" => json!({"name": "refactor"}),
        "session_before_switch" => json!({"reason": "new"}),
        "session_before_fork" => json!({"entry_id": "a1b2c3d4", "position": "before"}),
        "session_before_compact" => json!({"reason": "manual", "will_retry": false,
                                           "preparation": {"tokens_before": 120000, "first_kept_entry_id": "a1b2c3d4"}}),
        "session_compact" => {
            json!({"reason": "manual", "from_extension": false, "will_retry": false})
        }
        "session_before_tree" => {
            json!({"preparation": {"target_id": "a1b2c3d4", "old_leaf_id": "e5f6a7b8"}})
        }
        "session_tree" => json!({"new_leaf_id": "a1b2c3d4", "old_leaf_id": "e5f6a7b8"}),
        "project_trust" => json!({"cwd": cwd}),
        "resources_discover" => json!({"cwd": cwd, "reason": "startup"}),
        "user_bash" => json!({"command": "ls", "exclude_from_context": false, "cwd": cwd}),
        "model_select" => {
            let model = |id: &str| {
                json!({"provider": "faux", "id": id, "api": "faux", "reasoning": false,
                       "input": ["text"], "context_window": 128000})
            };
            json!({"model": model("faux-1"), "previous_model": model("faux-0"), "source": "set"})
        }
        "thinking_level_select" => json!({"level": "high", "previous_level": "off"}),
        "ui_prompt_start" | "ui_prompt_end" => {
            json!({"reason": "ui_prompt", "kind": "confirm", "title": "Allow network access?"})
        }
        "cache_warming_decision" => json!({"warm_cost": 0.0150005, "miss_cost": 0.1725,
                                           "continuation_probability": 0.15, "action": "stop"}),
        _ => json!({}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_has_an_object_payload() {
        for name in crate::hooks::events::Event::all().map(|e| e.name()) {
            assert!(for_event(name, "/p").is_object(), "{name}");
        }
    }
}
