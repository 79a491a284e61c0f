//! Tool calls, each shown with its result: a headline for the built-in tools (`$ command`,
//! `read path:10-19`, …), what the call wrote (a `write`'s content, an `edit`'s diff), and the
//! output folded after its first lines, as pi's export shows them. Other tools show their
//! arguments as JSON. A call with no result on the branch is marked as pending.

use std::io;

use serde_json::Value;

use super::parts::{esc, images, note, output, pre, Out};
use super::view::{Block, CallView, ResultView};

/// Lines of output shown before the rest is folded, per tool (pi's numbers).
fn shown_lines(tool: &str) -> usize {
    match tool {
        "bash" => 5,
        "ls" | "find" | "grep" => 20,
        _ => 10,
    }
}

/// A tool call and its result (`None`: no result was recorded on this branch).
pub(crate) fn call(
    w: Out<'_>,
    call: &CallView<'_>,
    result: Option<&ResultView<'_>>,
) -> io::Result<()> {
    let status = match result {
        None => "pending",
        Some(r) if r.is_error => "error",
        Some(_) => "ok",
    };
    write!(w, "<div class=\"tool {status}\">")?;
    w.write_all(b"<div class=\"tool-head\">")?;
    headline(w, call.name, call.arguments)?;
    w.write_all(b"</div>\n")?;
    let args = call.arguments;
    match call.name {
        "write" => match args.get("content") {
            Some(Value::String(content)) => output(w, content, 10, false)?,
            None | Some(Value::Null) => {}
            Some(_) => note(w, "[invalid content argument: not a string]")?,
        },
        "bash" | "read" | "edit" | "ls" | "find" | "grep" => {}
        _ => arguments(w, args)?,
    }
    match result {
        None => note(w, "No result was recorded for this call.")?,
        Some(r) => result_body(w, call.name, r)?,
    }
    w.write_all(b"</div>\n")
}

/// A tool result whose call is not on this branch, shown on its own so nothing is lost.
pub(crate) fn orphan_result(w: Out<'_>, r: &ResultView<'_>) -> io::Result<()> {
    write!(
        w,
        "<div class=\"tool {}\">",
        if r.is_error { "error" } else { "ok" }
    )?;
    w.write_all(b"<div class=\"tool-head\"><span class=\"tool-name\">")?;
    esc(w, r.tool_name)?;
    w.write_all(b"</span> result of call ")?;
    esc(w, r.tool_call_id)?;
    w.write_all(b"</div>\n")?;
    result_body(w, r.tool_name, r)?;
    w.write_all(b"</div>\n")
}

fn result_body(w: Out<'_>, tool: &str, r: &ResultView<'_>) -> io::Result<()> {
    if tool == "edit" && !r.is_error {
        if let Some(diff) = r
            .details
            .and_then(|d| d.get("diff"))
            .and_then(Value::as_str)
        {
            return self::diff(w, diff);
        }
    }
    images(w, &r.blocks)?;
    let shown = shown_lines(tool);
    let mut texts = r.blocks.iter().filter_map(|b| match b {
        Block::Text(t) => Some(*t),
        _ => None,
    });
    // One text block (the usual case) is written as it is; several are joined as pi joins
    // them, which takes a copy of this one result only.
    match (texts.next(), texts.next()) {
        (None, _) => Ok(()),
        (Some(t), None) => output(w, t, shown, r.is_error),
        (Some(a), Some(b)) => {
            let mut all = format!("{a}\n{b}");
            for t in texts {
                all.push('\n');
                all.push_str(t);
            }
            output(w, &all, shown, r.is_error)
        }
    }
}

/// `$ command`, `read path:offset-end`, `grep /pattern/ in path`, or the tool's name.
fn headline(w: Out<'_>, name: &str, args: &Value) -> io::Result<()> {
    let arg = |k: &str| args.get(k).and_then(Value::as_str);
    let path = || arg("path").or_else(|| arg("file_path"));
    if name == "bash" {
        w.write_all(b"<span class=\"tool-name\">$</span> ")?;
        return match args.get("command") {
            Some(Value::String(c)) => esc(w, c),
            _ => w.write_all(b"<span class=\"error-text\">[invalid command argument]</span>"),
        };
    }
    w.write_all(b"<span class=\"tool-name\">")?;
    esc(
        w,
        if name.is_empty() {
            "(unnamed tool)"
        } else {
            name
        },
    )?;
    w.write_all(b"</span>")?;
    match name {
        "read" | "write" | "edit" | "ls" => {
            w.write_all(b" ")?;
            esc(w, path().unwrap_or(if name == "ls" { "." } else { "" }))?;
            if name == "read" {
                line_range(w, args)?;
            }
        }
        "grep" | "find" => {
            let pattern = arg("pattern").unwrap_or("");
            if name == "grep" {
                w.write_all(b" /")?;
                esc(w, pattern)?;
                w.write_all(b"/")?;
            } else {
                w.write_all(b" ")?;
                esc(w, pattern)?;
            }
            w.write_all(b" in ")?;
            esc(w, path().unwrap_or("."))?;
        }
        _ => {}
    }
    Ok(())
}

/// `:offset-end` for a `read` with `offset`/`limit`.
fn line_range(w: Out<'_>, args: &Value) -> io::Result<()> {
    let offset = args.get("offset").and_then(Value::as_u64);
    let limit = args.get("limit").and_then(Value::as_u64);
    if offset.is_none() && limit.is_none() {
        return Ok(());
    }
    let start = offset.unwrap_or(1);
    match limit {
        Some(n) if n > 0 => write!(w, ":{start}-{}", start + n - 1),
        _ => write!(w, ":{start}"),
    }
}

/// A custom tool's arguments, as indented JSON.
fn arguments(w: Out<'_>, args: &Value) -> io::Result<()> {
    if args.is_null() || args.as_object().is_some_and(|o| o.is_empty()) {
        return Ok(());
    }
    let json = serde_json::to_string_pretty(args).map_err(io::Error::other)?;
    w.write_all(b"<div class=\"args\">")?;
    pre(w, &json)?;
    w.write_all(b"</div>\n")
}

/// An edit's diff, one row per line, added and removed lines marked.
fn diff(w: Out<'_>, diff: &str) -> io::Result<()> {
    w.write_all(b"<div class=\"output diff\">\n")?;
    for line in diff.trim_end().split('\n') {
        let class = match line.as_bytes().first() {
            Some(b'+') => "add",
            Some(b'-') => "del",
            _ => "ctx",
        };
        write!(w, "<div class=\"{class}\">")?;
        esc(w, line)?;
        w.write_all(b"</div>\n")?;
    }
    w.write_all(b"</div>\n")
}
