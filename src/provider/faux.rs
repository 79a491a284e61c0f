//! `faux`: a scripted, offline model. Each call pops the next step of a script and streams it
//! as real deltas (3–5 "tokens" of 4 characters each), with usage synthesised from lengths
//! (chars / 4), as the TypeScript pi's test provider does, and priced at the model's rates. It powers the README demo and the
//! black-box tests, so it goes through exactly the same loop as a real provider.
//!
//! Script format (JSON): `{"steps": [step, …]}` or a bare array of steps, where a step is a
//! string (assistant text) or `{"thinking"?, "text"?, "toolCalls"?: [{"name", "arguments",
//! "id"?}], "error"?}`.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Mutex;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::Value;

use super::{CallContext, Provider, ProviderError, Request};
use crate::delta::AssistantDelta;
use crate::message::{AssistantMessage, Content, Message, StopReason, ToolCall, Usage};

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum FauxStep {
    Text(String),
    Full(FauxTurn),
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FauxTurn {
    #[serde(default)]
    pub thinking: Option<String>,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub tool_calls: Vec<FauxToolCall>,
    #[serde(default)]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FauxToolCall {
    pub name: String,
    #[serde(default = "empty_object")]
    pub arguments: Value,
    #[serde(default)]
    pub id: Option<String>,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// A parsed script.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FauxScript {
    pub steps: Vec<FauxStep>,
}

#[derive(Debug, thiserror::Error)]
pub enum FauxScriptError {
    #[error("cannot read faux script {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("invalid faux script {path}: {source}")]
    Parse {
        path: String,
        source: serde_json::Error,
    },
}

impl FauxScript {
    pub fn parse(text: &str) -> Result<Self, serde_json::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Doc {
            Steps { steps: Vec<FauxStep> },
            Bare(Vec<FauxStep>),
        }
        let steps = match serde_json::from_str::<Doc>(text)? {
            Doc::Steps { steps } | Doc::Bare(steps) => steps,
        };
        Ok(FauxScript { steps })
    }

    pub fn load(path: &Path) -> Result<Self, FauxScriptError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| FauxScriptError::Read {
            path: shown.clone(),
            source,
        })?;
        Self::parse(&text).map_err(|source| FauxScriptError::Parse {
            path: shown,
            source,
        })
    }
}

pub struct Faux {
    queue: Mutex<VecDeque<FauxStep>>,
    calls: Mutex<u64>,
}

impl Faux {
    pub fn new(script: FauxScript) -> Self {
        Faux {
            queue: Mutex::new(script.steps.into()),
            calls: Mutex::new(0),
        }
    }

    fn next_step(&self) -> Option<(FauxStep, u64)> {
        let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        *calls += 1;
        let step = self
            .queue
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop_front()?;
        Some((step, *calls))
    }
}

/// Split text into chunks of 3–5 four-character tokens, on char boundaries, deterministically.
fn chunks(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut n = 0usize;
    while i < chars.len() {
        let size = (3 + n % 3) * 4;
        let end = (i + size).min(chars.len());
        out.push(chars[i..end].iter().collect());
        i = end;
        n += 1;
    }
    out
}

/// The length of the messages' JSON, counted while serializing: building the string would
/// hold a second copy of the whole conversation for a number.
fn context_chars(req: &Request) -> usize {
    let mut count = ByteCount(0);
    // The prompt is counted once, as the request's.
    let conversation: Vec<&Message> = req
        .messages
        .iter()
        .map(|m| m.as_ref())
        .filter(|m| !matches!(m, Message::System(_)))
        .collect();
    let msgs = match serde_json::to_writer(&mut count, &conversation) {
        Ok(()) => count.0,
        Err(_) => 0,
    };
    req.system_prompt.len() + msgs
}

/// A writer that only counts.
struct ByteCount(usize);

impl std::io::Write for ByteCount {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[async_trait]
impl Provider for Faux {
    fn api(&self) -> &'static str {
        "faux"
    }

    async fn stream(
        &self,
        req: &Request,
        ctx: &CallContext,
    ) -> Result<AssistantMessage, ProviderError> {
        let Some((step, call)) = self.next_step() else {
            return Err(ProviderError::Other("No more faux responses queued".into()));
        };
        let turn = match step {
            FauxStep::Text(text) => FauxTurn {
                text: Some(text),
                ..Default::default()
            },
            FauxStep::Full(t) => t,
        };
        if let Some(err) = turn.error {
            return Err(ProviderError::Other(err));
        }
        let m = &req.model;
        let mut msg = AssistantMessage::empty(&m.api, &m.provider, &m.id);
        let send = |d: AssistantDelta| {
            let _ = ctx.deltas.send(d);
        };
        send(AssistantDelta::Start);
        let mut out_chars = 0usize;
        if let Some(thinking) = turn.thinking {
            let idx = msg.content.len();
            send(AssistantDelta::ThinkingStart { content_index: idx });
            stream_chunks(ctx, &thinking, |delta| AssistantDelta::ThinkingDelta {
                content_index: idx,
                delta,
            })
            .await?;
            out_chars += thinking.len();
            send(AssistantDelta::ThinkingEnd {
                content_index: idx,
                content: thinking.clone(),
            });
            msg.content.push(Content::Thinking {
                thinking,
                signature: None,
            });
        }
        if let Some(text) = turn.text {
            let idx = msg.content.len();
            send(AssistantDelta::TextStart { content_index: idx });
            stream_chunks(ctx, &text, |delta| AssistantDelta::TextDelta {
                content_index: idx,
                delta,
            })
            .await?;
            out_chars += text.len();
            send(AssistantDelta::TextEnd {
                content_index: idx,
                content: text.clone(),
            });
            msg.content.push(Content::text(text));
        }
        for (n, tc) in turn.tool_calls.into_iter().enumerate() {
            let idx = msg.content.len();
            let call = ToolCall {
                id: tc.id.unwrap_or_else(|| format!("faux_{call}_{n}")),
                name: tc.name,
                arguments: tc.arguments,
                thought_signature: None,
            };
            let json = call.arguments.to_string();
            send(AssistantDelta::ToolCallStart {
                content_index: idx,
                id: call.id.clone(),
                tool_name: call.name.clone(),
            });
            stream_chunks(ctx, &json, |delta| AssistantDelta::ToolCallDelta {
                content_index: idx,
                delta,
            })
            .await?;
            out_chars += json.len() + call.name.len();
            send(AssistantDelta::ToolCallEnd {
                content_index: idx,
                tool_call: call.clone(),
            });
            msg.content.push(Content::ToolCall(call));
        }
        msg.stop_reason = if msg.tool_calls().is_empty() {
            StopReason::Stop
        } else {
            StopReason::ToolUse
        };
        let input = (context_chars(req) / 4) as u64;
        let output = out_chars.div_ceil(4) as u64;
        msg.usage = Usage {
            input,
            output,
            total_tokens: input + output,
            ..Usage::default()
        };
        req.model.cost.price(&mut msg.usage);
        send(AssistantDelta::Done {
            reason: msg.stop_reason,
        });
        Ok(msg)
    }
}

/// Sends `text` a chunk a delta, letting other tasks run between them and noticing aborts.
async fn stream_chunks(
    ctx: &CallContext,
    text: &str,
    delta: impl Fn(String) -> AssistantDelta,
) -> Result<(), ProviderError> {
    for c in chunks(text) {
        yield_or_abort(ctx).await?;
        let _ = ctx.deltas.send(delta(c));
    }
    Ok(())
}

/// Let other tasks run between deltas (so the stream really is incremental) and notice aborts.
async fn yield_or_abort(ctx: &CallContext) -> Result<(), ProviderError> {
    if ctx.cancel.is_cancelled() {
        return Err(ProviderError::Aborted);
    }
    tokio::task::yield_now().await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_script_shapes() {
        let a = FauxScript::parse(
            r#"{"steps":["hi",{"toolCalls":[{"name":"bash","arguments":{"command":"ls"}}]}]}"#,
        )
        .unwrap();
        assert_eq!(a.steps.len(), 2);
        let b = FauxScript::parse(r#"["x"]"#).unwrap();
        assert_eq!(b.steps, vec![FauxStep::Text("x".into())]);
        assert!(FauxScript::parse(r#"{"steps":[{"txt":"typo"}]}"#).is_err());
    }

    #[test]
    fn chunks_cover_text_on_char_boundaries() {
        let t = "héllo wörld, this is a longer piece of text ✓";
        let c = chunks(t);
        assert!(c.len() > 1);
        assert_eq!(c.concat(), t);
    }
}
