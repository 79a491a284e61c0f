//! A session's messages as transcript items, for opening, resuming or switching sessions: the
//! same items a live run would have produced (tool calls paired with their results), plus pi's
//! other roles (`!` commands, compaction and branch summaries, hook messages) as they read.

use serde_json::Value;

use super::text::Style;
use super::tool_view::{ToolCallView, ToolStatus};
use super::transcript::{BashView, Item, TextItem};
use crate::message::{Content, Message};
use crate::session::AgentMessage;

pub fn items_of(messages: &[AgentMessage]) -> Vec<Item> {
    let mut items = Vec::new();
    for m in messages {
        match m {
            AgentMessage::Typed(m) => push_message(&mut items, m),
            AgentMessage::Raw(v) => match serde_json::from_value::<Message>(v.clone()) {
                Ok(m) => push_message(&mut items, &m),
                Err(_) => push_other(&mut items, v),
            },
        }
    }
    items
}

fn push_message(items: &mut Vec<Item>, m: &Message) {
    match m {
        Message::User(u) => items.push(Item::User(u.content.as_text())),
        Message::Custom(c) if c.display => {
            items.push(custom_notice(&c.custom_type, &c.content.as_text()))
        }
        // The prompt and tool loadout are not part of the chat (`/tree` lists them).
        Message::Custom(_) | Message::System(_) => {}
        Message::Assistant(a) => {
            for c in &a.content {
                match c {
                    Content::Thinking { thinking, .. } if !thinking.trim().is_empty() => items
                        .push(Item::Thinking {
                            text: thinking.clone(),
                            done: true,
                        }),
                    Content::Text { text, .. } if !text.trim().is_empty() => {
                        items.push(Item::Text(TextItem::finished(text)));
                    }
                    Content::ToolCall(tc) => {
                        let mut v =
                            ToolCallView::new(tc.id.clone(), tc.name.clone(), tc.arguments.clone());
                        // A call with no result (the run stopped first) reads as not run.
                        v.status = ToolStatus::Failed;
                        v.output = "no result".into();
                        items.push(Item::Tool(v));
                    }
                    _ => {}
                }
            }
            if let Some(e) = &a.error_message {
                items.push(Item::Notice {
                    text: format!("Error: {e}"),
                    style: Style::plain(),
                });
            }
        }
        Message::ToolResult(r) => {
            let found = items.iter_mut().rev().find_map(|i| match i {
                Item::Tool(v) if v.id == r.tool_call_id => Some(v),
                _ => None,
            });
            if let Some(v) = found {
                v.output = crate::message::text_of(&r.content);
                v.details = r.details.clone();
                v.duration = r.duration_ms.map(std::time::Duration::from_millis);
                v.status = if r.is_error {
                    ToolStatus::Failed
                } else {
                    ToolStatus::Done
                };
            }
        }
    }
}

fn push_other(items: &mut Vec<Item>, v: &Value) {
    let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    match v.get("role").and_then(Value::as_str) {
        Some("bashExecution") => items.push(Item::Bash(BashView {
            command: s("command"),
            output: s("output"),
            status: Some(
                v.get("exitCode")
                    .and_then(Value::as_i64)
                    .map_or_else(|| "?".into(), |c| c.to_string()),
            ),
            excluded: v
                .get("excludeFromContext")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        })),
        Some("compactionSummary") => items.push(compaction_item(
            v.get("tokensBefore").and_then(Value::as_u64).unwrap_or(0),
            &s("summary"),
        )),
        Some("branchSummary") => items.push(Item::Summary {
            label: "[branch]".into(),
            headline: "Branch summary".into(),
            summary: s("summary"),
        }),
        Some("custom") if v.get("display").and_then(Value::as_bool) != Some(false) => {
            let text = match v.get("content") {
                Some(Value::String(t)) => t.clone(),
                Some(Value::Array(_)) => {
                    serde_json::from_value::<Vec<Content>>(v["content"].clone())
                        .map(|c| crate::message::text_of(&c))
                        .unwrap_or_default()
                }
                _ => String::new(),
            };
            items.push(custom_notice(&s("customType"), &text));
        }
        _ => {}
    }
}

/// An extension's message as the transcript shows it: its type as a label, then its text, on
/// the theme's custom-message panel.
pub(super) fn custom_notice(custom_type: &str, text: &str) -> Item {
    Item::Custom {
        kind: custom_type.to_string(),
        text: text.to_string(),
    }
}

/// A compaction's summary as pi 1.6 shows it: `[compaction]`, `Compacted from 12,345 tokens`.
pub(super) fn compaction_item(tokens_before: u64, summary: &str) -> Item {
    Item::Summary {
        label: "[compaction]".into(),
        headline: format!("Compacted from {} tokens", thousands(tokens_before)),
        summary: summary.to_string(),
    }
}

/// 12345 → "12,345" (as `toLocaleString` writes it in pi 1.6).
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
