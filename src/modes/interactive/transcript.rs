//! The conversation as the person sees it: a list of items (their messages, the model's
//! thinking and text, tool calls, `!` commands, notices), each rendered at the current width.
//! Items are printed into the terminal's scrollback in order, once each, as soon as they can no
//! longer change; a streaming text item is printed block by block as its blocks complete. What
//! is not printed yet is the live region's top part. On a width change everything shown is
//! rendered again at the new width ([`Transcript::reprint`]). Only the newest items that fill
//! a few screens are ever rendered when a long session opens, so opening 5,000 messages costs
//! what a screenful costs.

use super::markdown::{self, MarkdownStream};
use super::text::{lines_of, on_panel, wrap, Line, Style};
use super::theme::Theme;
use super::tool_view::{ToolCallView, ToolStatus};

/// A `!cmd` the person ran.
#[derive(Debug, Clone)]
pub struct BashView {
    pub command: String,
    pub output: String,
    /// `None` while it runs; the exit code (or a note such as "aborted") after.
    pub status: Option<String>,
    /// `!!`: not added to the context.
    pub excluded: bool,
}

#[derive(Debug)]
pub enum Item {
    User(String),
    Thinking {
        text: String,
        done: bool,
    },
    Text(TextItem),
    Tool(ToolCallView),
    Bash(BashView),
    /// A hook's message (`custom`): its type and text, on the custom-message panel.
    Custom {
        kind: String,
        text: String,
    },
    /// A line of information: errors, hook notices, compaction, retries.
    Notice {
        text: String,
        style: Style,
    },
    /// The start-up header: the version, key hints, what loaded (expanded by Ctrl+O).
    Header {
        loaded: Box<crate::controller::loaded::Loaded>,
        cwd: std::path::PathBuf,
    },
    /// A compaction or branch summary: one line collapsed, the whole summary expanded (Ctrl+O).
    Summary {
        /// `[compaction]` or `[branch]`.
        label: String,
        /// The collapsed line (`Compacted from 1,234 tokens`, `Branch summary`).
        headline: String,
        summary: String,
    },
}

/// Assistant text: the source so far and, while it streams, its stream renderer. Text read
/// from a session has no stream (rendered whole when shown), so opening a long session does
/// not parse what is never shown.
pub struct TextItem {
    pub source: String,
    pub done: bool,
    stream: Option<MarkdownStream>,
}

impl std::fmt::Debug for TextItem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextItem")
            .field("source", &self.source)
            .field("done", &self.done)
            .finish()
    }
}

impl TextItem {
    pub fn new() -> TextItem {
        TextItem {
            source: String::new(),
            done: false,
            stream: None,
        }
    }

    /// Finished text (from a session): rendered whole when it is shown.
    pub fn finished(text: &str) -> TextItem {
        TextItem {
            source: text.to_string(),
            done: true,
            stream: None,
        }
    }

    pub fn push(&mut self, delta: &str) {
        self.source.push_str(delta);
        self.stream
            .get_or_insert_with(MarkdownStream::new)
            .push(delta);
    }

    /// Lines that can no longer change, each once; everything when the text is done.
    fn take(&mut self, width: usize, theme: &Theme) -> Vec<Line> {
        match &mut self.stream {
            Some(stream) => {
                let mut lines = stream.take_stable(width, theme);
                if self.done {
                    lines.extend(stream.finish(width, theme));
                }
                lines
            }
            None if self.done => markdown::render(&self.source, width, theme),
            None => Vec::new(),
        }
    }

    fn tail(&self, width: usize, theme: &Theme) -> Vec<Line> {
        match &self.stream {
            Some(stream) => stream.render_tail(width, theme),
            None => Vec::new(),
        }
    }
}

impl Default for TextItem {
    fn default() -> Self {
        TextItem::new()
    }
}

impl Item {
    fn finished(&self) -> bool {
        match self {
            Item::User(_)
            | Item::Custom { .. }
            | Item::Notice { .. }
            | Item::Summary { .. }
            | Item::Header { .. } => true,
            Item::Thinking { done, .. } => *done,
            Item::Text(t) => t.done,
            Item::Tool(t) => t.finished(),
            Item::Bash(b) => b.status.is_some(),
        }
    }
}

pub struct Transcript {
    pub items: Vec<Item>,
    /// Items before this index are in the scrollback.
    committed: usize,
    /// Whether items[committed] has already had its first line (the separator) printed.
    started: bool,
    /// Items before this index were never shown (a long session opened).
    hidden: usize,
    pub show_thinking: bool,
    /// Ctrl+O: tool output whole and summaries in full.
    pub expanded: bool,
}

/// How many rows of history are rendered when a session opens or the width changes.
const REPRINT_ROWS: usize = 400;

impl Default for Transcript {
    fn default() -> Self {
        Transcript::new()
    }
}

impl Transcript {
    pub fn new() -> Transcript {
        Transcript {
            items: Vec::new(),
            committed: 0,
            started: false,
            hidden: 0,
            show_thinking: true,
            expanded: false,
        }
    }

    pub fn push(&mut self, item: Item) {
        self.items.push(item);
    }

    pub fn notice(&mut self, text: impl Into<String>, style: Style) {
        self.items.push(Item::Notice {
            text: text.into(),
            style,
        });
    }

    pub fn last_text_mut(&mut self) -> Option<&mut TextItem> {
        match self.items.last_mut() {
            Some(Item::Text(t)) if !t.done => Some(t),
            _ => None,
        }
    }

    pub fn tool_mut(&mut self, id: &str) -> Option<&mut ToolCallView> {
        self.items.iter_mut().rev().find_map(|i| match i {
            Item::Tool(t) if t.id == id => Some(t),
            _ => None,
        })
    }

    pub fn bash_mut(&mut self) -> Option<&mut BashView> {
        self.items.iter_mut().rev().find_map(|i| match i {
            Item::Bash(b) if b.status.is_none() => Some(b),
            _ => None,
        })
    }

    /// Whether a tool call or `!` command is still running (its spinner turns).
    pub fn has_running(&self) -> bool {
        self.items[self.committed..]
            .iter()
            .any(|i| matches!(i, Item::Tool(_) | Item::Bash(_)) && !i.finished())
    }

    /// Everything still open is closed (a run ended or was aborted).
    pub fn close_open(&mut self) {
        for item in &mut self.items[self.committed..] {
            match item {
                Item::Thinking { done, .. } => *done = true,
                Item::Text(t) => t.done = true,
                _ => {}
            }
        }
    }

    /// Expand or collapse tool output and summaries (Ctrl+O). Expanding reads each truncated
    /// call's full output file once; the caller prints the transcript again.
    pub fn set_expanded(&mut self, expanded: bool) {
        self.expanded = expanded;
        if !expanded {
            return;
        }
        for item in &mut self.items {
            if let Item::Tool(t) = item {
                if t.full_output.is_none() && t.finished() {
                    t.full_output = super::tool_output::read_full_output(t.details.as_ref());
                }
            }
        }
    }

    fn opts(&self) -> Opts {
        Opts {
            thinking: self.show_thinking,
            expanded: self.expanded,
        }
    }

    /// Lines that can now go to the scrollback, each item's once.
    pub fn take_commit(&mut self, width: usize, theme: &Theme) -> Vec<Line> {
        let opts = self.opts();
        let mut out = Vec::new();
        while self.committed < self.items.len() {
            let first = self.committed == self.hidden;
            let item = &mut self.items[self.committed];
            if !self.started && !first {
                out.push(Line::new());
            }
            match item {
                Item::Text(t) => {
                    let lines = t.take(width, theme);
                    if !lines.is_empty() || t.done {
                        self.started = true;
                    } else if !self.started && !first {
                        out.pop();
                    }
                    out.extend(lines);
                    if !t.done {
                        return out;
                    }
                }
                _ if item.finished() => {
                    out.extend(render_item(item, width, theme, "", opts));
                }
                _ => {
                    if !self.started && !first {
                        out.pop();
                    }
                    return out;
                }
            }
            self.committed += 1;
            self.started = false;
        }
        out
    }

    /// The items not yet in the scrollback, for the live region.
    pub fn live(&self, width: usize, theme: &Theme, spinner: &str) -> Vec<Line> {
        let mut out = Vec::new();
        for (i, item) in self.items.iter().enumerate().skip(self.committed) {
            let first = i == self.hidden;
            let continuing = i == self.committed && self.started;
            let lines = match item {
                Item::Text(t) => t.tail(width, theme),
                other => render_item(other, width, theme, spinner, self.opts()),
            };
            if lines.is_empty() {
                continue;
            }
            if !first && !continuing {
                out.push(Line::new());
            }
            out.extend(lines);
        }
        out
    }

    /// The whole visible transcript again at `width` (after the screen was cleared for a width
    /// change, or when a session opens): the newest items that fill about `REPRINT_ROWS` rows,
    /// with a note on how many earlier items are not shown. Streaming items restart so their
    /// stable part is taken at the new width.
    pub fn reprint(&mut self, width: usize, theme: &Theme) -> Vec<Line> {
        let upto = self.committed;
        let mut rows = 0;
        let mut start = upto;
        while start > 0 && rows < REPRINT_ROWS {
            start -= 1;
            rows += render_item(&self.items[start], width, theme, "", self.opts()).len() + 1;
        }
        let mut out = Vec::new();
        if start > 0 {
            out.push(Line::styled(
                format!("… {start} earlier items not shown (/tree browses the whole session)"),
                theme.muted,
            ));
        }
        for (n, item) in self.items[start..upto].iter().enumerate() {
            if n > 0 || start > 0 {
                out.push(Line::new());
            }
            out.extend(render_item(item, width, theme, "", self.opts()));
        }
        self.hidden = if upto == 0 {
            0
        } else {
            start.min(self.hidden.max(start))
        };
        if out.is_empty() {
            self.hidden = upto;
        }
        // A partly printed text item is printed again from its start.
        if let Some(Item::Text(t)) = self.items.get_mut(upto) {
            let mut fresh = TextItem::new();
            fresh.push(&t.source);
            fresh.done = t.done;
            *t = fresh;
        }
        self.started = false;
        out
    }

    /// A session opened: its messages become items, and only the newest are rendered.
    pub fn open(&mut self, items: Vec<Item>, width: usize, theme: &Theme) -> Vec<Line> {
        self.items = items;
        self.committed = self.items.len();
        self.hidden = 0;
        self.started = false;
        let lines = self.reprint(width, theme);
        if lines.is_empty() {
            self.hidden = self.committed;
        }
        lines
    }

    /// Forget everything (a new session).
    pub fn clear(&mut self) {
        self.items.clear();
        self.committed = 0;
        self.hidden = 0;
        self.started = false;
    }
}

/// How items are shown: thinking (Ctrl+T) and output expanded (Ctrl+O).
#[derive(Debug, Clone, Copy)]
struct Opts {
    thinking: bool,
    expanded: bool,
}

/// One item's lines (complete items; a text item renders its whole source).
fn render_item(item: &Item, width: usize, theme: &Theme, spinner: &str, opts: Opts) -> Vec<Line> {
    let thinking = opts.thinking;
    match item {
        Item::User(text) => {
            let mut out = Vec::new();
            for (i, l) in lines_of(text, theme.user_message).into_iter().enumerate() {
                let prefix = if i == 0 { "› " } else { "  " };
                out.extend(wrap(
                    &l.prefixed(prefix, theme.accent),
                    width,
                    &Line::plain("  "),
                ));
            }
            on_panel(out, width, theme.user_message)
        }
        Item::Custom { kind, text } => {
            let mut first = Line::styled(format!("[{kind}]"), theme.custom_label);
            first.push(" ", theme.custom_message);
            let mut out = Vec::new();
            for (i, l) in lines_of(text, theme.custom_message).into_iter().enumerate() {
                let l = if i == 0 {
                    let mut f = first.clone();
                    for s in &l.spans {
                        f.push(s.text(), s.style);
                    }
                    f
                } else {
                    l
                };
                out.extend(wrap(&l, width, &Line::plain("  ")));
            }
            on_panel(out, width, theme.custom_message)
        }
        Item::Thinking { text, .. } => {
            if !thinking {
                let words = text.split_whitespace().count();
                return vec![Line::styled(
                    format!("∴ thinking ({words} words, Ctrl+T shows)"),
                    theme.thinking,
                )];
            }
            lines_of(text.trim(), theme.thinking)
                .iter()
                .flat_map(|l| wrap(&l.prefixed("∴ ", theme.thinking), width, &Line::plain("  ")))
                .collect()
        }
        Item::Text(t) => markdown::render(&t.source, width, theme),
        Item::Tool(t) => {
            let panel = match t.status {
                ToolStatus::Pending | ToolStatus::Running => theme.tool_pending,
                ToolStatus::Done => theme.tool_success,
                ToolStatus::Failed | ToolStatus::Blocked(_) => theme.tool_error,
            };
            on_panel(t.render(width, theme, spinner, opts.expanded), width, panel)
        }
        Item::Bash(b) => {
            let mut title = Line::new();
            let (bang, look) = if b.excluded {
                ("!! ", theme.dim)
            } else {
                ("! ", theme.bash_mode)
            };
            title.push(bang, look);
            title.push(b.command.clone(), look.bold());
            let mut out = wrap(&title, width, &Line::plain("  "));
            let text = b.output.trim_end_matches('\n');
            if !text.is_empty() {
                let all = lines_of(text, theme.tool_output);
                let skip = if opts.expanded {
                    0
                } else {
                    all.len().saturating_sub(20)
                };
                if skip > 0 {
                    out.push(Line::styled(
                        format!("  ... ({skip} earlier lines, ctrl+o to expand)"),
                        theme.muted,
                    ));
                }
                for l in all.into_iter().skip(skip) {
                    out.extend(wrap(
                        &l.prefixed("  ", Style::plain()),
                        width,
                        &Line::plain("  "),
                    ));
                }
            }
            match &b.status {
                None => out.push(Line::styled(format!("  {spinner} running"), theme.muted)),
                Some(s) if s != "0" => out.push(Line::styled(format!("  exit {s}"), theme.error)),
                Some(_) => {}
            }
            out
        }
        Item::Notice { text, style } => lines_of(text, *style)
            .iter()
            .flat_map(|l| wrap(l, width, &Line::plain("  ")))
            .collect(),
        Item::Header { loaded, cwd } => super::banner::header(
            loaded,
            opts.expanded,
            cwd,
            dirs::home_dir().as_deref(),
            theme,
        ),
        Item::Summary {
            label,
            headline,
            summary,
        } => {
            let mut out = vec![
                Line::styled(label.clone(), theme.accent.bold()),
                Line::new(),
            ];
            if opts.expanded {
                out.push(Line::styled(headline.clone(), theme.muted.bold()));
                out.push(Line::new());
                out.extend(markdown::render(summary, width, theme));
            } else {
                let mut l = Line::styled(format!("{headline} ("), theme.muted);
                l.push("ctrl+o", theme.muted.dim());
                l.push(" to expand)", theme.muted);
                out.push(l);
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::theme::ThemeName;

    fn texts(lines: &[Line]) -> Vec<String> {
        lines.iter().map(Line::text).collect()
    }

    #[test]
    fn finished_items_commit_once_in_order_with_a_blank_line_between() {
        let theme = Theme::new(ThemeName::Dark, false);
        let mut t = Transcript::new();
        t.push(Item::User("hi".into()));
        let mut text = TextItem::new();
        text.push("first paragraph\n\nsecond\n\nthird");
        t.push(Item::Text(text));
        let c1 = texts(&t.take_commit(80, &theme));
        assert_eq!(c1[0], "› hi");
        assert!(c1.contains(&"first paragraph".to_string()), "{c1:?}");
        assert!(!c1.iter().any(|l| l.contains("second")), "{c1:?}");
        assert!(texts(&t.live(80, &theme, ""))
            .iter()
            .any(|l| l.contains("second")));
        t.close_open();
        let c2 = texts(&t.take_commit(80, &theme));
        assert!(c2.iter().any(|l| l.contains("third")), "{c2:?}");
        assert!(t.take_commit(80, &theme).is_empty());
        assert!(t.live(80, &theme, "").is_empty());
    }

    #[test]
    fn opening_a_long_session_renders_only_the_newest_items() {
        let theme = Theme::new(ThemeName::Dark, false);
        let mut t = Transcript::new();
        let items = (0..5000)
            .map(|i| Item::User(format!("message {i}")))
            .collect();
        let lines = t.open(items, 80, &theme);
        assert!(lines.len() <= REPRINT_ROWS + 4, "{}", lines.len());
        assert!(lines[0].text().contains("earlier items not shown"));
        assert_eq!(lines.last().map(Line::text), Some("› message 4999".into()));
    }
}
