//! The Gemini API's streaming wire format (`POST /v1beta/models/{model}:streamGenerateContent
//! ?alt=sse`) for the mock model: `data:` chunks of `GenerateContentResponse`, thinking as
//! `thought: true` text parts (the last with a `thoughtSignature`), text parts, then every
//! function call of the turn as whole parts in one chunk (the first signed, no ids, as Gemini
//! 3 sends them), the last chunk also carrying `finishReason` and `usageMetadata`. Kept apart from
//! `mock.rs` so each API's format reads alone.

use serde_json::{json, Value};

use super::mock::{pieces, MockUsage};

/// The signature on the mock's thinking (base64 of `sig-thought`, which pi sends back).
pub const THOUGHT_SIGNATURE: &str = "c2lnLXRob3VnaHQ=";
/// The signature on the first function call (base64 of `sig-call`).
pub const CALL_SIGNATURE: &str = "c2lnLWNhbGw=";
/// Thinking tokens the usage reports when the turn has reasoning.
pub const THOUGHT_TOKENS: u64 = 3;

fn chunk(parts: Vec<Value>) -> Value {
    json!({"candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}],
        "modelVersion": "gemini-mock", "responseId": "resp-gemini"})
}

/// One scripted reply.
pub fn google_sse(
    reasoning: Option<&str>,
    text: Option<&str>,
    calls: &[(String, Value)],
    u: MockUsage,
) -> String {
    let mut chunks = Vec::new();
    if let Some(r) = reasoning {
        let ps = pieces(r, 6);
        let last = ps.len().saturating_sub(1);
        for (i, p) in ps.into_iter().enumerate() {
            let mut part = json!({"text": p, "thought": true});
            if i == last {
                part["thoughtSignature"] = json!(THOUGHT_SIGNATURE);
            }
            chunks.push(chunk(vec![part]));
        }
    }
    if let Some(t) = text {
        for p in pieces(t, 5) {
            chunks.push(chunk(vec![json!({"text": p})]));
        }
    }
    if !calls.is_empty() {
        let parts = calls
            .iter()
            .enumerate()
            .map(|(i, (name, args))| {
                let mut part = json!({"functionCall": {"name": name, "args": args}});
                if i == 0 {
                    part["thoughtSignature"] = json!(CALL_SIGNATURE);
                }
                part
            })
            .collect();
        chunks.push(chunk(parts));
    }
    let thoughts = if reasoning.is_some() {
        THOUGHT_TOKENS
    } else {
        0
    };
    let prompt = u.input + u.cache_read;
    let mut usage = json!({"promptTokenCount": prompt,
        "candidatesTokenCount": u.output.saturating_sub(thoughts),
        "totalTokenCount": prompt + u.output});
    if thoughts > 0 {
        usage["thoughtsTokenCount"] = json!(thoughts);
    }
    if u.cache_read > 0 {
        usage["cachedContentTokenCount"] = json!(u.cache_read);
    }
    // The last content chunk carries the finish and the usage, as Gemini sends them.
    if chunks.is_empty() {
        chunks.push(chunk(Vec::new()));
    }
    if let Some(last) = chunks.last_mut() {
        last["candidates"][0]["finishReason"] = json!("STOP");
        last["usageMetadata"] = usage;
    }
    chunks
        .into_iter()
        .map(|c| format!("data: {c}\r\n\r\n"))
        .collect()
}

/// An error body as the Gemini API sends one.
pub fn google_error(code: u16, message: &str) -> Value {
    let status = match code {
        400 => "INVALID_ARGUMENT",
        429 => "RESOURCE_EXHAUSTED",
        503 => "UNAVAILABLE",
        _ => "INTERNAL",
    };
    json!({"error": {"code": code, "message": message, "status": status}})
}
