//! pi 1.6's system messages: the system prompt and the tool loadout as part of the
//! conversation, so a session records what the model was told and when that changed.
//!
//! A run whose prompt or tools differ from what the context already declares starts with a
//! `role: "system"` message carrying only the difference: `sections` patched by name (the
//! rendered section, or `null` for one removed) and the tools added (whole declarations) or
//! removed (by name). Replaying every system message of a context in order
//! ([`current`]) gives the prompt and tools the model has now; the first run of a session
//! declares everything. A request carries the system messages where they are and what they
//! replay to: most APIs send the replay as one leading prompt (pi 1.6's default,
//! `supportsMidConvoSystemMessages` not `true`), a model that takes them gets each in place
//! (see [`crate::provider::transcript`]).

use std::sync::Arc;

use indexmap::IndexMap;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::{now_ms, Message, UserContent};
use crate::provider::ToolSpec;
use crate::resources::system_prompt::SystemPrompt;

/// Section patches by name, in the order they were first declared: the rendered section
/// (tags included), or `None` for a section removed.
pub type Sections = IndexMap<String, Option<String>>;

/// One system message (pi's `SystemMessage`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SystemMessage {
    /// Prompt text outside the named sections (a forced prompt in pi); empty from us.
    #[serde(default = "empty_content", deserialize_with = "content_or_empty")]
    pub content: UserContent,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sections: Option<Sections>,
    pub timestamp: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_added: Option<Vec<ToolDeclaration>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_removed: Option<Vec<RemovedTool>>,
}

fn empty_content() -> UserContent {
    UserContent::Text(String::new())
}

/// A hand-edited or older file may hold `null` content; pi reads it as empty.
fn content_or_empty<'de, D: Deserializer<'de>>(d: D) -> Result<UserContent, D::Error> {
    Ok(Option::<UserContent>::deserialize(d)?.unwrap_or_else(empty_content))
}

/// A tool as the transcript declares it to the model (pi's `toToolDeclaration`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDeclaration {
    pub name: String,
    pub description: String,
    pub parameters: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constrained_sampling: Option<Value>,
}

impl From<&ToolSpec> for ToolDeclaration {
    fn from(t: &ToolSpec) -> Self {
        ToolDeclaration {
            name: t.name.clone(),
            description: t.description.clone(),
            parameters: t.parameters.clone(),
            constrained_sampling: t.constrained_sampling.clone(),
        }
    }
}

/// A tool the transcript no longer declares.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemovedTool {
    pub name: String,
}

impl SystemMessage {
    /// The message's text as pi renders a leading system message: its content, then each
    /// section present, joined by a blank line.
    pub fn text(&self) -> String {
        let mut parts = vec![self.content.as_text()];
        parts.extend(
            self.sections
                .iter()
                .flatten()
                .filter_map(|(_, v)| v.clone()),
        );
        parts.retain(|p| !p.is_empty());
        parts.join("\n\n")
    }
}

fn systems<'a>(messages: impl IntoIterator<Item = &'a Message>) -> Vec<&'a SystemMessage> {
    messages
        .into_iter()
        .filter_map(|m| match m {
            Message::System(s) => Some(s),
            _ => None,
        })
        .collect()
}

/// The tools declared after replaying every system message (pi's `getCurrentTools`).
pub fn current_tools<'a>(messages: impl IntoIterator<Item = &'a Message>) -> Vec<ToolDeclaration> {
    let mut tools: IndexMap<String, ToolDeclaration> = IndexMap::new();
    for s in systems(messages) {
        for t in s.tools_removed.iter().flatten() {
            tools.shift_remove(&t.name);
        }
        for t in s.tools_added.iter().flatten() {
            tools.insert(t.name.clone(), t.clone());
        }
    }
    tools.into_values().collect()
}

/// Every system message replayed into one (pi's `getCurrentSystemMessage`): contents joined,
/// sections patched by name, the current tools; `None` when the context declares nothing.
pub fn current<'a>(
    messages: impl IntoIterator<Item = &'a Message> + Clone,
) -> Option<SystemMessage> {
    let list = systems(messages.clone());
    let mut content = Vec::new();
    let mut sections = Sections::new();
    for s in &list {
        let text = s.content.as_text();
        if !text.is_empty() {
            content.push(text);
        }
        for (name, value) in s.sections.iter().flatten() {
            match value {
                Some(v) => {
                    sections.insert(name.clone(), Some(v.clone()));
                }
                None => {
                    sections.shift_remove(name);
                }
            }
        }
    }
    let tools = current_tools(messages);
    let timestamp = list.first().map(|s| s.timestamp);
    if timestamp.is_none() && tools.is_empty() {
        return None;
    }
    Some(SystemMessage {
        content: UserContent::Text(content.join("\n\n")),
        sections: (!sections.is_empty()).then_some(sections),
        timestamp: timestamp.unwrap_or(0),
        tools_added: (!tools.is_empty()).then_some(tools),
        tools_removed: None,
    })
}

/// What `desired` changes in the sections the model has (pi's `diffSystemPromptSections`):
/// each new or changed section, and `None` for each gone; `None` when nothing changed.
pub fn sections_patch(previous: Option<&Sections>, desired: &SystemPrompt) -> Option<Sections> {
    let empty = Sections::new();
    let previous = previous.unwrap_or(&empty);
    let mut patch = Sections::new();
    for section in desired.sections() {
        let text = section.rendered();
        if previous.get(&section.name).and_then(Option::as_deref) != Some(text.as_str()) {
            patch.insert(section.name.clone(), Some(text));
        }
    }
    for name in previous.keys() {
        if !desired.sections().iter().any(|s| &s.name == name) {
            patch.insert(name.clone(), None);
        }
    }
    (!patch.is_empty()).then_some(patch)
}

/// Whether two declarations say the same to the model, as pi's `declarationsEqual` compares
/// them: serialized, so a schema whose keys come in another order is another definition.
fn same_declaration(a: &ToolDeclaration, b: &ToolDeclaration) -> bool {
    a == b && serde_json::to_string(a).ok() == serde_json::to_string(b).ok()
}

/// The tool changes from `previous` to `current` (pi's `getToolStateChanges`): a changed
/// definition is removed and added again.
pub fn tool_changes(
    previous: &[ToolDeclaration],
    current: &[ToolDeclaration],
) -> (Vec<ToolDeclaration>, Vec<RemovedTool>) {
    let find = |list: &[ToolDeclaration], name: &str| list.iter().position(|t| t.name == name);
    let added = current
        .iter()
        .filter(|t| find(previous, &t.name).is_none_or(|i| !same_declaration(&previous[i], t)))
        .cloned()
        .collect();
    let removed = previous
        .iter()
        .filter(|t| find(current, &t.name).is_none_or(|i| !same_declaration(&current[i], t)))
        .map(|t| RemovedTool {
            name: t.name.clone(),
        })
        .collect();
    (added, removed)
}

/// The system message a request needs before it, given the `context` it follows: the
/// section patch from the context's prompt to `prompt` and the tool changes to `tools`;
/// `None` when the context already declares both.
pub fn update(
    context: &[Arc<Message>],
    prompt: &SystemPrompt,
    tools: &[ToolDeclaration],
) -> Option<SystemMessage> {
    let now = current(context.iter().map(Arc::as_ref));
    let sections = sections_patch(now.as_ref().and_then(|s| s.sections.as_ref()), prompt);
    let declared = now.and_then(|s| s.tools_added).unwrap_or_default();
    let (added, removed) = tool_changes(&declared, tools);
    if sections.is_none() && added.is_empty() && removed.is_empty() {
        return None;
    }
    Some(SystemMessage {
        content: empty_content(),
        sections,
        timestamp: now_ms(),
        tools_added: (!added.is_empty()).then_some(added),
        tools_removed: (!removed.is_empty()).then_some(removed),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn prompt(sections: &[(&str, &str)]) -> SystemPrompt {
        SystemPrompt::from_sections(sections.iter().map(|(n, t)| (n.to_string(), t.to_string())))
    }

    fn tool(name: &str, description: &str) -> ToolDeclaration {
        ToolDeclaration {
            name: name.into(),
            description: description.into(),
            parameters: json!({"type": "object"}),
            constrained_sampling: None,
        }
    }

    fn context(list: Vec<Message>) -> Vec<Arc<Message>> {
        list.into_iter().map(Arc::new).collect()
    }

    #[test]
    fn the_first_run_declares_every_section_and_tool_and_an_unchanged_one_nothing() {
        let p = prompt(&[("preamble", "You are pi."), ("cwd", "/w")]);
        let tools = [tool("read", "Read"), tool("bash", "Run")];
        let first = update(&[], &p, &tools).unwrap();
        let v = serde_json::to_value(Message::System(first.clone())).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["role", "content", "sections", "timestamp", "toolsAdded"]
        );
        assert_eq!(v["sections"]["cwd"], "<cwd>\n/w\n</cwd>");
        assert_eq!(first.text(), p.text());
        let ctx = context(vec![Message::System(first), Message::user("hi")]);
        assert_eq!(update(&ctx, &p, &tools), None);
    }

    #[test]
    fn a_changed_prompt_and_loadout_become_a_patch_that_replays_to_the_new_state() {
        let p = prompt(&[("preamble", "You are pi."), ("skills", "s"), ("cwd", "/w")]);
        let tools = vec![tool("read", "Read"), tool("bash", "Run")];
        let first = update(&[], &p, &tools).unwrap();
        let mut ctx = context(vec![Message::System(first), Message::user("hi")]);
        let q = prompt(&[("preamble", "You are pi."), ("cwd", "/x"), ("extra", "e")]);
        let tools2 = vec![tool("read", "Read more"), tool("grep", "Find")];
        let patch = update(&ctx, &q, &tools2).unwrap();
        let sections = patch.sections.clone().unwrap();
        assert_eq!(
            sections.keys().collect::<Vec<_>>(),
            ["cwd", "extra", "skills"]
        );
        assert_eq!(sections["skills"], None);
        let names = |l: &[ToolDeclaration]| l.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
        assert_eq!(
            names(patch.tools_added.as_deref().unwrap()),
            ["read", "grep"]
        );
        let removed: Vec<&str> = patch
            .tools_removed
            .iter()
            .flatten()
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(removed, ["read", "bash"]);
        ctx.push(Arc::new(Message::System(patch)));
        let now = current(ctx.iter().map(Arc::as_ref)).unwrap();
        assert_eq!(names(now.tools_added.as_deref().unwrap()), ["read", "grep"]);
        assert_eq!(now.text(), q.text());
        assert_eq!(update(&ctx, &q, &tools2), None);
    }

    #[test]
    fn a_schema_with_its_keys_in_another_order_is_another_definition() {
        let mut reordered = tool("read", "Read");
        reordered.parameters = json!({"type": "object", "required": ["path"], "properties": {}});
        let mut original = reordered.clone();
        original.parameters = json!({"type": "object", "properties": {}, "required": ["path"]});
        let (added, removed) = tool_changes(&[original.clone()], &[reordered.clone()]);
        assert_eq!(added, [reordered]);
        assert_eq!(
            removed,
            [RemovedTool {
                name: "read".into()
            }]
        );
        assert_eq!(
            tool_changes(&[original.clone()], &[original]),
            (vec![], vec![])
        );
    }

    #[test]
    fn pi_1_6s_system_message_reads_and_writes_back_unchanged() {
        let line = r#"{"role":"system","content":"","sections":{"preamble":"You are pi.","cwd":"<cwd>\n/w\n</cwd>","gone":null},"timestamp":7,"toolsAdded":[{"name":"read","description":"Read","parameters":{"type":"object"},"constrainedSampling":{"type":"json_schema","strict":"prefer"}}],"toolsRemoved":[{"name":"bash"}]}"#;
        let m: Message = serde_json::from_str(line).unwrap();
        assert_eq!(m.role(), "system");
        assert_eq!(serde_json::to_string(&m).unwrap(), line);
        let null: Message =
            serde_json::from_str(r#"{"role":"system","content":null,"timestamp":1}"#).unwrap();
        let Message::System(s) = null else {
            panic!("not a system message")
        };
        assert_eq!(s.text(), "");
    }
}
