//! The OpenAI Responses API's streaming wire format (`POST /v1/responses`) for the mock model:
//! `response.created`, one output item per reasoning block, message and function call with
//! their deltas and `.done` events, then `response.completed` carrying the usage, as the API
//! reference documents the stream. Kept apart from `mock.rs` so each API's format reads alone.

use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{json, Value};

use super::mock::{pieces, MockUsage};

/// Writes one `event:`/`data:` pair per call, numbering `sequence_number` as the API does.
struct Events {
    out: String,
    seq: u64,
}

impl Events {
    fn ev(&mut self, mut data: Value) {
        data["sequence_number"] = json!(self.seq);
        self.seq += 1;
        let name = data["type"].as_str().unwrap_or("").to_string();
        self.out
            .push_str(&format!("event: {name}\ndata: {data}\n\n"));
    }
}

/// One scripted reply: an optional reasoning summary (with an encrypted item to carry back),
/// optional text, then the tool calls in order.
pub fn responses_sse(
    reasoning: Option<&str>,
    text: Option<&str>,
    calls: &[(String, Value)],
    next_id: &AtomicUsize,
    u: MockUsage,
) -> String {
    let mut e = Events {
        out: String::new(),
        seq: 0,
    };
    let shell = json!({"id": "resp_mock", "object": "response", "status": "in_progress",
        "model": "mock-gpt", "output": []});
    e.ev(json!({"type": "response.created", "response": shell}));
    let mut output = Vec::new();
    if let Some(r) = reasoning {
        output.push(reasoning_item(&mut e, output.len(), r));
    }
    if let Some(t) = text {
        output.push(message_item(&mut e, output.len(), t));
    }
    for (name, args) in calls {
        let n = next_id.fetch_add(1, Ordering::SeqCst) + 1;
        output.push(call_item(&mut e, output.len(), n, name, args));
    }
    let mut usage = json!({"input_tokens": u.input + u.cache_read + u.cache_write,
        "input_tokens_details": {"cached_tokens": u.cache_read},
        "output_tokens": u.output,
        "output_tokens_details": {"reasoning_tokens": if reasoning.is_some() { 3 } else { 0 }},
        "total_tokens": u.input + u.cache_read + u.cache_write + u.output});
    if u.cache_write > 0 {
        usage["input_tokens_details"]["cache_write_tokens"] = json!(u.cache_write);
    }
    let done = json!({"id": "resp_mock", "object": "response", "status": "completed",
        "model": "mock-gpt", "output": output, "usage": usage});
    e.ev(json!({"type": "response.completed", "response": done}));
    e.out
}

fn reasoning_item(e: &mut Events, index: usize, summary: &str) -> Value {
    let id = format!("rs_{index}");
    e.ev(
        json!({"type": "response.output_item.added", "output_index": index,
        "item": {"id": id, "type": "reasoning", "summary": []}}),
    );
    e.ev(
        json!({"type": "response.reasoning_summary_part.added", "item_id": id,
        "output_index": index, "summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
    );
    for p in pieces(summary, 6) {
        e.ev(
            json!({"type": "response.reasoning_summary_text.delta", "item_id": id,
            "output_index": index, "summary_index": 0, "delta": p}),
        );
    }
    e.ev(
        json!({"type": "response.reasoning_summary_text.done", "item_id": id,
        "output_index": index, "summary_index": 0, "text": summary}),
    );
    e.ev(
        json!({"type": "response.reasoning_summary_part.done", "item_id": id,
        "output_index": index, "summary_index": 0,
        "part": {"type": "summary_text", "text": summary}}),
    );
    let item = json!({"id": id, "type": "reasoning",
        "summary": [{"type": "summary_text", "text": summary}],
        "encrypted_content": format!("enc-{index}")});
    e.ev(json!({"type": "response.output_item.done", "output_index": index, "item": item}));
    item
}

fn message_item(e: &mut Events, index: usize, text: &str) -> Value {
    let id = format!("msg_{index}");
    e.ev(
        json!({"type": "response.output_item.added", "output_index": index,
        "item": {"id": id, "type": "message", "status": "in_progress", "role": "assistant",
            "content": []}}),
    );
    e.ev(
        json!({"type": "response.content_part.added", "item_id": id, "output_index": index,
        "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}),
    );
    for p in pieces(text, 5) {
        e.ev(
            json!({"type": "response.output_text.delta", "item_id": id, "output_index": index,
            "content_index": 0, "delta": p}),
        );
    }
    e.ev(
        json!({"type": "response.output_text.done", "item_id": id, "output_index": index,
        "content_index": 0, "text": text}),
    );
    let part = json!({"type": "output_text", "text": text, "annotations": []});
    e.ev(
        json!({"type": "response.content_part.done", "item_id": id, "output_index": index,
        "content_index": 0, "part": part}),
    );
    let item = json!({"id": id, "type": "message", "status": "completed", "role": "assistant",
        "content": [part]});
    e.ev(json!({"type": "response.output_item.done", "output_index": index, "item": item}));
    item
}

fn call_item(e: &mut Events, index: usize, n: usize, name: &str, args: &Value) -> Value {
    let (id, call_id, args) = (format!("fc_{n}"), format!("call_{n}"), args.to_string());
    e.ev(
        json!({"type": "response.output_item.added", "output_index": index,
        "item": {"id": id, "type": "function_call", "status": "in_progress", "call_id": call_id,
            "name": name, "arguments": ""}}),
    );
    for p in pieces(&args, 7) {
        e.ev(
            json!({"type": "response.function_call_arguments.delta", "item_id": id,
            "output_index": index, "delta": p}),
        );
    }
    e.ev(
        json!({"type": "response.function_call_arguments.done", "item_id": id,
        "output_index": index, "arguments": args}),
    );
    let item = json!({"id": id, "type": "function_call", "status": "completed",
        "call_id": call_id, "name": name, "arguments": args});
    e.ev(json!({"type": "response.output_item.done", "output_index": index, "item": item}));
    item
}
