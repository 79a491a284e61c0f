//! Message counts, token totals and cost of a conversation: the numbers of pi's
//! `get_session_stats` (and `/session`), apart from the file, the id and the context usage,
//! which belong to whoever owns the session.
//!
//! pi counts over the agent's messages (`state.messages`, the context after compactions), so
//! after a compaction the summarised turns no longer count. Pass the same messages for pi's
//! numbers, or every message on the branch for lifetime totals; the arithmetic does not care.
//! Costs are summed from each assistant message's stored `usage.cost.total`, never recomputed:
//! a message is priced once, when it ends, at the rates of the model that produced it, so a
//! session that switched models (or was written by another pi) adds up what was really charged.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::entry::AgentMessage;
use crate::message::{js_number, Content, Message, Usage};

/// Token totals over assistant messages, as pi reports them (`total` is the sum of the four).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenTotals {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub total: u64,
}

/// What [`session_stats`] counts. Serializes with pi's `SessionStats` field names and order,
/// so a `get_session_stats` response can flatten it between `sessionId` and `contextUsage`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStats {
    pub user_messages: usize,
    pub assistant_messages: usize,
    /// Tool call blocks in assistant messages.
    pub tool_calls: usize,
    pub tool_results: usize,
    /// Every message, custom roles (`bashExecution`, `custom`, summaries) included.
    pub total_messages: usize,
    pub tokens: TokenTotals,
    /// Dollars: the sum of the assistant messages' (and `usage` entries') `usage.cost.total`.
    #[serde(serialize_with = "js_number")]
    pub cost: f64,
}

/// A message [`session_stats`] can count: ours, or pi's `AgentMessage` as a session holds it.
pub trait CountedMessage {
    /// Adds this message to `stats`.
    fn count_into(&self, stats: &mut SessionStats);
}

impl CountedMessage for Message {
    fn count_into(&self, stats: &mut SessionStats) {
        stats.total_messages += 1;
        match self {
            Message::User(_) => stats.user_messages += 1,
            Message::ToolResult(r) => {
                stats.tool_results += 1;
                // What a tool spent calling a model itself.
                if let Some(u) = &r.usage {
                    stats.add_tokens(u);
                }
            }
            // pi counts an extension's message and a system message only in the total.
            Message::Custom(_) | Message::System(_) => {}
            Message::Assistant(a) => {
                let calls = a
                    .content
                    .iter()
                    .filter(|c| matches!(c, Content::ToolCall(_)))
                    .count();
                stats.add_assistant(calls, &a.usage);
            }
        }
    }
}

impl CountedMessage for AgentMessage {
    fn count_into(&self, stats: &mut SessionStats) {
        let v = match self {
            AgentMessage::Typed(m) => return m.count_into(stats),
            AgentMessage::Raw(v) => v,
        };
        stats.total_messages += 1;
        match v.get("role").and_then(Value::as_str) {
            Some("user") => stats.user_messages += 1,
            Some("toolResult") => {
                stats.tool_results += 1;
                if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
                    stats.add_tokens(&raw_usage(Some(u)));
                }
            }
            Some("assistant") => {
                // Read leniently: a message our types cannot hold still counts what it has.
                let calls = v
                    .get("content")
                    .and_then(Value::as_array)
                    .map_or(0, |blocks| {
                        blocks
                            .iter()
                            .filter(|b| b.get("type").and_then(Value::as_str) == Some("toolCall"))
                            .count()
                    });
                stats.add_assistant(calls, &raw_usage(v.get("usage")));
            }
            _ => {}
        }
    }
}

impl<T: CountedMessage + ?Sized> CountedMessage for &T {
    fn count_into(&self, stats: &mut SessionStats) {
        (**self).count_into(stats)
    }
}

impl SessionStats {
    fn add_assistant(&mut self, tool_calls: usize, usage: &Usage) {
        self.assistant_messages += 1;
        self.tool_calls += tool_calls;
        self.add_tokens(usage);
    }

    /// A `usage` entry (a cache warm, say): its tokens and dollars count, no message does.
    /// Read as leniently as a raw assistant message's usage.
    pub fn add_usage_entry(&mut self, usage: &Value) {
        self.add_tokens(&raw_usage(Some(usage)));
    }

    fn add_tokens(&mut self, usage: &Usage) {
        let t = &mut self.tokens;
        t.input += usage.input;
        t.output += usage.output;
        t.cache_read += usage.cache_read;
        t.cache_write += usage.cache_write;
        t.total = t.input + t.output + t.cache_read + t.cache_write;
        self.cost += usage.cost.total;
    }
}

/// Counts `messages` (in order, as pi adds the costs up): messages per role, tool calls,
/// tokens and dollars over the assistant messages. Takes `&[Message]`, `&[AgentMessage]`, or
/// any iterator of either, e.g. a built context:
/// `session_stats(context.messages.iter().map(|m| m.message.as_ref()))`.
pub fn session_stats<M: CountedMessage>(messages: impl IntoIterator<Item = M>) -> SessionStats {
    let mut stats = SessionStats::default();
    for m in messages {
        m.count_into(&mut stats);
    }
    stats
}

/// The usage of a raw assistant message; missing or malformed numbers count as 0.
fn raw_usage(usage: Option<&Value>) -> Usage {
    let tokens = |k: &str| {
        usage
            .and_then(|u| u.get(k))
            .and_then(|v| v.as_u64().or_else(|| v.as_f64().map(|f| f.max(0.0) as u64)))
            .unwrap_or(0)
    };
    let mut u = Usage {
        input: tokens("input"),
        output: tokens("output"),
        cache_read: tokens("cacheRead"),
        cache_write: tokens("cacheWrite"),
        ..Usage::default()
    };
    u.cost.total = usage
        .and_then(|u| u.pointer("/cost/total"))
        .and_then(Value::as_f64)
        .unwrap_or(0.0);
    u
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::message::{AssistantMessage, Cost, ToolCall};
    use crate::provider::cost::CostRates;

    fn assistant(usage: (u64, u64, u64, u64), rates: CostRates, calls: usize) -> Message {
        let mut a = AssistantMessage::empty("anthropic-messages", "anthropic", "m");
        for n in 0..calls {
            a.content.push(Content::ToolCall(ToolCall {
                thought_signature: None,
                id: format!("c{n}"),
                name: "read".into(),
                arguments: json!({}),
            }));
        }
        a.usage = Usage {
            input: usage.0,
            output: usage.1,
            cache_read: usage.2,
            cache_write: usage.3,
            total_tokens: usage.0 + usage.1 + usage.2 + usage.3,
            cost: Cost::default(),
            ..Usage::default()
        };
        rates.price(&mut a.usage);
        Message::Assistant(a)
    }

    const SONNET: CostRates = CostRates {
        input: 3.0,
        output: 15.0,
        cache_read: 0.3,
        cache_write: 3.75,
        tiers: Vec::new(),
    };

    fn tool_result() -> Message {
        serde_json::from_value(json!({"role": "toolResult", "toolCallId": "c0",
            "toolName": "read", "content": [], "isError": false, "timestamp": 1}))
        .unwrap()
    }

    #[test]
    fn sums_tokens_cache_included_and_cost_over_assistant_messages() {
        let messages = vec![
            Message::user("read it"),
            assistant((1_000_000, 100_000, 0, 200_000), SONNET, 2),
            tool_result(),
            tool_result(),
            assistant((50_000, 20_000, 1_000_000, 0), SONNET, 0),
        ];
        let s = session_stats(&messages);
        assert_eq!(
            (
                s.user_messages,
                s.assistant_messages,
                s.tool_calls,
                s.tool_results
            ),
            (1, 2, 2, 2)
        );
        assert_eq!(s.total_messages, 5);
        assert_eq!(
            s.tokens,
            TokenTotals {
                input: 1_050_000,
                output: 120_000,
                cache_read: 1_000_000,
                cache_write: 200_000,
                total: 2_370_000,
            }
        );
        // 3 + 1.5 + 0.75 for the first, 0.15 + 0.3 + 0.3 for the second.
        assert!((s.cost - 6.0).abs() < 1e-12, "{}", s.cost);
    }

    #[test]
    fn a_model_without_rates_adds_tokens_but_no_cost() {
        let messages = [
            assistant((1000, 10, 500, 5), CostRates::default(), 0),
            assistant((1_000_000, 0, 0, 0), SONNET, 0),
        ];
        let s = session_stats(&messages);
        assert_eq!(s.tokens.total, 1515 + 1_000_000);
        assert_eq!(s.cost, 3.0);
    }

    #[test]
    fn costs_are_summed_as_stored_not_recomputed() {
        // Priced at other rates when it ended (another model, or another pi).
        let mut m = assistant((1_000_000, 0, 0, 0), SONNET, 0);
        if let Message::Assistant(a) = &mut m {
            a.usage.cost.total = 0.25;
        }
        assert_eq!(session_stats([&m]).cost, 0.25);
    }

    #[test]
    fn raw_and_custom_messages_count_like_pis() {
        let typed = assistant((10, 5, 0, 0), SONNET, 1);
        let messages = vec![
            AgentMessage::from(Message::user("hi")),
            AgentMessage::from(typed),
            // An assistant message our types cannot read (a block type we do not know).
            AgentMessage::Raw(json!({"role": "assistant", "content": [
                    {"type": "toolCall", "id": "x", "name": "bash", "arguments": {}},
                    {"type": "redacted_thinking", "data": "…"}],
                "usage": {"input": 100, "output": 20, "cacheRead": 300, "cacheWrite": 4,
                    "totalTokens": 424, "cost": {"total": 0.5}}})),
            AgentMessage::Raw(json!({"role": "bashExecution", "command": "ls", "output": ""})),
            AgentMessage::Raw(json!({"role": "compactionSummary", "summary": "s"})),
            AgentMessage::Raw(json!({"role": "assistant", "content": []})),
        ];
        let s = session_stats(&messages);
        assert_eq!(s.total_messages, 6);
        assert_eq!((s.user_messages, s.assistant_messages), (1, 3));
        assert_eq!((s.tool_calls, s.tool_results), (2, 0));
        assert_eq!(
            (
                s.tokens.input,
                s.tokens.output,
                s.tokens.cache_read,
                s.tokens.cache_write
            ),
            (110, 25, 300, 4)
        );
        assert_eq!(s.tokens.total, 439);
        let typed_cost = 3.0 / 1e6 * 10.0 + 15.0 / 1e6 * 5.0;
        assert_eq!(s.cost, typed_cost + 0.5);
    }

    #[test]
    fn serializes_with_pis_names_in_pis_order() {
        let s = session_stats([assistant((2, 1, 0, 0), CostRates::default(), 0)]);
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"userMessages":0,"assistantMessages":1,"toolCalls":0,"toolResults":0,"totalMessages":1,"tokens":{"input":2,"output":1,"cacheRead":0,"cacheWrite":0,"total":3},"cost":0}"#
        );
        assert_eq!(
            session_stats(Vec::<Message>::new()),
            SessionStats::default()
        );
    }
}
