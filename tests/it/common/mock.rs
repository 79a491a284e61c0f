//! `MockModel`: a local wiremock server that plays a queue of scripted model turns over the
//! OpenAI chat-completions SSE wire format (`POST /v1/chat/completions`) and the Anthropic
//! messages SSE format (`POST /v1/messages`), the OpenAI Responses format
//! (`POST /v1/responses`, in `mock_responses.rs`) and the Gemini API's
//! (`POST /v1beta/models/{model}:streamGenerateContent`, in `mock_google.rs`), Vertex AI's
//! (the same stream under `/v1/projects/{project}/locations/{location}/publishers/google/…`)
//! and Mistral's (`POST /mistral/v1/chat/completions`, in `mock_mistral.rs`), recording every
//! request it receives; and Google's OAuth token endpoint (`POST /token`), which grants
//! [`MOCK_ACCESS_TOKEN`] unless told otherwise.
//!
//! Each request pops the next [`Turn`] from one shared queue, whichever API it came in on. An
//! empty queue answers 418 with a clear message (a client error, so nothing retries it).

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use super::mock_google::{google_error, google_sse};
use super::mock_mistral::{mistral_error, mistral_sse, MISTRAL_PATH};
use super::mock_responses::responses_sse;

/// One scripted model reply.
#[derive(Debug, Clone)]
pub enum Turn {
    /// A plain assistant text answer (`stop` / `end_turn`).
    Text(String),
    /// Tool calls (in this order), optionally preceded by text (`tool_calls` / `tool_use`).
    ToolCalls {
        text: Option<String>,
        calls: Vec<(String, Value)>,
    },
    /// Reasoning (a thinking block, a reasoning summary or `reasoning_content`, each API its
    /// own way) followed by a text answer.
    Reasoned { reasoning: String, text: String },
    /// An HTTP error status with an error body carrying `message`.
    Status(u16, String),
}

impl Turn {
    pub fn text(s: &str) -> Turn {
        Turn::Text(s.to_string())
    }
    pub fn tools(calls: &[(&str, Value)]) -> Turn {
        Turn::ToolCalls {
            text: None,
            calls: calls
                .iter()
                .map(|(n, a)| (n.to_string(), a.clone()))
                .collect(),
        }
    }
    pub fn reasoned(reasoning: &str, text: &str) -> Turn {
        Turn::Reasoned {
            reasoning: reasoning.to_string(),
            text: text.to_string(),
        }
    }
    pub fn status(code: u16, message: &str) -> Turn {
        Turn::Status(code, message.to_string())
    }
}

/// A request the mock received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    /// The query string (`""` when none).
    pub query: String,
    /// Header names lower-cased.
    pub headers: BTreeMap<String, String>,
    pub body: Value,
}

/// Token counts every reply reports, in pi's terms (`input` excludes cached tokens). Each
/// API spells them its own way; pi normalizes them back to these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MockUsage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

impl Default for MockUsage {
    fn default() -> Self {
        MockUsage {
            input: 12,
            output: 7,
            cache_read: 0,
            cache_write: 0,
        }
    }
}

#[derive(Default)]
struct Shared {
    queue: Mutex<VecDeque<Turn>>,
    requests: Mutex<Vec<Recorded>>,
    next_id: AtomicUsize,
    usage: Mutex<MockUsage>,
    /// Google's OAuth token endpoint (`POST /token`): what it was sent, what it answers
    /// (`None`: a token of [`MOCK_ACCESS_TOKEN`] for an hour).
    token_requests: Mutex<Vec<Recorded>>,
    token_answer: Mutex<Option<(u16, Value)>>,
}

/// The access token the mock's token endpoint grants.
pub const MOCK_ACCESS_TOKEN: &str = "ya29.mock-access-token-SECRET";

fn recorded(req: &Request) -> Recorded {
    let body = serde_json::from_slice(&req.body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&req.body).into_owned()));
    let headers = req
        .headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_lowercase(),
                v.to_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    Recorded {
        path: req.url.path().to_string(),
        query: req.url.query().unwrap_or("").to_string(),
        headers,
        body,
    }
}

/// The token endpoint: records the exchange, answers as told.
struct TokenResponder {
    shared: Arc<Shared>,
}

impl Respond for TokenResponder {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        self.shared
            .token_requests
            .lock()
            .unwrap()
            .push(recorded(req));
        let answer = self.shared.token_answer.lock().unwrap().clone();
        let (status, body) = answer.unwrap_or_else(|| {
            (
                200,
                json!({"access_token": MOCK_ACCESS_TOKEN, "expires_in": 3599,
                    "token_type": "Bearer"}),
            )
        });
        ResponseTemplate::new(status).set_body_raw(body.to_string(), "application/json")
    }
}

#[derive(Clone, Copy)]
enum Api {
    OpenAi,
    Anthropic,
    Responses,
    Google,
    Mistral,
}

struct Responder {
    shared: Arc<Shared>,
    api: Api,
}

impl Respond for Responder {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        self.shared.requests.lock().unwrap().push(recorded(req));
        let turn = self.shared.queue.lock().unwrap().pop_front();
        let Some(turn) = turn else {
            return error_response(self.api, 418, "mock model: no more scripted turns");
        };
        let (reasoning, text, calls) = match turn {
            Turn::Status(code, msg) => return error_response(self.api, code, &msg),
            Turn::Text(t) => (None, Some(t), Vec::new()),
            Turn::Reasoned { reasoning, text } => (Some(reasoning), Some(text), Vec::new()),
            Turn::ToolCalls { text, calls } => (None, text, calls),
        };
        let (reasoning, text) = (reasoning.as_deref(), text.as_deref());
        let sse = match self.api {
            Api::OpenAi => openai_sse(reasoning, text, &calls, &self.shared),
            Api::Anthropic => anthropic_sse(reasoning, text, &calls, &self.shared),
            Api::Responses => {
                let usage = *self.shared.usage.lock().unwrap();
                responses_sse(reasoning, text, &calls, &self.shared.next_id, usage)
            }
            Api::Google => {
                let usage = *self.shared.usage.lock().unwrap();
                google_sse(reasoning, text, &calls, usage)
            }
            Api::Mistral => {
                let usage = *self.shared.usage.lock().unwrap();
                mistral_sse(reasoning, text, &calls, &self.shared.next_id, usage)
            }
        };
        ResponseTemplate::new(200)
            .insert_header("cache-control", "no-cache")
            .set_body_raw(sse, "text/event-stream")
    }
}

fn error_response(api: Api, code: u16, message: &str) -> ResponseTemplate {
    let body = match api {
        Api::OpenAi | Api::Responses => {
            json!({"error": {"message": message, "type": "mock_error", "code": code}})
        }
        Api::Anthropic => {
            json!({"type": "error", "error": {"type": "mock_error", "message": message}})
        }
        Api::Google => google_error(code, message),
        Api::Mistral => mistral_error(code, message),
    };
    ResponseTemplate::new(code).set_body_raw(body.to_string(), "application/json")
}

/// Split on char boundaries into pieces of at most `n` chars, so the client sees real deltas.
pub(super) fn pieces(s: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    chars.chunks(n.max(1)).map(|c| c.iter().collect()).collect()
}

fn openai_sse(
    reasoning: Option<&str>,
    text: Option<&str>,
    calls: &[(String, Value)],
    shared: &Shared,
) -> String {
    let mut out = String::new();
    let mut push = |choice_delta: Value, finish: Value| {
        let chunk = json!({
            "id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0,
            "model": "mock-model",
            "choices": [{"index": 0, "delta": choice_delta, "finish_reason": finish}],
        });
        out.push_str(&format!("data: {chunk}\n\n"));
    };
    push(json!({"role": "assistant", "content": ""}), Value::Null);
    if let Some(r) = reasoning {
        for p in pieces(r, 6) {
            push(json!({"reasoning_content": p}), Value::Null);
        }
    }
    if let Some(t) = text {
        for p in pieces(t, 5) {
            push(json!({"content": p}), Value::Null);
        }
    }
    for (i, (name, args)) in calls.iter().enumerate() {
        let id = format!("call_{}", shared.next_id.fetch_add(1, Ordering::SeqCst) + 1);
        push(
            json!({"tool_calls": [{"index": i, "id": id, "type": "function",
                "function": {"name": name, "arguments": ""}}]}),
            Value::Null,
        );
        for p in pieces(&args.to_string(), 7) {
            push(
                json!({"tool_calls": [{"index": i, "function": {"arguments": p}}]}),
                Value::Null,
            );
        }
    }
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    push(json!({}), json!(finish));
    let u = *shared.usage.lock().unwrap();
    let prompt = u.input + u.cache_read + u.cache_write;
    let mut usage = json!({"prompt_tokens": prompt, "completion_tokens": u.output,
        "total_tokens": prompt + u.output});
    if u.cache_read + u.cache_write > 0 {
        // OpenRouter's spelling, as pi 1.6 reads it: cached_tokens are reads, writes apart.
        usage["prompt_tokens_details"] = json!({"cached_tokens": u.cache_read,
            "cache_write_tokens": u.cache_write});
    }
    let usage = json!({
        "id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0,
        "model": "mock-model", "choices": [], "usage": usage,
    });
    out.push_str(&format!("data: {usage}\n\ndata: [DONE]\n\n"));
    out
}

fn anthropic_sse(
    reasoning: Option<&str>,
    text: Option<&str>,
    calls: &[(String, Value)],
    shared: &Shared,
) -> String {
    let u = *shared.usage.lock().unwrap();
    let mut start_usage = json!({"input_tokens": u.input, "output_tokens": 1});
    if u.cache_read + u.cache_write > 0 {
        start_usage["cache_read_input_tokens"] = json!(u.cache_read);
        start_usage["cache_creation_input_tokens"] = json!(u.cache_write);
    }
    let mut out = String::new();
    let mut ev =
        |name: &str, data: Value| out.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    ev(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_mock", "type": "message",
            "role": "assistant", "content": [], "model": "mock-claude", "stop_reason": null,
            "stop_sequence": null, "usage": start_usage}}),
    );
    ev("ping", json!({"type": "ping"}));
    let mut index = 0;
    if let Some(r) = reasoning {
        ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        );
        for p in pieces(r, 6) {
            ev(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "thinking_delta", "thinking": p}}),
            );
        }
        ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "signature_delta", "signature": "sig-mock"}}),
        );
        ev(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        );
        index += 1;
    }
    if let Some(t) = text {
        ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "text", "text": ""}}),
        );
        for p in pieces(t, 5) {
            ev(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "text_delta", "text": p}}),
            );
        }
        ev(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        );
        index += 1;
    }
    for (name, args) in calls {
        let id = format!(
            "toolu_{}",
            shared.next_id.fetch_add(1, Ordering::SeqCst) + 1
        );
        ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
        );
        for p in pieces(&args.to_string(), 7) {
            ev(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": p}}),
            );
        }
        ev(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        );
        index += 1;
    }
    let stop = if calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    ev(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
            "usage": {"output_tokens": u.output}}),
    );
    ev("message_stop", json!({"type": "message_stop"}));
    out
}

/// The mock model server. Tool call ids are `call_N` (OpenAI) / `toolu_N` (Anthropic), N
/// counting from 1 across the server's lifetime; Gemini sends none, as the real API does.
pub struct MockModel {
    server: MockServer,
    shared: Arc<Shared>,
}

impl MockModel {
    pub async fn start(turns: Vec<Turn>) -> MockModel {
        let server = MockServer::start().await;
        let shared = Arc::new(Shared::default());
        shared.queue.lock().unwrap().extend(turns);
        for (p, api) in [
            ("/v1/chat/completions", Api::OpenAi),
            ("/v1/messages", Api::Anthropic),
            ("/v1/responses", Api::Responses),
            // ChatGPT's Codex endpoint streams the Responses API's events.
            ("/backend-api/codex/responses", Api::Responses),
            (MISTRAL_PATH, Api::Mistral),
        ] {
            Mock::given(method("POST"))
                .and(path(p))
                .respond_with(Responder {
                    shared: shared.clone(),
                    api,
                })
                .mount(&server)
                .await;
        }
        // The Gemini API's, and Vertex AI's (in a project, or express mode's and a proxy's).
        for p in [
            r"^/v1beta/models/[^/]+:streamGenerateContent$",
            r"^/v1/(projects/[^/]+/locations/[^/]+/)?publishers/google/models/[^/]+:streamGenerateContent$",
        ] {
            Mock::given(method("POST"))
                .and(path_regex(p))
                .respond_with(Responder {
                    shared: shared.clone(),
                    api: Api::Google,
                })
                .mount(&server)
                .await;
        }
        Mock::given(method("POST"))
            .and(path("/token"))
            .respond_with(TokenResponder {
                shared: shared.clone(),
            })
            .mount(&server)
            .await;
        MockModel { server, shared }
    }

    pub fn uri(&self) -> String {
        self.server.uri()
    }

    /// The server itself, for the endpoints a provider needs besides the model's (Copilot's
    /// model list).
    pub fn server(&self) -> &MockServer {
        &self.server
    }

    /// Every model request received so far, in arrival order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.requests.lock().unwrap().clone()
    }

    /// The JSON bodies of every model request, in arrival order.
    pub fn bodies(&self) -> Vec<Value> {
        self.requests().into_iter().map(|r| r.body).collect()
    }

    /// The token counts every later reply reports (by default 12 input, 7 output, no cache).
    pub fn set_usage(&self, usage: MockUsage) {
        *self.shared.usage.lock().unwrap() = usage;
    }

    /// Every request the token endpoint (`/token`) received, in arrival order.
    pub fn token_requests(&self) -> Vec<Recorded> {
        self.shared.token_requests.lock().unwrap().clone()
    }

    /// What the token endpoint answers from now on: `status` and the JSON `body`.
    pub fn set_token_answer(&self, status: u16, body: Value) {
        *self.shared.token_answer.lock().unwrap() = Some((status, body));
    }

    /// Turns not yet consumed.
    pub fn pending(&self) -> usize {
        self.shared.queue.lock().unwrap().len()
    }

    /// pi's models.json with two providers on this server: `mock` (openai-completions, model
    /// `mock-model`) and `mock-anthropic` (anthropic-messages, model `mock-claude`).
    pub fn models_json(&self) -> Value {
        json!({"providers": {
            "mock": {"baseUrl": format!("{}/v1", self.uri()), "api": "openai-completions",
                "apiKey": "test-key", "models": [{"id": "mock-model"}]},
            "mock-anthropic": {"baseUrl": self.uri(), "api": "anthropic-messages",
                "apiKey": "test-key", "models": [{"id": "mock-claude"}]},
        }})
    }
}
