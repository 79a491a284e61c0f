//! Building what the model sees from a leaf, as pi's `buildSessionContext` does.
//!
//! Walk from the leaf to the root. Model and thinking level are replayed over the whole path
//! (`model_change`, `thinking_level_change`, and each assistant message's provider/model).
//! With a compaction on the path (the last one counts), the context is its summary, then the
//! compaction's `retainedTail` when it has one (newer pi: a self-contained checkpoint), else
//! the path entries from `firstKeptEntryId` up to the compaction, then everything after it.
//! `message`, `custom_message` and non-empty `branch_summary` entries produce messages;
//! `context_edit`s on the path replace or drop their targets (latest wins); labels, custom
//! entries, session info, usage and unknown types produce nothing.
//!
//! The result keeps pi's `AgentMessage` roles (`compactionSummary`, `branchSummary`,
//! `custom`, `bashExecution`); [`SessionContext::llm_messages`] applies pi's `convertToLlm`,
//! which turns those into user messages (summaries wrapped in pi's `<summary>` prefixes).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{json, Value};

use super::entry::{content_text, AgentMessage, Entry, EntryKind, Replacement};
use super::manager::Session;
use crate::message::{Content, CustomMessage, Message, UserContent, UserMessage};

/// pi's `COMPACTION_SUMMARY_PREFIX`.
pub const COMPACTION_SUMMARY_PREFIX: &str =
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
/// pi's `COMPACTION_SUMMARY_SUFFIX`.
pub const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";
/// pi's `BRANCH_SUMMARY_PREFIX`.
pub const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
/// pi's `BRANCH_SUMMARY_SUFFIX` (no leading newline, unlike the compaction one).
pub const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

/// The model selected on the path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRef {
    pub provider: String,
    pub model_id: String,
}

/// One context message and the entry it came from (the compaction for its summary and
/// retained tail). Stored messages are borrowed from the session, so building a context
/// does not copy the conversation, and [`SessionContext::llm_messages`] shares the typed ones.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextMessage<'a> {
    pub entry_id: &'a str,
    pub message: Cow<'a, AgentMessage>,
}

/// The context at a leaf.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionContext<'a> {
    pub messages: Vec<ContextMessage<'a>>,
    /// `"off"` unless the path changed it.
    pub thinking_level: String,
    pub model: Option<ModelRef>,
}

impl SessionContext<'_> {
    /// The messages as the provider gets them (pi's `convertToLlm`): summaries, custom
    /// messages and bash executions become user messages; bash executions marked
    /// `excludeFromContext` and roles we do not know are dropped; system messages stay (the
    /// agent replays them into the prompt it declares). Typed
    /// messages are the session's own allocations (reference-counted, not copied), so the
    /// agent's context built from this holds no second copy of the conversation.
    pub fn llm_messages(&self) -> Vec<Arc<Message>> {
        self.messages
            .iter()
            .filter_map(|m| to_llm(&m.message))
            .collect()
    }
}

/// Builds the context at `leaf` (an index into the session's entries).
pub fn build_context(session: &Session, leaf: Option<usize>) -> SessionContext<'_> {
    let entries = session.entries();
    let path = session.path_indices(leaf);
    let mut thinking_level = "off".to_string();
    let mut model = None;
    let mut compaction_at = None;
    let mut edits: HashMap<&str, Option<&Replacement>> = HashMap::new();
    for (pos, &i) in path.iter().enumerate() {
        match &entries[i].kind {
            EntryKind::ThinkingLevelChange(t) => thinking_level = t.thinking_level.clone(),
            EntryKind::ModelChange(m) => {
                model = Some(ModelRef {
                    provider: m.provider.clone(),
                    model_id: m.model_id.clone(),
                })
            }
            EntryKind::Message(m) if m.message.role() == "assistant" => {
                if let Some(r) = assistant_model(&m.message) {
                    model = Some(r);
                }
            }
            EntryKind::Compaction(_) => compaction_at = Some(pos),
            EntryKind::ContextEdit(e) => {
                edits.insert(e.target_id.as_str(), e.replacement.as_ref());
            }
            _ => {}
        }
    }

    let mut out = Vec::new();
    match compaction_at {
        Some(cpos) => {
            let ce = &entries[path[cpos]];
            let EntryKind::Compaction(c) = &ce.kind else {
                unreachable!("compaction_at points at a compaction")
            };
            // pi 1.6: the prompt as it stood, then the summary; the kept part's own system
            // messages are in it already.
            if let Some(system) = &c.system_message {
                out.push(ContextMessage {
                    entry_id: &ce.id,
                    message: Cow::Borrowed(system),
                });
            }
            out.push(ContextMessage {
                entry_id: &ce.id,
                message: Cow::Owned(AgentMessage::Raw(json!({
                    "role": "compactionSummary",
                    "summary": c.summary,
                    "tokensBefore": c.tokens_before,
                    "timestamp": ce.timestamp_ms(),
                }))),
            });
            match &c.retained_tail {
                Some(tail) => {
                    for m in tail {
                        out.push(ContextMessage {
                            entry_id: &ce.id,
                            message: Cow::Borrowed(m),
                        });
                    }
                }
                None => {
                    let first_kept = c.first_kept_entry_id.as_deref();
                    let start = path[..cpos]
                        .iter()
                        .position(|&i| Some(entries[i].id.as_str()) == first_kept);
                    if let Some(start) = start {
                        for &i in &path[start..cpos] {
                            if c.system_message.is_some()
                                && entries[i].message().is_some_and(is_system)
                            {
                                continue;
                            }
                            emit(&entries[i], &edits, &mut out);
                        }
                    }
                }
            }
            for &i in &path[cpos + 1..] {
                emit(&entries[i], &edits, &mut out);
            }
        }
        None => {
            for &i in &path {
                emit(&entries[i], &edits, &mut out);
            }
        }
    }
    SessionContext {
        messages: out,
        thinking_level,
        model,
    }
}

fn is_system(m: &AgentMessage) -> bool {
    match m {
        AgentMessage::Typed(t) => matches!(t.as_ref(), Message::System(_)),
        AgentMessage::Raw(v) => v.get("role").and_then(Value::as_str) == Some("system"),
    }
}

fn emit<'a>(
    e: &'a Entry,
    edits: &HashMap<&str, Option<&Replacement>>,
    out: &mut Vec<ContextMessage<'a>>,
) {
    if let Some(message) = entry_message(e, edits) {
        out.push(ContextMessage {
            entry_id: &e.id,
            message,
        });
    }
}

fn assistant_model(m: &AgentMessage) -> Option<ModelRef> {
    match m {
        AgentMessage::Typed(t) => match t.as_ref() {
            Message::Assistant(a) => Some(ModelRef {
                provider: a.provider.clone(),
                model_id: a.model.clone(),
            }),
            _ => None,
        },
        AgentMessage::Raw(v) => Some(ModelRef {
            provider: v.get("provider")?.as_str()?.to_string(),
            model_id: v.get("model")?.as_str()?.to_string(),
        }),
    }
}

/// The context message of one entry, with any context edit applied.
fn entry_message<'a>(
    e: &'a Entry,
    edits: &HashMap<&str, Option<&Replacement>>,
) -> Option<Cow<'a, AgentMessage>> {
    let edit = edits.get(e.id.as_str());
    if let Some(None) = edit {
        return None;
    }
    let replacement = edit.copied().flatten().map(|r| &r.content);
    match &e.kind {
        EntryKind::Message(m) => match replacement {
            None => Some(Cow::Borrowed(&m.message)),
            Some(content) => {
                let mut v = m.message.to_value();
                if let Some(obj) = v.as_object_mut() {
                    obj.insert("content".into(), content.clone());
                }
                Some(Cow::Owned(AgentMessage::from_value(v)))
            }
        },
        EntryKind::CustomMessage(c) => {
            let mut v = json!({
                "role": "custom",
                "customType": c.custom_type,
                "content": replacement.unwrap_or(&c.content),
                "display": c.display,
            });
            if let (Some(d), Some(obj)) = (&c.details, v.as_object_mut()) {
                obj.insert("details".into(), d.clone());
            }
            if let Some(obj) = v.as_object_mut() {
                obj.insert("timestamp".into(), Value::from(e.timestamp_ms()));
            }
            Some(Cow::Owned(AgentMessage::Raw(v)))
        }
        EntryKind::BranchSummary(b) if !b.summary.is_empty() => {
            Some(Cow::Owned(AgentMessage::Raw(json!({
                "role": "branchSummary",
                "summary": b.summary,
                "fromId": b.from_id,
                "timestamp": e.timestamp_ms(),
            }))))
        }
        _ => None,
    }
}

fn user_text(text: String, timestamp: i64) -> Arc<Message> {
    Arc::new(Message::User(UserMessage {
        content: UserContent::Blocks(vec![Content::text(text)]),
        timestamp,
    }))
}

/// pi's `convertToLlm` for one message: a typed message is shared, a converted one is new.
pub fn to_llm(m: &AgentMessage) -> Option<Arc<Message>> {
    let AgentMessage::Raw(v) = m else {
        return m.to_message();
    };
    let ts = v.get("timestamp").and_then(Value::as_i64).unwrap_or(0);
    let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("");
    match s("role") {
        "compactionSummary" => Some(user_text(
            format!(
                "{COMPACTION_SUMMARY_PREFIX}{}{COMPACTION_SUMMARY_SUFFIX}",
                s("summary")
            ),
            ts,
        )),
        "branchSummary" => Some(user_text(
            format!(
                "{BRANCH_SUMMARY_PREFIX}{}{BRANCH_SUMMARY_SUFFIX}",
                s("summary")
            ),
            ts,
        )),
        // Kept as the extension's message (the model receives it as a user message), so a
        // resumed context and a live one hold the same thing.
        "custom" => {
            let content = v.get("content");
            let content = match content {
                Some(Value::String(s)) => UserContent::Text(s.clone()),
                Some(Value::Array(_)) => UserContent::Blocks(
                    content
                        .and_then(|c| serde_json::from_value::<Vec<Content>>(c.clone()).ok())
                        .unwrap_or_else(|| vec![Content::text(content_text(content))]),
                ),
                _ => UserContent::Blocks(vec![Content::text(content_text(content))]),
            };
            Some(Arc::new(Message::Custom(CustomMessage {
                custom_type: s("customType").to_string(),
                content,
                display: v.get("display").and_then(Value::as_bool).unwrap_or(false),
                details: v.get("details").cloned(),
                timestamp: ts,
            })))
        }
        "bashExecution" => {
            if v.get("excludeFromContext").and_then(Value::as_bool) == Some(true) {
                return None;
            }
            Some(user_text(bash_execution_text(v), ts))
        }
        _ => m.to_message(),
    }
}

/// pi's `bashExecutionToText`.
fn bash_execution_text(v: &Value) -> String {
    let command = v.get("command").and_then(Value::as_str).unwrap_or("");
    let output = v.get("output").and_then(Value::as_str).unwrap_or("");
    let mut text = format!("Ran `{command}`\n");
    if output.is_empty() {
        text.push_str("(no output)");
    } else {
        text.push_str(&format!("```\n{output}\n```"));
    }
    if v.get("cancelled").and_then(Value::as_bool) == Some(true) {
        text.push_str("\n\n(command cancelled)");
    } else if let Some(code) = v
        .get("exitCode")
        .and_then(Value::as_i64)
        .filter(|&c| c != 0)
    {
        text.push_str(&format!("\n\nCommand exited with code {code}"));
    }
    if v.get("truncated").and_then(Value::as_bool) == Some(true) {
        if let Some(p) = v.get("fullOutputPath").and_then(Value::as_str) {
            text.push_str(&format!("\n\n[Output truncated. Full output: {p}]"));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{AssistantMessage, Content};
    use crate::session::entry::Compaction;

    fn assistant(text: &str, model: &str) -> Message {
        let mut a = AssistantMessage::empty("faux", "prov", model);
        a.content.push(Content::text(text));
        Message::Assistant(a)
    }

    fn texts(ctx: &SessionContext) -> Vec<String> {
        ctx.llm_messages()
            .iter()
            .map(|m| match m.as_ref() {
                Message::User(u) => u.content.as_text(),
                Message::Custom(c) => c.content.as_text(),
                Message::Assistant(a) => a.text(),
                Message::ToolResult(t) => crate::message::text_of(&t.content),
                Message::System(s) => s.text(),
            })
            .collect()
    }

    #[test]
    fn linear_path_with_model_and_thinking_replay() {
        let mut s = Session::in_memory("/w");
        assert_eq!(s.context().thinking_level, "off");
        s.append_thinking_level_change("high").unwrap();
        s.append_message(Message::user("q")).unwrap();
        s.append_message(assistant("a", "m1")).unwrap();
        s.append_model_change("other", "m2").unwrap();
        s.append_label("nonexistent", None).unwrap_err();
        s.append_custom("ext", None).unwrap();
        s.append_session_info("n").unwrap();
        let ctx = s.context();
        assert_eq!(texts(&ctx), ["q", "a"]);
        assert_eq!(ctx.thinking_level, "high");
        assert_eq!(
            ctx.model,
            Some(ModelRef {
                provider: "other".into(),
                model_id: "m2".into()
            })
        );
    }

    #[test]
    fn compaction_sends_summary_then_kept_then_later() {
        let mut s = Session::in_memory("/w");
        s.append_message(Message::user("old q")).unwrap();
        s.append_message(assistant("old a", "m")).unwrap();
        let kept = s.append_message(Message::user("kept q")).unwrap();
        s.append_message(assistant("kept a", "m")).unwrap();
        s.append_compaction(Compaction {
            summary: "SUM".into(),
            first_kept_entry_id: Some(kept),
            tokens_before: 100,
            details: None,
            from_hook: None,
            usage: None,
            retained_tail: None,
            system_message: None,
            extra: Default::default(),
        })
        .unwrap();
        s.append_message(Message::user("new q")).unwrap();
        let t = texts(&s.context());
        assert_eq!(t.len(), 4);
        assert_eq!(
            t[0],
            format!("{COMPACTION_SUMMARY_PREFIX}SUM{COMPACTION_SUMMARY_SUFFIX}")
        );
        assert_eq!(&t[1..], ["kept q", "kept a", "new q"]);
    }

    #[test]
    fn retained_tail_and_retain_none_compactions() {
        let mut s = Session::in_memory("/w");
        s.append_message(Message::user("old")).unwrap();
        s.append_compaction(Compaction {
            summary: "S".into(),
            first_kept_entry_id: None,
            tokens_before: 1,
            details: None,
            from_hook: None,
            usage: None,
            system_message: None,
            retained_tail: Some(vec![AgentMessage::Raw(
                json!({"role":"user","content":"tail","timestamp":1}),
            )]),
            extra: Default::default(),
        })
        .unwrap();
        s.append_message(Message::user("after")).unwrap();
        assert_eq!(&texts(&s.context())[1..], ["tail", "after"]);

        let mut r = Session::in_memory("/w");
        r.append_message(Message::user("old")).unwrap();
        r.append_compaction(Compaction {
            summary: "S".into(),
            first_kept_entry_id: None,
            tokens_before: 1,
            details: None,
            from_hook: None,
            usage: None,
            retained_tail: None,
            system_message: None,
            extra: Default::default(),
        })
        .unwrap();
        let EntryKind::Compaction(c) = &r.leaf_entry().unwrap().kind else {
            panic!()
        };
        assert_eq!(c.first_kept_entry_id.as_deref(), r.leaf_id());
        assert_eq!(texts(&r.context()).len(), 1);
    }

    #[test]
    fn custom_messages_stay_custom_and_summaries_and_bash_become_user_messages() {
        let mut s = Session::in_memory("/w");
        let q = s.append_message(Message::user("q")).unwrap();
        s.append_message(assistant("a", "m")).unwrap();
        s.branch_with_summary(Some(&q), "went elsewhere", None, None, None)
            .unwrap();
        s.append_custom_message("ext", json!("note"), false, Some(json!({"k":1})))
            .unwrap();
        s.append_message(AgentMessage::Raw(json!({
            "role":"bashExecution","command":"ls","output":"a.txt","exitCode":2,
            "cancelled":false,"truncated":false,"timestamp":5})))
            .unwrap();
        s.append_message(AgentMessage::Raw(json!({
            "role":"bashExecution","command":"secret","output":"","exitCode":0,
            "cancelled":false,"truncated":false,"excludeFromContext":true,"timestamp":6})))
            .unwrap();
        let ctx = s.context();
        assert_eq!(ctx.messages[1].message.role(), "branchSummary");
        assert_eq!(ctx.messages[2].message.role(), "custom");
        let t = texts(&ctx);
        assert_eq!(
            t,
            [
                "q".to_string(),
                format!("{BRANCH_SUMMARY_PREFIX}went elsewhere{BRANCH_SUMMARY_SUFFIX}"),
                "note".to_string(),
                "Ran `ls`\n```\na.txt\n```\n\nCommand exited with code 2".to_string(),
            ]
        );
        let llm = ctx.llm_messages();
        let Message::Custom(c) = llm[2].as_ref() else {
            panic!("{:?}", llm[2])
        };
        assert_eq!((c.custom_type.as_str(), c.display), ("ext", false));
        assert_eq!(c.details, Some(json!({"k": 1})));
    }

    #[test]
    fn context_edits_replace_or_drop_and_are_branch_local() {
        let mut s = Session::in_memory("/w");
        let q = s.append_message(Message::user("long question")).unwrap();
        let a = s.append_message(assistant("long answer", "m")).unwrap();
        s.append_context_edit(&q, Some(json!("short q"))).unwrap();
        s.append_context_edit(&a, None).unwrap();
        assert_eq!(texts(&s.context()), ["short q"]);
        // Branching off before the edits brings the originals back.
        s.set_leaf(Some(&a)).unwrap();
        assert_eq!(texts(&s.context()), ["long question", "long answer"]);
        s.set_leaf(None).unwrap();
        assert!(s.context().messages.is_empty());
    }
}
