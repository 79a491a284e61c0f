//! One entry of the active branch as one block of the page: user and assistant messages
//! (thinking folded open, tool calls with their results), `!command` runs, custom messages,
//! compactions and branch summaries, model and thinking-level changes. Entries pi's export
//! does not show (extension state, labels, names, context edits, usage, unknown types) are
//! left out; labels appear as badges on the entries they name.

use std::collections::{HashMap, HashSet};
use std::io;

use crate::session::{Entry, EntryKind, Session};

use super::parts::{esc, images, note, output, skill_block, text, Out};
use super::tools;
use super::view::{
    content_blocks, AssistantView, BashView, Block, MessageView, OtherView, ResultView,
};

/// What the entries of the branch need to know about each other: each tool call's result,
/// so a call is shown with it.
pub(crate) struct Branch<'a> {
    /// Call id → the first result for it on the branch.
    results: HashMap<&'a str, (&'a Entry, ResultView<'a>)>,
    /// Every tool call id on the branch.
    calls: HashSet<&'a str>,
    /// The first system message on the branch: the prompt as first declared.
    first_system: Option<&'a str>,
}

impl<'a> Branch<'a> {
    pub fn index(entries: &[&'a Entry]) -> Branch<'a> {
        let mut b = Branch {
            results: HashMap::new(),
            calls: HashSet::new(),
            first_system: None,
        };
        for &e in entries {
            let Some(m) = e.message() else { continue };
            match MessageView::of(m) {
                MessageView::System(_) if b.first_system.is_none() => {
                    b.first_system = Some(&e.id);
                }
                MessageView::Assistant(a) => {
                    for block in a.blocks {
                        if let Block::ToolCall(c) = block {
                            b.calls.insert(c.id);
                        }
                    }
                }
                MessageView::ToolResult(r) => {
                    b.results.entry(r.tool_call_id).or_insert((e, r));
                }
                _ => {}
            }
        }
        b
    }

    /// Whether `e` declares the branch's prompt first (later ones update it).
    fn leads(&self, e: &Entry) -> bool {
        self.first_system == Some(e.id.as_str())
    }

    /// Whether this result is shown with its call (so not on its own).
    fn shown_with_call(&self, e: &Entry, r: &ResultView<'_>) -> bool {
        self.calls.contains(r.tool_call_id)
            && self
                .results
                .get(r.tool_call_id)
                .is_some_and(|(first, _)| std::ptr::eq(*first, e))
    }
}

/// Writes one entry; nothing for entries that are not shown.
pub(crate) fn entry(w: Out<'_>, s: &Session, branch: &Branch<'_>, e: &Entry) -> io::Result<()> {
    match &e.kind {
        EntryKind::Message(m) => match MessageView::of(&m.message) {
            MessageView::User(blocks) => {
                open(w, s, e, "user", "User")?;
                user(w, &blocks)?;
                close(w)
            }
            MessageView::Assistant(a) => {
                open(w, s, e, "assistant", "Assistant")?;
                assistant(w, branch, &a)?;
                close(w)
            }
            MessageView::ToolResult(r) if branch.shown_with_call(e, &r) => Ok(()),
            MessageView::ToolResult(r) => {
                open(w, s, e, "tool-result", "Tool result")?;
                tools::orphan_result(w, &r)?;
                close(w)
            }
            MessageView::Bash(b) => {
                open(w, s, e, "bash", "Shell")?;
                bash(w, &b)?;
                close(w)
            }
            MessageView::System(m) => super::system::entry(w, e, m, branch.leads(e)),
            MessageView::Other(o) => other(w, s, e, &o),
        },
        EntryKind::CustomMessage(c) if c.display => {
            open(w, s, e, "custom", "Extension")?;
            w.write_all(b"<div class=\"badge-line\"><span class=\"badge\">")?;
            esc(w, &c.custom_type)?;
            w.write_all(b"</span></div>\n")?;
            blocks(w, &content_blocks(Some(&c.content)))?;
            close(w)
        }
        EntryKind::Compaction(c) => {
            open(w, s, e, "compaction summary-entry", "Compaction")?;
            write!(
                w,
                "<details><summary>Compacted from {} tokens</summary>",
                super::stats::with_separators(c.tokens_before)
            )?;
            text(w, &c.summary)?;
            w.write_all(b"</details>\n")?;
            close(w)
        }
        EntryKind::BranchSummary(b) => {
            open(w, s, e, "branch-summary summary-entry", "Branch summary")?;
            text(w, &b.summary)?;
            close(w)
        }
        EntryKind::ModelChange(m) => {
            notice_open(w, s, e)?;
            w.write_all(b"Switched to model <b>")?;
            esc(w, &m.provider)?;
            w.write_all(b"/")?;
            esc(w, &m.model_id)?;
            w.write_all(b"</b></div>\n")
        }
        EntryKind::ThinkingLevelChange(t) => {
            notice_open(w, s, e)?;
            w.write_all(b"Thinking level <b>")?;
            esc(w, &t.thinking_level)?;
            w.write_all(b"</b></div>\n")
        }
        _ => Ok(()),
    }
}

/// `<section>` with the entry's id as its anchor, and its headline: who, when, its label.
fn open(w: Out<'_>, s: &Session, e: &Entry, class: &str, who: &str) -> io::Result<()> {
    write!(w, "<section class=\"entry {class}\" id=\"entry-")?;
    esc(w, &e.id)?;
    write!(
        w,
        "\">\n<div class=\"meta\"><span class=\"who\">{who}</span>"
    )?;
    meta_tail(w, s, e)?;
    w.write_all(b"</div>\n")
}

fn close(w: Out<'_>) -> io::Result<()> {
    w.write_all(b"</section>\n")
}

/// A one-line entry (a model or thinking-level change).
fn notice_open(w: Out<'_>, s: &Session, e: &Entry) -> io::Result<()> {
    w.write_all(b"<div class=\"entry notice\" id=\"entry-")?;
    esc(w, &e.id)?;
    w.write_all(b"\"><span class=\"meta\">")?;
    meta_tail(w, s, e)?;
    w.write_all(b"</span> ")
}

/// The time (a link to the entry itself) and the entry's label, if it has one.
fn meta_tail(w: Out<'_>, s: &Session, e: &Entry) -> io::Result<()> {
    w.write_all(b" <a href=\"#entry-")?;
    esc(w, &e.id)?;
    w.write_all(b"\"><time datetime=\"")?;
    esc(w, &e.timestamp)?;
    w.write_all(b"\">")?;
    esc(w, &clock(&e.timestamp))?;
    w.write_all(b"</time></a>")?;
    if let Some(label) = s.label(&e.id) {
        w.write_all(b" <span class=\"badge\">")?;
        esc(w, label)?;
        w.write_all(b"</span>")?;
    }
    Ok(())
}

/// `10:00:03` (UTC) from an ISO timestamp; a timestamp that does not parse is shown as is.
fn clock(ts: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(ts) {
        Ok(t) => t.naive_utc().format("%H:%M:%S").to_string(),
        Err(_) => ts.to_string(),
    }
}

fn user(w: Out<'_>, content: &[Block<'_>]) -> io::Result<()> {
    images(w, content)?;
    for b in content {
        match b {
            Block::Text(t) => match skill_block(t) {
                Some(skill) => {
                    w.write_all(b"<details class=\"skill\"><summary>Skill <b>")?;
                    esc(w, skill.name)?;
                    w.write_all(b"</b></summary>")?;
                    text(w, skill.body)?;
                    w.write_all(b"</details>\n")?;
                    text(w, skill.user_text)?;
                }
                None => text(w, t)?,
            },
            Block::Image(_) => {}
            other => block(w, other)?,
        }
    }
    Ok(())
}

fn assistant(w: Out<'_>, branch: &Branch<'_>, a: &AssistantView<'_>) -> io::Result<()> {
    for b in &a.blocks {
        match b {
            Block::ToolCall(_) => {}
            other => block(w, other)?,
        }
    }
    for b in &a.blocks {
        if let Block::ToolCall(c) = b {
            tools::call(w, c, branch.results.get(c.id).map(|(_, r)| r))?;
        }
    }
    match a.stop_reason {
        "aborted" => w.write_all(b"<div class=\"error-text\">Aborted</div>\n"),
        "error" => {
            w.write_all(b"<div class=\"error-text\">Error: ")?;
            esc(w, a.error_message.unwrap_or("Unknown error"))?;
            w.write_all(b"</div>\n")
        }
        _ => Ok(()),
    }
}

/// Text, thinking, images and unknown blocks in order (tool calls are written by the caller).
fn blocks(w: Out<'_>, content: &[Block<'_>]) -> io::Result<()> {
    images(w, content)?;
    for b in content {
        block(w, b)?;
    }
    Ok(())
}

fn block(w: Out<'_>, b: &Block<'_>) -> io::Result<()> {
    match b {
        Block::Text(t) => text(w, t),
        Block::Thinking(t) if t.trim().is_empty() => Ok(()),
        Block::Thinking(t) => {
            w.write_all(b"<details class=\"thinking\" open><summary>Thinking</summary>")?;
            text(w, t)?;
            w.write_all(b"</details>\n")
        }
        Block::Unknown(kind) => note(w, &format!("[a {kind:?} block is not shown]")),
        Block::ToolCall(_) | Block::Image(_) => Ok(()),
    }
}

fn bash(w: Out<'_>, b: &BashView<'_>) -> io::Result<()> {
    let failed = b.cancelled || b.exit_code.is_some_and(|c| c != 0);
    write!(
        w,
        "<div class=\"tool {}\">",
        if failed { "error" } else { "ok" }
    )?;
    w.write_all(b"<div class=\"tool-head\"><span class=\"tool-name\">$</span> ")?;
    esc(w, b.command)?;
    w.write_all(b"</div>\n")?;
    output(w, b.output, 10, false)?;
    if b.cancelled {
        w.write_all(b"<div class=\"warn-text\">(cancelled)</div>\n")?;
    } else if let Some(code) = b.exit_code.filter(|&c| c != 0) {
        writeln!(w, "<div class=\"error-text\">(exit {code})</div>")?;
    }
    if b.truncated {
        let mut msg = String::from("Output truncated");
        if let Some(p) = b.full_output_path {
            msg.push_str("; full output in ");
            msg.push_str(p);
        }
        note(w, &msg)?;
    }
    w.write_all(b"</div>\n")
}

/// `custom` messages (shown unless they ask not to be), summary messages and roles of newer
/// versions.
fn other(w: Out<'_>, s: &Session, e: &Entry, o: &OtherView<'_>) -> io::Result<()> {
    if !o.display {
        return Ok(());
    }
    let who = match o.role {
        "custom" => "Extension",
        "branchSummary" => "Branch summary",
        "compactionSummary" => "Compaction summary",
        _ => "Message",
    };
    open(w, s, e, "custom", who)?;
    if let Some(t) = o.custom_type {
        w.write_all(b"<div class=\"badge-line\"><span class=\"badge\">")?;
        esc(w, t)?;
        w.write_all(b"</span></div>\n")?;
    } else if who == "Message" {
        note(w, &format!("role {:?}", o.role))?;
    }
    blocks(w, &o.blocks)?;
    close(w)
}
