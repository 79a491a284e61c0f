//! pulldown-cmark's event stream folded into a small block tree with styled inline content.
//! Layout (widths, prefixes, wrapping) needs to see a whole block at once — a list's widest
//! number, a table's widest cell — so the renderer works on this tree rather than on events.
//! Inline styles are resolved here, from `Theme` roles only.

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Tag, TagEnd};

use super::sanitize;
use crate::modes::interactive::text::{Line, Style};
use crate::modes::interactive::theme::Theme;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Block {
    /// Inline content split at hard breaks; soft breaks are already spaces.
    Para(Vec<Line>),
    Heading(u8, Vec<Line>),
    Quote(Vec<Block>),
    List {
        start: Option<u64>,
        loose: bool,
        items: Vec<Item>,
    },
    /// `info` is the fence's info string; `None` for indented code.
    Code {
        info: Option<String>,
        text: String,
    },
    Html(String),
    Rule,
    Table(Table),
}

#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct Item {
    pub task: Option<bool>,
    pub blocks: Vec<Block>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct Table {
    pub aligns: Vec<Alignment>,
    pub head: Vec<Line>,
    pub rows: Vec<Vec<Line>>,
}

/// Inline content being collected: the styled text, split at hard breaks.
struct Inline {
    lines: Vec<Line>,
    styles: Vec<Style>,
    links: Vec<OpenLink>,
}

/// A link being collected: its destination and the plain text seen inside so far, to tell
/// whether the address adds anything to the text.
struct OpenLink {
    dest: String,
    text: String,
    /// Images always show their address: the alt text is not the picture.
    always: bool,
}

impl Inline {
    fn new(base: Style) -> Inline {
        Inline {
            lines: vec![Line::new()],
            styles: vec![base],
            links: Vec::new(),
        }
    }
    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }
    fn push(&mut self, text: &str, style: Style) {
        for l in self.links.iter_mut() {
            l.text.push_str(text);
        }
        if let Some(line) = self.lines.last_mut() {
            line.push(sanitize(text), style);
        }
    }
    fn text(&mut self, text: &str) {
        let style = self.style();
        self.push(text, style);
    }
    fn hard_break(&mut self) {
        self.lines.push(Line::new());
    }
    fn finish(mut self) -> Vec<Line> {
        // A trailing hard break (only possible at the end of a table cell or heading) adds
        // nothing visible.
        while self.lines.len() > 1 && self.lines.last().is_some_and(|l| l.spans.is_empty()) {
            self.lines.pop();
        }
        self.lines
    }
}

enum Frame {
    Quote(Vec<Block>),
    List {
        start: Option<u64>,
        /// pulldown-cmark wraps item text in paragraphs only in loose lists.
        loose: bool,
        items: Vec<Item>,
    },
    Item {
        item: Item,
        /// Text directly inside an item (a tight list has no paragraph tags).
        tight: Option<Inline>,
    },
    Para(Inline),
    Heading(u8, Inline),
    Code {
        info: Option<String>,
        text: String,
    },
    Html(String),
    Table {
        table: Table,
        row: Vec<Line>,
        cell: Option<Inline>,
    },
}

/// Folds one segment's events into blocks.
pub(super) struct Builder<'t> {
    theme: &'t Theme,
    stack: Vec<Frame>,
    blocks: Vec<Block>,
}

fn heading_level(l: HeadingLevel) -> u8 {
    match l {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

impl<'t> Builder<'t> {
    pub fn new(theme: &'t Theme) -> Builder<'t> {
        Builder {
            theme,
            stack: Vec::new(),
            blocks: Vec::new(),
        }
    }

    pub fn finish(mut self) -> Vec<Block> {
        // Events are balanced, but be total anyway: close whatever is still open.
        while !self.stack.is_empty() {
            self.close_top();
        }
        self.blocks
    }

    fn inline(&mut self) -> Option<&mut Inline> {
        match self.stack.last_mut()? {
            Frame::Para(i) | Frame::Heading(_, i) => Some(i),
            Frame::Table { cell, .. } => cell.as_mut(),
            Frame::Item { tight, .. } => {
                Some(tight.get_or_insert_with(|| Inline::new(self.theme.text)))
            }
            _ => None,
        }
    }

    /// A finished block goes into the innermost container (or the document).
    fn add_block(&mut self, block: Block) {
        match self.stack.last_mut() {
            Some(Frame::Quote(blocks)) => blocks.push(block),
            Some(Frame::Item { item, tight }) => {
                if let Some(t) = tight.take() {
                    item.blocks.push(Block::Para(t.finish()));
                }
                item.blocks.push(block);
            }
            _ => self.blocks.push(block),
        }
    }

    /// Before a block starts inside a tight item, the item's loose text becomes a paragraph.
    fn flush_tight(&mut self) {
        if let Some(Frame::Item { item, tight }) = self.stack.last_mut() {
            if let Some(t) = tight.take() {
                item.blocks.push(Block::Para(t.finish()));
            }
        }
    }

    pub fn event(&mut self, ev: Event<'_>) {
        match ev {
            Event::Start(tag) => self.start(tag),
            Event::End(end) => self.end(end),
            Event::Text(t) | Event::InlineMath(t) | Event::DisplayMath(t) => self.text(&t),
            Event::Html(t) => match self.stack.last_mut() {
                Some(Frame::Html(buf)) => buf.push_str(&t),
                _ => self.text(&t),
            },
            // Raw HTML is shown as written: a terminal cannot render it.
            Event::InlineHtml(t) => self.text(&t),
            Event::Code(t) => {
                let code = self.theme.inline_code;
                if let Some(i) = self.inline() {
                    let style = i.style().patch(code);
                    i.push(&t, style);
                }
            }
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => {
                let in_cell = matches!(self.stack.last(), Some(Frame::Table { .. }));
                if let Some(i) = self.inline() {
                    if in_cell {
                        i.text(" ");
                    } else {
                        i.hard_break();
                    }
                }
            }
            Event::Rule => {
                self.flush_tight();
                self.add_block(Block::Rule);
            }
            Event::TaskListMarker(done) => match self.stack.last_mut() {
                Some(Frame::Item { item, tight: None }) if item.blocks.is_empty() => {
                    item.task = Some(done);
                }
                _ => self.text(if done { "[x] " } else { "[ ] " }),
            },
            Event::FootnoteReference(label) => self.text(&format!("[^{label}]")),
        }
    }

    fn text(&mut self, t: &str) {
        match self.stack.last_mut() {
            Some(Frame::Code { text, .. }) | Some(Frame::Html(text)) => text.push_str(t),
            _ => {
                if let Some(i) = self.inline() {
                    i.text(t);
                }
            }
        }
    }

    fn push_style(&mut self, role: Style) {
        if let Some(i) = self.inline() {
            let s = i.style().patch(role);
            i.styles.push(s);
        }
    }

    fn pop_style(&mut self) {
        if let Some(i) = self.inline() {
            if i.styles.len() > 1 {
                i.styles.pop();
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        let theme = self.theme;
        match tag {
            Tag::Paragraph => {
                let n = self.stack.len();
                if n >= 2 && matches!(self.stack[n - 1], Frame::Item { .. }) {
                    if let Frame::List { loose, .. } = &mut self.stack[n - 2] {
                        *loose = true;
                    }
                }
                self.flush_tight();
                self.stack.push(Frame::Para(Inline::new(theme.text)));
            }
            Tag::Heading { level, .. } => {
                self.flush_tight();
                // No `text` colour under the heading's own (`mdHeading`).
                self.stack.push(Frame::Heading(
                    heading_level(level),
                    Inline::new(Style::plain()),
                ));
            }
            Tag::BlockQuote(_) => {
                self.flush_tight();
                self.stack.push(Frame::Quote(Vec::new()));
            }
            Tag::CodeBlock(kind) => {
                self.flush_tight();
                let info = match kind {
                    CodeBlockKind::Fenced(info) => Some(info.to_string()),
                    CodeBlockKind::Indented => None,
                };
                self.stack.push(Frame::Code {
                    info,
                    text: String::new(),
                });
            }
            Tag::HtmlBlock => {
                self.flush_tight();
                self.stack.push(Frame::Html(String::new()));
            }
            Tag::List(start) => {
                self.flush_tight();
                self.stack.push(Frame::List {
                    start,
                    loose: false,
                    items: Vec::new(),
                });
            }
            Tag::Item => self.stack.push(Frame::Item {
                item: Item::default(),
                tight: None,
            }),
            Tag::Table(aligns) => {
                self.flush_tight();
                self.stack.push(Frame::Table {
                    table: Table {
                        aligns,
                        ..Table::default()
                    },
                    row: Vec::new(),
                    cell: None,
                });
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(Frame::Table { row, .. }) = self.stack.last_mut() {
                    row.clear();
                }
            }
            Tag::TableCell => {
                if let Some(Frame::Table { cell, .. }) = self.stack.last_mut() {
                    *cell = Some(Inline::new(theme.text));
                }
            }
            Tag::Emphasis => self.push_style(theme.italic),
            Tag::Strong => self.push_style(theme.bold),
            Tag::Strikethrough => self.push_style(theme.strike),
            Tag::Superscript | Tag::Subscript => self.push_style(Style::plain()),
            Tag::Link { dest_url, .. } => {
                self.push_style(theme.link);
                if let Some(i) = self.inline() {
                    i.links.push(OpenLink {
                        dest: dest_url.to_string(),
                        text: String::new(),
                        always: false,
                    });
                }
            }
            Tag::Image { dest_url, .. } => {
                self.push_style(theme.link);
                if let Some(i) = self.inline() {
                    i.text("[image: ");
                    i.links.push(OpenLink {
                        dest: dest_url.to_string(),
                        text: String::new(),
                        always: true,
                    });
                }
            }
            Tag::FootnoteDefinition(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::MetadataBlock(_) => {}
        }
    }

    fn end(&mut self, end: TagEnd) {
        match end {
            TagEnd::Paragraph
            | TagEnd::Heading(_)
            | TagEnd::BlockQuote(_)
            | TagEnd::CodeBlock
            | TagEnd::HtmlBlock
            | TagEnd::List(_)
            | TagEnd::Item
            | TagEnd::Table => self.close_top(),
            TagEnd::TableHead | TagEnd::TableRow => {
                if let Some(Frame::Table { table, row, .. }) = self.stack.last_mut() {
                    let cells = std::mem::take(row);
                    if matches!(end, TagEnd::TableHead) {
                        table.head = cells;
                    } else {
                        table.rows.push(cells);
                    }
                }
            }
            TagEnd::TableCell => {
                if let Some(Frame::Table { row, cell, .. }) = self.stack.last_mut() {
                    if let Some(c) = cell.take() {
                        let mut line = Line::new();
                        for (k, l) in c.finish().into_iter().enumerate() {
                            if k > 0 {
                                line.push(" ", Style::plain());
                            }
                            for s in l.spans {
                                line.push(s.text(), s.style);
                            }
                        }
                        row.push(line);
                    }
                }
            }
            TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Superscript
            | TagEnd::Subscript => self.pop_style(),
            TagEnd::Link | TagEnd::Image => {
                let url = self.theme.link_url;
                if let Some(i) = self.inline() {
                    if matches!(end, TagEnd::Image) {
                        i.text("]");
                    }
                    if i.styles.len() > 1 {
                        i.styles.pop();
                    }
                    if let Some(l) = i.links.pop() {
                        let same = l.dest == l.text
                            || l.dest.strip_prefix("mailto:") == Some(l.text.as_str());
                        if !l.dest.is_empty() && (l.always || !same) {
                            i.push(&format!(" ({})", l.dest), url);
                        }
                    }
                }
            }
            TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::MetadataBlock(_) => {}
        }
    }

    fn close_top(&mut self) {
        let Some(frame) = self.stack.pop() else {
            return;
        };
        match frame {
            Frame::Quote(blocks) => self.add_block(Block::Quote(blocks)),
            Frame::List {
                start,
                loose,
                items,
            } => self.add_block(Block::List {
                start,
                loose,
                items,
            }),
            Frame::Item { mut item, tight } => {
                if let Some(t) = tight {
                    item.blocks.push(Block::Para(t.finish()));
                }
                if let Some(Frame::List { items, .. }) = self.stack.last_mut() {
                    items.push(item);
                } else {
                    // An item outside a list cannot come from the parser; keep its content.
                    for b in item.blocks {
                        self.add_block(b);
                    }
                }
            }
            Frame::Para(i) => self.add_block(Block::Para(i.finish())),
            Frame::Heading(level, i) => self.add_block(Block::Heading(level, i.finish())),
            Frame::Code { info, text } => self.add_block(Block::Code { info, text }),
            Frame::Html(text) => self.add_block(Block::Html(text)),
            Frame::Table { table, .. } => self.add_block(Block::Table(table)),
        }
    }
}
