//! What a request makes of the transcript's system messages, as pi 1.6's
//! `utils/transcript.js` and `utils/text.js` do for its APIs.
//!
//! A request carries the conversation with its system messages where they are (see
//! [`crate::message::system`]), and also what they replay to: `system_prompt` and `tools`.
//! An API that cannot take a system message after the first (pi's default,
//! `compat.supportsMidConvoSystemMessages` not `true`) sends that replay as one leading prompt
//! and skips the messages. One that can ([`in_place`]) sends the first as its leading prompt
//! and each later one where it stands, rendered as an update ([`update_text`]); how tool
//! changes travel then depends on what the API can say in place ([`ToolSupport`],
//! [`transcript_tools`]). The agent leaves the system messages out when the prompt sent is not
//! the one they replay to (a hook replaced it), and the request is collapsed then.

use std::sync::Arc;

use serde_json::Value;

use super::{Request, ToolSpec};
use crate::message::system::{SystemMessage, ToolDeclaration};
use crate::message::Message;

/// `compat.<key>` is `true`.
fn compat_true(req: &Request, key: &str) -> bool {
    req.model.compat.get(key) == Some(&Value::Bool(true))
}

/// Whether the request's system messages go in place: the model takes them there and the
/// request has them.
pub fn in_place(req: &Request) -> bool {
    compat_true(req, "supportsMidConvoSystemMessages") && has_system(&req.messages)
}

pub fn has_system(messages: &[Arc<Message>]) -> bool {
    messages
        .iter()
        .any(|m| matches!(m.as_ref(), Message::System(_)))
}

/// A system message after the first, as an API that takes it in place reads it (pi's
/// `renderSystemMessageUpdate`): its text, then each section named as updated or removed.
pub fn update_text(s: &SystemMessage) -> String {
    let mut parts = Vec::new();
    let text = s.content.as_text();
    if !text.is_empty() {
        parts.push(text);
    }
    for (name, value) in s.sections.iter().flatten() {
        parts.push(match value {
            None => format!("Removed system prompt section \"{name}\"."),
            Some(v) => format!("Updated system prompt section \"{name}\":\n\n{v}"),
        });
    }
    parts.join("\n\n")
}

/// How tool changes travel in place (pi's `resolveTranscriptTools` support levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolSupport {
    /// The request's tool list is the current set.
    None,
    /// Later additions are declared where they happen; the list is the set after the last
    /// removal or redefinition, which cannot be said in place.
    Additions,
    /// Every system message declares its tools in place, the first one included; no list.
    Changes,
}

/// The request-level tools and how many system messages they stand for (the rest declare
/// their additions in place).
#[derive(Debug, Clone, PartialEq)]
pub struct TranscriptTools<'a> {
    pub request_tools: Vec<&'a ToolDeclaration>,
    pub folded: usize,
}

pub fn systems(messages: &[Arc<Message>]) -> Vec<&SystemMessage> {
    messages
        .iter()
        .filter_map(|m| match m.as_ref() {
            Message::System(s) => Some(s),
            _ => None,
        })
        .collect()
}

/// The index of the last system message with a removal or a same-name redeclaration (one
/// declared before counts even after its removal, as 1.6 counts it), if any.
fn last_non_additive(list: &[&SystemMessage]) -> Option<usize> {
    let mut declared = std::collections::HashSet::new();
    let mut last = None;
    for (i, s) in list.iter().enumerate() {
        if s.tools_removed.as_ref().is_some_and(|r| !r.is_empty()) {
            last = Some(i);
        }
        for t in s.tools_added.iter().flatten() {
            if !declared.insert(t.name.as_str()) {
                last = Some(i);
            }
        }
    }
    last
}

/// The tools `list` declares once replayed (pi's `getCurrentTools`).
fn replay<'a>(list: &[&'a SystemMessage]) -> Vec<&'a ToolDeclaration> {
    let mut tools: indexmap::IndexMap<&str, &ToolDeclaration> = indexmap::IndexMap::new();
    for s in list {
        for t in s.tools_removed.iter().flatten() {
            tools.shift_remove(t.name.as_str());
        }
        for t in s.tools_added.iter().flatten() {
            tools.insert(&t.name, t);
        }
    }
    tools.into_values().collect()
}

/// pi's `resolveTranscriptTools` over the request's messages.
pub fn transcript_tools(messages: &[Arc<Message>], support: ToolSupport) -> TranscriptTools<'_> {
    let list = systems(messages);
    let current = |upto: usize| replay(&list[..upto]);
    match support {
        ToolSupport::None => TranscriptTools {
            request_tools: current(list.len()),
            folded: list.len(),
        },
        ToolSupport::Changes => TranscriptTools {
            request_tools: Vec::new(),
            folded: 0,
        },
        ToolSupport::Additions => {
            let leading = matches!(
                messages.first().map(|m| m.as_ref()),
                Some(Message::System(_))
            );
            let folded = usize::from(leading).max(last_non_additive(&list).map_or(0, |i| i + 1));
            TranscriptTools {
                request_tools: current(folded),
                folded,
            }
        }
    }
}

/// A declaration as the request's tools hold it.
pub fn spec(d: &ToolDeclaration) -> ToolSpec {
    ToolSpec {
        name: d.name.clone(),
        description: d.description.clone(),
        parameters: d.parameters.clone(),
        constrained_sampling: d.constrained_sampling.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::system::RemovedTool;
    use crate::message::UserContent;
    use serde_json::json;

    fn decl(name: &str) -> ToolDeclaration {
        ToolDeclaration {
            name: name.into(),
            description: name.into(),
            parameters: json!({}),
            constrained_sampling: None,
        }
    }

    fn sys(added: &[&str], removed: &[&str]) -> Arc<Message> {
        Arc::new(Message::System(SystemMessage {
            content: UserContent::Text(String::new()),
            sections: None,
            timestamp: 1,
            tools_added: Some(added.iter().map(|n| decl(n)).collect()),
            tools_removed: Some(
                removed
                    .iter()
                    .map(|n| RemovedTool {
                        name: n.to_string(),
                    })
                    .collect(),
            ),
        }))
    }

    fn names<'a>(t: &TranscriptTools<'a>) -> Vec<&'a str> {
        t.request_tools.iter().map(|d| d.name.as_str()).collect()
    }

    #[test]
    fn additions_stay_in_place_until_a_removal_folds_them_into_the_list() {
        let user = Arc::new(Message::user("hi"));
        let additive = vec![sys(&["a", "b"], &[]), user.clone(), sys(&["c"], &[])];
        let t = transcript_tools(&additive, ToolSupport::Additions);
        assert_eq!((names(&t), t.folded), (vec!["a", "b"], 1));
        let removal = vec![sys(&["a", "b"], &[]), user.clone(), sys(&["c"], &["b"])];
        let t = transcript_tools(&removal, ToolSupport::Additions);
        assert_eq!((names(&t), t.folded), (vec!["a", "c"], 2));
        let t = transcript_tools(&removal, ToolSupport::None);
        assert_eq!((names(&t), t.folded), (vec!["a", "c"], 2));
        let t = transcript_tools(&removal, ToolSupport::Changes);
        assert_eq!((names(&t), t.folded), (vec![], 0));
    }

    #[test]
    fn an_update_names_each_section_it_changes() {
        let mut sections = crate::message::system::Sections::new();
        sections.insert("cwd".into(), Some("<cwd>\n/x\n</cwd>".into()));
        sections.insert("skills".into(), None);
        let s = SystemMessage {
            content: UserContent::Text(String::new()),
            sections: Some(sections),
            timestamp: 1,
            tools_added: None,
            tools_removed: None,
        };
        assert_eq!(
            update_text(&s),
            "Updated system prompt section \"cwd\":\n\n<cwd>\n/x\n</cwd>\n\nRemoved system prompt section \"skills\"."
        );
    }
}
