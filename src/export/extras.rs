//! What a live session adds to the page, as pi's `/export` shows it: the system prompt and
//! the tools the model was given, with their parameters. A session file alone holds neither,
//! so an export made from a file (or without them) leaves both out.

use std::io;

use serde_json::Value;

use super::parts::{esc, pre, Out};
use crate::provider::ToolSpec;

/// The agent's state at export time.
#[derive(Debug, Default, Clone, Copy)]
pub struct ExportExtras<'a> {
    pub system_prompt: Option<&'a str>,
    pub tools: &'a [ToolSpec],
    /// The theme the page is dressed in (`super::theme`); none keeps the page's own looks.
    pub theme: Option<&'a crate::resources::themes::ThemeSpec>,
}

/// Both folded closed under the header: they are long and the same for every turn.
pub(crate) fn write(w: Out<'_>, extras: &ExportExtras<'_>) -> io::Result<()> {
    if let Some(prompt) = extras.system_prompt.filter(|p| !p.trim().is_empty()) {
        let lines = prompt.lines().count();
        write!(
            w,
            "<details class=\"entry prompt\"><summary>System prompt · {lines} line{}</summary>",
            if lines == 1 { "" } else { "s" }
        )?;
        pre(w, prompt)?;
        w.write_all(b"</details>\n")?;
    }
    if extras.tools.is_empty() {
        return Ok(());
    }
    write!(
        w,
        "<details class=\"entry tools-list\"><summary>Available tools · {}</summary>\n<dl>\n",
        extras.tools.len()
    )?;
    for t in extras.tools {
        w.write_all(b"<dt class=\"tool-name\">")?;
        esc(w, &t.name)?;
        w.write_all(b"</dt><dd>")?;
        esc(w, &t.description)?;
        parameters(w, &t.parameters)?;
        w.write_all(b"</dd>\n")?;
    }
    w.write_all(b"</dl>\n</details>\n")
}

/// A JSON Schema's properties: name, type, required or optional, description.
fn parameters(w: Out<'_>, schema: &Value) -> io::Result<()> {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    if props.is_empty() {
        return Ok(());
    }
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    w.write_all(b"<ul class=\"params\">")?;
    for (name, prop) in props {
        w.write_all(b"<li><code>")?;
        esc(w, name)?;
        w.write_all(b"</code> ")?;
        esc(w, &type_of(prop))?;
        w.write_all(if required.contains(&name.as_str()) {
            b", required"
        } else {
            b", optional"
        })?;
        if let Some(d) = prop.get("description").and_then(Value::as_str) {
            w.write_all(b" \xe2\x80\x94 ")?;
            esc(w, d)?;
        }
        w.write_all(b"</li>")?;
    }
    w.write_all(b"</ul>")
}

/// `string`, `number | null`, or `any`.
fn type_of(prop: &Value) -> String {
    match prop.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" | "),
        _ => "any".to_string(),
    }
}
