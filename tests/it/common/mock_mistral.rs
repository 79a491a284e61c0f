//! Mistral's chat completions stream (`POST {baseUrl}/v1/chat/completions`, served here under
//! `/mistral`) for the mock model: `data:` completion chunks whose `delta.content` is thinking
//! chunks (`{"type": "thinking", "thinking": [{"type": "text", …}]}`) then text pieces, every
//! tool call of the turn whole in one chunk (nine-character ids, as Mistral gives them), a last
//! chunk with the finish reason and the usage (cached prompt tokens in
//! `prompt_tokens_details`), then `[DONE]`. Kept apart from `mock.rs` so each API's format
//! reads alone.

use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{json, Value};

use super::mock::{pieces, MockUsage};

/// Where the mock serves Mistral: the provider's `baseUrl` is `{uri}/mistral`.
pub const MISTRAL_PATH: &str = "/mistral/v1/chat/completions";

fn chunk(delta: Value, finish: Value) -> String {
    let c = json!({"id": "cmpl-mistral", "object": "chat.completion.chunk", "created": 0,
        "model": "mistral-mock", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    format!("data: {c}\n\n")
}

/// One scripted reply.
pub fn mistral_sse(
    reasoning: Option<&str>,
    text: Option<&str>,
    calls: &[(String, Value)],
    next_id: &AtomicUsize,
    u: MockUsage,
) -> String {
    let mut out = chunk(json!({"role": "assistant", "content": ""}), Value::Null);
    if let Some(r) = reasoning {
        for p in pieces(r, 6) {
            let part = json!({"type": "thinking", "thinking": [{"type": "text", "text": p}]});
            out.push_str(&chunk(json!({"content": [part]}), Value::Null));
        }
    }
    if let Some(t) = text {
        for p in pieces(t, 5) {
            out.push_str(&chunk(json!({"content": p}), Value::Null));
        }
    }
    if !calls.is_empty() {
        let wire: Vec<Value> = calls
            .iter()
            .enumerate()
            .map(|(i, (name, args))| {
                let id = format!("mc{:07}", next_id.fetch_add(1, Ordering::SeqCst) + 1);
                json!({"id": id, "type": "function", "index": i,
                    "function": {"name": name, "arguments": args.to_string()}})
            })
            .collect();
        out.push_str(&chunk(
            json!({"content": "", "tool_calls": wire}),
            Value::Null,
        ));
    }
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let prompt = u.input + u.cache_read;
    let mut usage = json!({"prompt_tokens": prompt, "completion_tokens": u.output,
        "total_tokens": prompt + u.output});
    if u.cache_read > 0 {
        usage["prompt_tokens_details"] = json!({"cached_tokens": u.cache_read});
    }
    let last = json!({"id": "cmpl-mistral", "object": "chat.completion.chunk", "created": 0,
        "model": "mistral-mock", "usage": usage,
        "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": finish}]});
    out.push_str(&format!("data: {last}\n\ndata: [DONE]\n\n"));
    out
}

/// An error body as Mistral sends one.
pub fn mistral_error(code: u16, message: &str) -> Value {
    let kind = match code {
        429 => "rate_limited",
        400 => "invalid_request_message_error",
        _ => "internal_server_error",
    };
    json!({"object": "error", "message": message, "type": kind, "param": null,
        "code": code.to_string()})
}
