//! What a `/tree` row says about its entry, as 1.6's tree selector words it (`user: …`,
//! `[bash: …]`, `[compaction: 12k tokens]`, `[model: …]`…), and the text the search matches.

use std::collections::HashMap;

use serde_json::Value;

use super::super::text::Line;
use super::super::theme::Theme;

/// A tool call's name and arguments, by call id, so a tool result's row names its call.
pub type Calls = HashMap<String, (String, Value)>;

/// The calls made in the assistant messages of `entries`.
pub fn calls<'a>(entries: impl Iterator<Item = &'a Value>) -> Calls {
    let mut out = Calls::new();
    for e in entries {
        if e["type"] != "message" || e["message"]["role"] != "assistant" {
            continue;
        }
        for b in e["message"]["content"].as_array().into_iter().flatten() {
            if b["type"] == "toolCall" {
                if let Some(id) = b["id"].as_str() {
                    let name = b["name"].as_str().unwrap_or("").to_string();
                    out.insert(id.to_string(), (name, b["arguments"].clone()));
                }
            }
        }
    }
    out
}

/// The text blocks of a message's content, joined.
pub fn full_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect(),
        _ => String::new(),
    }
}

pub fn has_text(content: &Value) -> bool {
    match content {
        Value::String(s) => !s.trim().is_empty(),
        Value::Array(blocks) => blocks.iter().any(|b| {
            b["type"] == "text" && b["text"].as_str().is_some_and(|t| !t.trim().is_empty())
        }),
        _ => false,
    }
}

/// The first 200 characters of the text, as 1.6 shows and searches.
fn short(content: &Value) -> String {
    full_text(content).chars().take(200).collect()
}

fn normalize(s: &str) -> String {
    s.replace(['\n', '\t'], " ").trim().to_string()
}

/// The row's text after its tree prefix and label.
pub fn describe(entry: &Value, calls: &Calls, theme: &Theme) -> Line {
    let mut l = Line::new();
    let dim = theme.muted.dim();
    let m = &entry["message"];
    match entry["type"].as_str().unwrap_or("") {
        "message" => match m["role"].as_str().unwrap_or("") {
            "user" => {
                l.push("user: ", theme.accent);
                l.push(normalize(&short(&m["content"])), theme.text);
            }
            "assistant" => {
                l.push("assistant: ", theme.success);
                let text = normalize(&short(&m["content"]));
                if !text.is_empty() {
                    l.push(text, theme.text);
                } else if m["stopReason"] == "aborted" {
                    l.push("(aborted)", theme.muted);
                } else if let Some(err) = m["errorMessage"].as_str() {
                    l.push(
                        normalize(err).chars().take(80).collect::<String>(),
                        theme.error,
                    );
                } else {
                    l.push("(no content)", theme.muted);
                }
            }
            "toolResult" => {
                let call = m["toolCallId"].as_str().and_then(|id| calls.get(id));
                let text = match call {
                    Some((name, args)) => tool_call(name, args),
                    None => format!("[{}]", m["toolName"].as_str().unwrap_or("tool")),
                };
                l.push(text, theme.muted);
            }
            "bashExecution" => {
                let cmd = normalize(m["command"].as_str().unwrap_or(""));
                l.push(format!("[bash]: {cmd}"), dim);
            }
            role => l.push(format!("[{role}]"), dim),
        },
        "custom_message" => {
            let kind = entry["customType"].as_str().unwrap_or("");
            l.push(format!("[{kind}]: "), theme.accent);
            l.push(normalize(&full_text(&entry["content"])), theme.text);
        }
        "compaction" => {
            let tokens = entry["tokensBefore"].as_f64().unwrap_or(0.0) / 1000.0;
            l.push(
                format!("[compaction: {}k tokens]", tokens.round()),
                theme.border,
            );
        }
        "branch_summary" => {
            l.push("[branch summary]: ", theme.warning);
            l.push(
                normalize(entry["summary"].as_str().unwrap_or("")),
                theme.text,
            );
        }
        "model_change" => l.push(format!("[model: {}]", str_of(&entry["modelId"])), dim),
        "thinking_level_change" => l.push(
            format!("[thinking: {}]", str_of(&entry["thinkingLevel"])),
            dim,
        ),
        "custom" => l.push(format!("[custom: {}]", str_of(&entry["customType"])), dim),
        "context_edit" => l.push(
            format!(
                "[context {}: {}]",
                omit_or_replace(entry),
                str_of(&entry["targetId"])
            ),
            dim,
        ),
        "label" => l.push(
            format!(
                "[label: {}]",
                entry["label"].as_str().unwrap_or("(cleared)")
            ),
            dim,
        ),
        "session_info" => match entry["name"].as_str() {
            Some(name) => l.push(format!("[title: {name}]"), dim),
            None => {
                l.push("[title: ", dim);
                l.push("empty", dim.patch(theme.italic));
                l.push("]", dim);
            }
        },
        _ => {}
    }
    l
}

fn str_of(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

fn omit_or_replace(entry: &Value) -> &'static str {
    if entry["replacement"].is_null() {
        "omit"
    } else {
        "replace"
    }
}

/// What the search matches for an entry: its label, kind words and text.
pub fn searchable(entry: &Value, label: Option<&str>) -> String {
    let mut parts: Vec<String> = label.into_iter().map(str::to_string).collect();
    let m = &entry["message"];
    match entry["type"].as_str().unwrap_or("") {
        "message" => {
            parts.push(str_of(&m["role"]).to_string());
            parts.push(short(&m["content"]));
            if m["role"] == "bashExecution" {
                parts.push(str_of(&m["command"]).to_string());
            }
        }
        "custom_message" => {
            parts.push(str_of(&entry["customType"]).to_string());
            parts.push(short(&entry["content"]));
        }
        "compaction" => parts.push("compaction".into()),
        "branch_summary" => {
            parts.push("branch summary".into());
            parts.push(str_of(&entry["summary"]).to_string());
        }
        "session_info" => {
            parts.push("title".into());
            parts.push(str_of(&entry["name"]).to_string());
        }
        "model_change" => parts.extend(["model".into(), str_of(&entry["modelId"]).to_string()]),
        "thinking_level_change" => parts.extend([
            "thinking".into(),
            str_of(&entry["thinkingLevel"]).to_string(),
        ]),
        "custom" => parts.extend(["custom".into(), str_of(&entry["customType"]).to_string()]),
        "context_edit" => parts.extend([
            "context edit".into(),
            omit_or_replace(entry).into(),
            str_of(&entry["targetId"]).to_string(),
        ]),
        "label" => parts.extend(["label".into(), str_of(&entry["label"]).to_string()]),
        _ => {}
    }
    parts.join(" ")
}

/// A tool call in a tool result's row, as 1.6 abbreviates the built-in tools.
pub fn tool_call(name: &str, args: &Value) -> String {
    let arg = |k: &str| match &args[k] {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        v => v.to_string(),
    };
    let path = |keys: &[&str], default: &str| {
        let p = keys
            .iter()
            .map(|k| arg(k))
            .find(|p| !p.is_empty())
            .unwrap_or_else(|| default.to_string());
        shorten_home(&p)
    };
    match name {
        "read" => format!(
            "[read: {}{}]",
            path(&["path", "file_path"], ""),
            line_range(args)
        ),
        "write" => format!("[write: {}]", path(&["path", "file_path"], "")),
        "edit" => format!("[edit: {}]", path(&["path", "file_path"], "")),
        "bash" => {
            let raw = arg("command");
            let cmd: String = normalize(&raw).chars().take(50).collect();
            let more = if raw.chars().count() > 50 { "..." } else { "" };
            format!("[bash: {cmd}{more}]")
        }
        "grep" => format!("[grep: /{}/ in {}]", arg("pattern"), path(&["path"], ".")),
        "find" => format!("[find: {} in {}]", arg("pattern"), path(&["path"], ".")),
        "ls" => format!("[ls: {}]", path(&["path"], ".")),
        _ => {
            let json = args.to_string();
            let cut: String = json.chars().take(40).collect();
            let more = if json.chars().count() > 40 { "..." } else { "" };
            format!("[{name}: {cut}{more}]")
        }
    }
}

/// `:offset-end` / `:offset` of a read, as 1.6's `formatReadLineRange`.
fn line_range(args: &Value) -> String {
    let offset = args["offset"].as_u64();
    let limit = args["limit"].as_u64();
    match (offset, limit) {
        (None, None) => String::new(),
        (o, Some(l)) => {
            let start = o.unwrap_or(1);
            format!(":{start}-{}", start + l - 1)
        }
        (Some(o), None) => format!(":{o}"),
    }
}

fn shorten_home(p: &str) -> String {
    match dirs::home_dir().and_then(|h| h.to_str().map(str::to_string)) {
        Some(h) if !h.is_empty() && p.starts_with(&h) => format!("~{}", &p[h.len()..]),
        _ => p.to_string(),
    }
}
