//! pi 1.6's system messages on the page: the first one on the branch as the system prompt
//! and the tools the model was given, each later one as an update naming what it changes
//! (`project_context, -rules, tools +bash`), folded closed like the prompt a live export
//! shows at the top.

use std::io;

use crate::message::SystemMessage;
use crate::session::Entry;

use super::parts::{esc, pre, Out};

/// One system message; `leads` when it is the branch's first (the whole prompt).
pub(crate) fn entry(w: Out<'_>, e: &Entry, m: &SystemMessage, leads: bool) -> io::Result<()> {
    let (title, text) = if leads {
        ("System prompt".to_string(), m.text())
    } else {
        let changes = changes(m);
        let title = if changes.is_empty() {
            "System prompt update".to_string()
        } else {
            format!("System prompt update: {changes}")
        };
        (title, update_text(m))
    };
    w.write_all(b"<details class=\"entry prompt\" id=\"entry-")?;
    esc(w, &e.id)?;
    w.write_all(b"\"><summary>")?;
    esc(w, &title)?;
    w.write_all(b"</summary>")?;
    if !text.is_empty() {
        pre(w, &text)?;
    }
    let added: Vec<&str> = m
        .tools_added
        .iter()
        .flatten()
        .map(|t| t.name.as_str())
        .collect();
    let removed: Vec<&str> = m
        .tools_removed
        .iter()
        .flatten()
        .map(|t| t.name.as_str())
        .collect();
    let (added_title, removed_title) = if leads {
        ("Available tools", "Tools removed")
    } else {
        ("Tools added", "Tools removed")
    };
    names(w, added_title, &added)?;
    names(w, removed_title, &removed)?;
    w.write_all(b"</details>\n")
}

fn names(w: Out<'_>, title: &str, names: &[&str]) -> io::Result<()> {
    if names.is_empty() {
        return Ok(());
    }
    w.write_all(b"<div class=\"note\">")?;
    esc(w, &format!("{title}: {}", names.join(", ")))?;
    w.write_all(b"</div>\n")
}

/// pi's `describeSystemUpdate`.
fn changes(m: &SystemMessage) -> String {
    let mut parts = Vec::new();
    if !m.content.as_text().is_empty() {
        parts.push("instructions".to_string());
    }
    for (name, value) in m.sections.iter().flatten() {
        parts.push(match value {
            Some(_) => name.clone(),
            None => format!("-{name}"),
        });
    }
    let tools: Vec<String> = m
        .tools_added
        .iter()
        .flatten()
        .map(|t| format!("+{}", t.name))
        .chain(
            m.tools_removed
                .iter()
                .flatten()
                .map(|t| format!("-{}", t.name)),
        )
        .collect();
    if !tools.is_empty() {
        parts.push(format!("tools {}", tools.join(" ")));
    }
    parts.join(", ")
}

/// pi's `renderSystemMessageUpdate`.
fn update_text(m: &SystemMessage) -> String {
    let mut parts = Vec::new();
    let text = m.content.as_text();
    if !text.is_empty() {
        parts.push(text);
    }
    for (name, value) in m.sections.iter().flatten() {
        parts.push(match value {
            Some(v) => format!("Updated system prompt section \"{name}\":\n\n{v}"),
            None => format!("Removed system prompt section \"{name}\"."),
        });
    }
    parts.join("\n\n")
}
