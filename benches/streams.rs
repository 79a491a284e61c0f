//! Stream benchmarks (issue 28's figure): for every API pi speaks, the time from a streamed
//! event's bytes leaving a local server to its delta reaching the consumer — through the real
//! provider (`Providers::builtin`): the HTTP client, chunked decoding, the API's framing
//! (server-sent events, or Bedrock's binary event stream), its JSON and its event mapping,
//! and the delta channel the agent reads.
//!
//! The server writes one text-delta event and waits until the consumer has seen its delta
//! (each delta carries its number), so every figure is one event alone on an idle stream —
//! the latency a user watching the text would see added. The throughput figure writes the
//! same events all at once: the cost of one event when they arrive in a burst.
//!
//! Run: `cargo bench --bench streams` (or `python3 bench/run.py --only streams`).

// Figures for the person running the benchmark, not pi's output.
#![allow(clippy::disallowed_macros)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use pi::delta::AssistantDelta;
use pi::provider::{
    CallContext, Model, NoProviderHooks, Providers, Request, ThinkingLevel, TokenSource,
};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Events measured one at a time, per API.
const N: usize = 2000;
/// Events measured in a burst, per API.
const BURST: usize = 20_000;

/// One API's stream: what comes before the text, one text event, what ends the message.
struct Api {
    api: &'static str,
    content_type: &'static str,
    prefix: Vec<u8>,
    delta: fn(&str) -> Vec<u8>,
    suffix: Vec<u8>,
    /// The credential the API needs, as the request or the model's stored variables carry it.
    setup: fn(&mut Request),
}

fn sse(events: &[Value]) -> Vec<u8> {
    events
        .iter()
        .flat_map(|e| format!("data: {e}\n\n").into_bytes())
        .collect()
}

fn named_sse(events: &[(&str, Value)]) -> Vec<u8> {
    events
        .iter()
        .flat_map(|(name, e)| format!("event: {name}\ndata: {e}\n\n").into_bytes())
        .collect()
}

/// One Bedrock event-stream message (string headers, JSON payload), with its CRCs.
fn bedrock_event(kind: &str, payload: &Value) -> Vec<u8> {
    let mut headers = Vec::new();
    for (k, v) in [
        (":event-type", kind),
        (":content-type", "application/json"),
        (":message-type", "event"),
    ] {
        headers.push(k.len() as u8);
        headers.extend_from_slice(k.as_bytes());
        headers.push(7);
        headers.extend_from_slice(&(v.len() as u16).to_be_bytes());
        headers.extend_from_slice(v.as_bytes());
    }
    let body = payload.to_string().into_bytes();
    let total = (12 + headers.len() + body.len() + 4) as u32;
    let mut out = Vec::new();
    out.extend_from_slice(&total.to_be_bytes());
    out.extend_from_slice(&(headers.len() as u32).to_be_bytes());
    let prelude = crc32fast::hash(&out);
    out.extend_from_slice(&prelude.to_be_bytes());
    out.extend_from_slice(&headers);
    out.extend_from_slice(&body);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

fn completions_chunk(delta: Value, finish: Value) -> Value {
    json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

fn completions(api: &'static str) -> Api {
    Api {
        api,
        content_type: "text/event-stream",
        prefix: sse(&[completions_chunk(
            json!({"role": "assistant", "content": ""}),
            Value::Null,
        )]),
        delta: |t| sse(&[completions_chunk(json!({"content": t}), Value::Null)]),
        suffix: [
            sse(&[
                completions_chunk(json!({}), json!("stop")),
                json!({"id": "c1", "object": "chat.completion.chunk", "choices": [],
                       "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}),
            ]),
            b"data: [DONE]\n\n".to_vec(),
        ]
        .concat(),
        setup: |_| {},
    }
}

fn responses(api: &'static str, setup: fn(&mut Request)) -> Api {
    Api {
        api,
        content_type: "text/event-stream",
        prefix: named_sse(&[
            (
                "response.created",
                json!({"type": "response.created",
                "response": {"id": "resp_1", "status": "in_progress"}}),
            ),
            (
                "response.output_item.added",
                json!({"type": "response.output_item.added",
                "output_index": 0, "item": {"type": "message", "id": "msg_1",
                "role": "assistant", "content": []}}),
            ),
            (
                "response.content_part.added",
                json!({"type": "response.content_part.added",
                "output_index": 0, "content_index": 0,
                "part": {"type": "output_text", "text": ""}}),
            ),
        ]),
        delta: |t| {
            named_sse(&[(
                "response.output_text.delta",
                json!({
                "type": "response.output_text.delta", "output_index": 0, "content_index": 0,
                "delta": t}),
            )])
        },
        suffix: named_sse(&[
            (
                "response.output_item.done",
                json!({"type": "response.output_item.done",
                "output_index": 0, "item": {"type": "message", "id": "msg_1",
                "role": "assistant", "content": [{"type": "output_text", "text": "x"}]}}),
            ),
            (
                "response.completed",
                json!({"type": "response.completed",
                "response": {"id": "resp_1", "status": "completed",
                "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}}}),
            ),
        ]),
        setup,
    }
}

fn google(api: &'static str, setup: fn(&mut Request)) -> Api {
    Api {
        api,
        content_type: "text/event-stream",
        prefix: Vec::new(),
        delta: |t| {
            sse(&[json!({"candidates": [{"content": {"role": "model",
                "parts": [{"text": t}]}}], "responseId": "r1"})])
        },
        suffix: sse(&[json!({"candidates": [{"content": {"role": "model",
            "parts": [{"text": "."}]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
            "totalTokenCount": 15}})]),
        setup,
    }
}

/// A JWT whose payload names a ChatGPT account, as a Codex login's access token does.
fn codex_token() -> String {
    use base64::Engine as _;
    let b64 = |v: Value| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string().as_bytes())
    };
    let claims = json!({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-bench"}});
    format!("{}.{}.sig", b64(json!({"alg": "none"})), b64(claims))
}

fn apis() -> Vec<Api> {
    vec![
        Api {
            api: "anthropic-messages",
            content_type: "text/event-stream",
            prefix: named_sse(&[
                (
                    "message_start",
                    json!({"type": "message_start", "message": {"id": "msg_1",
                    "type": "message", "role": "assistant", "content": [], "model": "m",
                    "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
                ),
                (
                    "content_block_start",
                    json!({"type": "content_block_start", "index": 0,
                    "content_block": {"type": "text", "text": ""}}),
                ),
            ]),
            delta: |t| {
                named_sse(&[(
                    "content_block_delta",
                    json!({"type": "content_block_delta",
                    "index": 0, "delta": {"type": "text_delta", "text": t}}),
                )])
            },
            suffix: named_sse(&[
                (
                    "content_block_stop",
                    json!({"type": "content_block_stop", "index": 0}),
                ),
                (
                    "message_delta",
                    json!({"type": "message_delta",
                    "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}}),
                ),
                ("message_stop", json!({"type": "message_stop"})),
            ]),
            setup: |_| {},
        },
        completions("openai-completions"),
        completions("mistral-conversations"),
        responses("openai-responses", |_| {}),
        responses("azure-openai-responses", |r| {
            r.model
                .auth
                .env
                .insert("AZURE_OPENAI_API_VERSION".into(), "v1".into());
        }),
        responses("openai-codex-responses", |r| {
            r.api_key = Some(codex_token())
        }),
        Api {
            api: "pi-messages",
            content_type: "text/event-stream",
            prefix: sse(&[
                json!({"type": "start"}),
                json!({"type": "text_start", "contentIndex": 0}),
            ]),
            delta: |t| sse(&[json!({"type": "text_delta", "contentIndex": 0, "delta": t})]),
            suffix: [
                sse(&[
                    json!({"type": "text_end", "contentIndex": 0, "content": "x"}),
                    json!({"type": "done", "reason": "stop", "usage": {"input": 10,
                        "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                        "total": 0}}}),
                ]),
                b"data: [DONE]\n\n".to_vec(),
            ]
            .concat(),
            setup: |_| {},
        },
        google("google-generative-ai", |_| {}),
        google("google-vertex", |_| {}),
        Api {
            api: "bedrock-converse-stream",
            content_type: "application/vnd.amazon.eventstream",
            prefix: bedrock_event("messageStart", &json!({"role": "assistant"})),
            delta: |t| {
                bedrock_event(
                    "contentBlockDelta",
                    &json!({"contentBlockIndex": 0, "delta": {"text": t}}),
                )
            },
            suffix: [
                bedrock_event("contentBlockStop", &json!({"contentBlockIndex": 0})),
                bedrock_event("messageStop", &json!({"stopReason": "end_turn"})),
                bedrock_event(
                    "metadata",
                    &json!({"usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
                            "metrics": {"latencyMs": 1}}),
                ),
            ]
            .concat(),
            setup: |r| {
                let env = &mut r.model.auth.env;
                env.insert("AWS_ACCESS_KEY_ID".into(), "AKIDBENCH".into());
                env.insert("AWS_SECRET_ACCESS_KEY".into(), "bench-secret".into());
                env.insert("AWS_REGION".into(), "us-east-1".into());
            },
        },
    ]
}

fn request(api: &Api, base_url: String) -> Request {
    let mut model = Model {
        id: "bench-model".into(),
        name: "Bench".into(),
        provider: "bench".into(),
        api: api.api.into(),
        base_url,
        headers: Default::default(),
        reasoning: false,
        input: vec!["text".into()],
        context_window: 100_000,
        max_tokens: 4096,
        cost: Default::default(),
        compat: Value::Null,
        prompt_cache: Default::default(),
        thinking_level_map: Default::default(),
        auth: Default::default(),
    };
    model.auth.token = None::<Arc<dyn TokenSource>>;
    let messages = vec![Arc::new(
        serde_json::from_value(json!({"role": "user", "content": "hi", "timestamp": 0}))
            .unwrap_or_else(|e| panic!("a user message: {e}")),
    )];
    let mut req = Request {
        model,
        api_key: Some("bench-key".into()),
        system_prompt: "You are a benchmark.".into(),
        messages,
        tools: Arc::from(Vec::new()),
        thinking: ThinkingLevel::Off,
        session_id: None,
    };
    (api.setup)(&mut req);
    req
}

/// Reads one HTTP request (head and `content-length` body) off `conn`.
async fn read_request(conn: &mut TcpStream) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16384];
    loop {
        let n = conn.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            while buf.len() < end + 4 + length {
                let n = conn.read(&mut chunk).await?;
                if n == 0 {
                    break;
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            return Ok(());
        }
    }
}

async fn write_chunk(conn: &mut TcpStream, bytes: &[u8]) -> std::io::Result<()> {
    if bytes.is_empty() {
        return Ok(());
    }
    let mut out = format!("{:x}\r\n", bytes.len()).into_bytes();
    out.extend_from_slice(bytes);
    out.extend_from_slice(b"\r\n");
    conn.write_all(&out).await
}

/// How the server sends the text events.
#[derive(Clone, Copy)]
enum Pace {
    /// One, then wait for its delta.
    OneByOne,
    /// All at once.
    Burst,
}

/// Serves one streamed answer of `count` text events; the write time of each event when
/// pacing one by one.
async fn serve(
    listener: TcpListener,
    api: &Api,
    count: usize,
    pace: Pace,
    mut seen: mpsc::UnboundedReceiver<Instant>,
) -> std::io::Result<Vec<Duration>> {
    let (mut conn, _) = listener.accept().await?;
    conn.set_nodelay(true)?;
    read_request(&mut conn).await?;
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: {}\r\ntransfer-encoding: chunked\r\n\r\n",
        api.content_type
    );
    conn.write_all(head.as_bytes()).await?;
    write_chunk(&mut conn, &api.prefix).await?;
    let mut latencies = Vec::with_capacity(count);
    match pace {
        Pace::OneByOne => {
            for i in 0..count {
                let bytes = (api.delta)(&format!("§{i}"));
                let sent = Instant::now();
                write_chunk(&mut conn, &bytes).await?;
                let Some(got) = seen.recv().await else {
                    break;
                };
                latencies.push(got.saturating_duration_since(sent));
            }
        }
        Pace::Burst => {
            let mut all = Vec::new();
            for i in 0..count {
                all.extend((api.delta)(&format!("§{i}")));
            }
            write_chunk(&mut conn, &all).await?;
        }
    }
    write_chunk(&mut conn, &api.suffix).await?;
    conn.write_all(b"0\r\n\r\n").await?;
    conn.flush().await?;
    Ok(latencies)
}

/// Streams one answer through `api`'s provider; the per-event latencies (one by one) and the
/// whole stream's time.
async fn run(
    providers: &Providers,
    api: &Api,
    count: usize,
    pace: Pace,
) -> (Vec<Duration>, Duration) {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("bind: {e}"));
    let base = format!(
        "http://{}",
        listener
            .local_addr()
            .unwrap_or_else(|e| panic!("addr: {e}"))
    );
    let req = request(api, base);
    let (seen_tx, seen_rx) = mpsc::unbounded_channel();
    let server = async { serve(listener, api, count, pace, seen_rx).await };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let ctx = CallContext {
        deltas: tx,
        cancel: CancellationToken::new(),
        hooks: Arc::new(NoProviderHooks),
    };
    let provider = providers
        .get(api.api)
        .unwrap_or_else(|| panic!("no provider for {}", api.api));
    let consumer = async move {
        let mut texts = 0usize;
        while let Some(d) = rx.recv().await {
            if let AssistantDelta::TextDelta { delta, .. } = &d {
                if delta.starts_with('§') {
                    texts += 1;
                    let _ = seen_tx.send(Instant::now());
                }
            }
        }
        texts
    };
    let started = Instant::now();
    let call = async {
        let out = provider.stream(&req, &ctx).await;
        drop(ctx);
        out
    };
    let (served, message, texts) = tokio::join!(server, call, consumer);
    let took = started.elapsed();
    let latencies = served.unwrap_or_else(|e| panic!("{}: the server failed: {e}", api.api));
    if let Err(e) = message {
        panic!("{}: the stream failed: {e}", api.api);
    }
    assert_eq!(texts, count, "{}: every event became a delta", api.api);
    (latencies, took)
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("a runtime: {e}"));
    runtime.block_on(async {
        let providers = Providers::builtin(None);
        println!(
            "{:<26} {:>10} {:>10} {:>10} {:>14}",
            "api", "p50 µs", "p99 µs", "max µs", "burst µs/event"
        );
        for api in apis() {
            // A warm-up stream: connections, lazy statics, the allocator.
            run(&providers, &api, 200, Pace::OneByOne).await;
            let (mut lat, _) = run(&providers, &api, N, Pace::OneByOne).await;
            lat.sort();
            let (_, burst) = run(&providers, &api, BURST, Pace::Burst).await;
            let us = |d: Duration| d.as_secs_f64() * 1e6;
            println!(
                "{:<26} {:>10.1} {:>10.1} {:>10.1} {:>14.2}",
                api.api,
                us(pct(&lat, 0.5)),
                us(pct(&lat, 0.99)),
                us(*lat.last().unwrap_or(&Duration::ZERO)),
                us(burst) / BURST as f64
            );
        }
    });
}
