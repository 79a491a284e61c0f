//! The figures in the page's header: message counts, tool calls, tokens, cost and models,
//! added up over every entry of the session file (all branches), as pi's export does, and
//! the number formats pi shows them in.

use crate::session::{Entry, EntryKind};

use super::view::{Block, MessageView};

#[derive(Debug, Default, PartialEq)]
pub(crate) struct Stats {
    pub user: usize,
    pub assistant: usize,
    pub tool_results: usize,
    pub custom: usize,
    pub compactions: usize,
    pub branch_summaries: usize,
    pub tool_calls: usize,
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub cost: f64,
    /// `provider/model` of the assistant messages, in order of first use.
    pub models: Vec<String>,
}

impl Stats {
    pub fn of<'a>(entries: impl IntoIterator<Item = &'a Entry>) -> Stats {
        let mut s = Stats::default();
        for e in entries {
            match &e.kind {
                EntryKind::Message(m) => s.add_message(&MessageView::of(&m.message)),
                EntryKind::Compaction(_) => s.compactions += 1,
                EntryKind::BranchSummary(_) => s.branch_summaries += 1,
                EntryKind::CustomMessage(_) => s.custom += 1,
                _ => {}
            }
        }
        s
    }

    fn add_message(&mut self, m: &MessageView<'_>) {
        match m {
            MessageView::User(_) => self.user += 1,
            MessageView::ToolResult(_) => self.tool_results += 1,
            MessageView::Assistant(a) => {
                self.assistant += 1;
                if !a.model.is_empty() {
                    let model = if a.provider.is_empty() {
                        a.model.to_string()
                    } else {
                        format!("{}/{}", a.provider, a.model)
                    };
                    if !self.models.contains(&model) {
                        self.models.push(model);
                    }
                }
                self.input += a.usage.input;
                self.output += a.usage.output;
                self.cache_read += a.usage.cache_read;
                self.cache_write += a.usage.cache_write;
                self.cost += a.usage.cost;
                self.tool_calls += a
                    .blocks
                    .iter()
                    .filter(|b| matches!(b, Block::ToolCall(_)))
                    .count();
            }
            MessageView::Bash(_) | MessageView::System(_) | MessageView::Other(_) => {}
        }
    }

    /// `2 user, 3 assistant, 1 tool results`, or `0`.
    pub fn messages_line(&self) -> String {
        let parts: Vec<String> = [
            (self.user, "user"),
            (self.assistant, "assistant"),
            (self.tool_results, "tool results"),
            (self.custom, "custom"),
            (self.compactions, "compactions"),
            (self.branch_summaries, "branch summaries"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        if parts.is_empty() {
            "0".into()
        } else {
            parts.join(", ")
        }
    }

    /// `↑1.2k ↓85 R1.0k W512`, or `0`.
    pub fn tokens_line(&self) -> String {
        let parts: Vec<String> = [
            (self.input, "↑"),
            (self.output, "↓"),
            (self.cache_read, "R"),
            (self.cache_write, "W"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, mark)| format!("{mark}{}", format_tokens(*n)))
        .collect();
        if parts.is_empty() {
            "0".into()
        } else {
            parts.join(" ")
        }
    }

    /// `$0.009`: dollars to three places.
    pub fn cost_line(&self) -> String {
        format!("${:.3}", self.cost)
    }
}

/// pi's short token counts: `999`, `1.2k`, `12k`, `1.2M`.
pub(crate) fn format_tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..10_000 => format!("{:.1}k", n as f64 / 1e3),
        10_000..1_000_000 => format!("{}k", (n as f64 / 1e3).round()),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// `48,210`: a count with thousands separators, as pi's `toLocaleString()` shows it in
/// English.
pub(crate) fn with_separators(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_in_pi() {
        assert_eq!(format_tokens(999), "999");
        assert_eq!(format_tokens(1285), "1.3k");
        assert_eq!(format_tokens(48_210), "48k");
        assert_eq!(format_tokens(2_500_000), "2.5M");
        assert_eq!(with_separators(0), "0");
        assert_eq!(with_separators(999), "999");
        assert_eq!(with_separators(48_210), "48,210");
        assert_eq!(with_separators(1_234_567), "1,234,567");
    }

    #[test]
    fn an_empty_session_shows_zeroes() {
        let s = Stats::of(&[]);
        assert_eq!(
            (s.messages_line(), s.tokens_line(), s.cost_line()),
            ("0".to_string(), "0".to_string(), "$0.000".to_string())
        );
    }
}
