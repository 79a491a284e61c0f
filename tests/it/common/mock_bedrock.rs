//! A mock Amazon Bedrock runtime: `POST /model/{modelId}/converse-stream` answered in the
//! binary `application/vnd.amazon.eventstream` framing (frames written here with their CRCs,
//! independently of the crate pi decodes them with), or with an HTTP error as Bedrock sends
//! one (`x-amzn-errortype`, a JSON `message`). A plain HTTP/1.1 server on a loopback port, so
//! a reply can also stop half-way and hold the connection open (for aborts mid-stream).
//! Every request is recorded with its headers and raw body, to check signatures and secrets.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One scripted reply.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A whole event stream.
    Frames(Vec<u8>),
    /// These frames, then nothing more until the client goes away.
    Stall(Vec<u8>),
    /// An HTTP failure: status, exception name, message.
    Status(u16, &'static str, String),
}

/// A request the mock received.
#[derive(Debug, Clone)]
pub struct BedrockRequest {
    pub path: String,
    /// Header names lower-cased.
    pub headers: BTreeMap<String, String>,
    pub raw_body: String,
    pub body: Value,
}

/// One event-stream message with string headers.
pub fn frame(headers: &[(&str, &str)], payload: &Value) -> Vec<u8> {
    let mut hs = Vec::new();
    for (k, v) in headers {
        hs.push(k.len() as u8);
        hs.extend_from_slice(k.as_bytes());
        hs.push(7);
        hs.extend_from_slice(&(v.len() as u16).to_be_bytes());
        hs.extend_from_slice(v.as_bytes());
    }
    let body = payload.to_string().into_bytes();
    let total = (12 + hs.len() + body.len() + 4) as u32;
    let mut out = Vec::new();
    out.extend_from_slice(&total.to_be_bytes());
    out.extend_from_slice(&(hs.len() as u32).to_be_bytes());
    let prelude_crc = crc32(&out);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    out.extend_from_slice(&hs);
    out.extend_from_slice(&body);
    let crc = crc32(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

/// CRC-32 (IEEE), bit by bit: the mock needs no speed.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}

pub fn event(kind: &str, payload: Value) -> Vec<u8> {
    frame(
        &[
            (":event-type", kind),
            (":content-type", "application/json"),
            (":message-type", "event"),
        ],
        &payload,
    )
}

pub fn exception(kind: &str, message: &str) -> Vec<u8> {
    frame(
        &[
            (":exception-type", kind),
            (":content-type", "application/json"),
            (":message-type", "exception"),
        ],
        &json!({ "message": message }),
    )
}

/// The signature on the mock's reasoning.
pub const SIGNATURE: &str = "c2lnLWJlZHJvY2s=";

/// A reply's parts in Bedrock's order: reasoning (signed), text, tool uses with their input
/// streamed in two pieces, the stop, then usage.
pub fn stream(reasoning: Option<&str>, text: Option<&str>, calls: &[(&str, Value)]) -> Vec<u8> {
    let mut out = event("messageStart", json!({"role": "assistant"}));
    let mut index = 0;
    if let Some(r) = reasoning {
        let (a, b) = r.split_at(r.len() / 2);
        for piece in [a, b] {
            out.extend(event(
                "contentBlockDelta",
                json!({"contentBlockIndex": index, "delta": {"reasoningContent": {"text": piece}}}),
            ));
        }
        out.extend(event("contentBlockDelta", json!({"contentBlockIndex": index, "delta": {"reasoningContent": {"signature": SIGNATURE}}})));
        out.extend(event(
            "contentBlockStop",
            json!({"contentBlockIndex": index}),
        ));
        index += 1;
    }
    if let Some(t) = text {
        let (a, b) = t.split_at(t.len() / 2);
        for piece in [a, b] {
            out.extend(event(
                "contentBlockDelta",
                json!({"contentBlockIndex": index, "delta": {"text": piece}}),
            ));
        }
        out.extend(event(
            "contentBlockStop",
            json!({"contentBlockIndex": index}),
        ));
        index += 1;
    }
    for (n, (name, input)) in calls.iter().enumerate() {
        let id = format!("tooluse_mock{n}");
        out.extend(event("contentBlockStart", json!({"contentBlockIndex": index, "start": {"toolUse": {"toolUseId": id, "name": name}}})));
        let json = input.to_string();
        let (a, b) = json.split_at(json.len() / 2);
        for piece in [a, b] {
            out.extend(event(
                "contentBlockDelta",
                json!({"contentBlockIndex": index, "delta": {"toolUse": {"input": piece}}}),
            ));
        }
        out.extend(event(
            "contentBlockStop",
            json!({"contentBlockIndex": index}),
        ));
        index += 1;
    }
    let reason = if calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    out.extend(event("messageStop", json!({"stopReason": reason})));
    out.extend(event("metadata", json!({"usage": {"inputTokens": 21, "outputTokens": 8, "totalTokens": 59, "cacheReadInputTokens": 30, "cacheWriteInputTokens": 0}, "metrics": {"latencyMs": 3}})));
    out
}

pub fn text(t: &str) -> Reply {
    Reply::Frames(stream(None, Some(t), &[]))
}

#[derive(Default)]
struct Shared {
    replies: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<BedrockRequest>>,
}

pub struct MockBedrock {
    port: u16,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for MockBedrock {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl MockBedrock {
    pub async fn start(replies: Vec<Reply>) -> MockBedrock {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let shared = Arc::new(Shared {
            replies: Mutex::new(replies.into()),
            requests: Mutex::new(Vec::new()),
        });
        let s = shared.clone();
        let task = tokio::spawn(async move {
            while let Ok((conn, _)) = listener.accept().await {
                tokio::spawn(serve(conn, s.clone()));
            }
        });
        MockBedrock { port, shared, task }
    }

    pub fn uri(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn requests(&self) -> Vec<BedrockRequest> {
        self.shared.requests.lock().unwrap().clone()
    }
}

fn header_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|p| p + 4)
}

/// Serves the requests of one connection in turn (keep-alive).
async fn serve(mut conn: TcpStream, shared: Arc<Shared>) {
    let mut buf = Vec::new();
    loop {
        let mut chunk = [0u8; 8192];
        let end = loop {
            if let Some(end) = header_end(&buf) {
                break end;
            }
            match conn.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
        let mut lines = head.split("\r\n");
        let path = lines
            .next()
            .unwrap_or("")
            .split(' ')
            .nth(1)
            .unwrap_or("")
            .to_string();
        let headers: BTreeMap<String, String> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        let len: usize = headers
            .get("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        while buf.len() < end + len {
            match conn.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let raw_body = String::from_utf8_lossy(&buf[end..end + len]).into_owned();
        buf.drain(..end + len);
        let body = serde_json::from_str(&raw_body).unwrap_or(Value::Null);
        shared.requests.lock().unwrap().push(BedrockRequest {
            path,
            headers,
            raw_body,
            body,
        });
        let reply = shared.replies.lock().unwrap().pop_front();
        let ok = match reply {
            Some(Reply::Frames(bytes)) => {
                respond(
                    &mut conn,
                    200,
                    &[("content-type", "application/vnd.amazon.eventstream")],
                    &bytes,
                )
                .await
            }
            Some(Reply::Status(code, kind, message)) => {
                let body = json!({ "message": message }).to_string();
                let kind = format!("{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/");
                respond(
                    &mut conn,
                    code,
                    &[
                        ("content-type", "application/json"),
                        ("x-amzn-errortype", &kind),
                    ],
                    body.as_bytes(),
                )
                .await
            }
            Some(Reply::Stall(bytes)) => {
                let head = "HTTP/1.1 200 OK\r\ncontent-type: application/vnd.amazon.eventstream\r\ntransfer-encoding: chunked\r\n\r\n";
                let _ = conn.write_all(head.as_bytes()).await;
                let _ = conn
                    .write_all(format!("{:x}\r\n", bytes.len()).as_bytes())
                    .await;
                let _ = conn.write_all(&bytes).await;
                let _ = conn.write_all(b"\r\n").await;
                let _ = conn.flush().await;
                // Held until pi hangs up.
                while let Ok(n) = conn.read(&mut chunk).await {
                    if n == 0 {
                        break;
                    }
                }
                return;
            }
            None => {
                respond(
                    &mut conn,
                    418,
                    &[("content-type", "application/json")],
                    b"{\"message\":\"the mock has no reply left\"}",
                )
                .await
            }
        };
        if !ok {
            return;
        }
    }
}

async fn respond(conn: &mut TcpStream, status: u16, headers: &[(&str, &str)], body: &[u8]) -> bool {
    let mut head = format!(
        "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nx-amzn-requestid: req-mock\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    conn.write_all(head.as_bytes()).await.is_ok()
        && conn.write_all(body).await.is_ok()
        && conn.flush().await.is_ok()
}
