//! Assistant text as plain wrapped lines, with the same streaming interface the markdown
//! renderer offers (stable lines once, then the open tail). Stands in until markdown lands.

use super::text::{lines_of, wrap_all, Line};
use super::theme::Theme;

pub fn render(text: &str, width: usize, theme: &Theme) -> Vec<Line> {
    wrap_all(&lines_of(text, theme.text), width)
}

#[derive(Default)]
pub struct MarkdownStream {
    source: String,
    taken: usize,
    done: bool,
}

impl MarkdownStream {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn push(&mut self, delta: &str) {
        self.source.push_str(delta);
    }
    pub fn take_stable(&mut self, width: usize, theme: &Theme) -> Vec<Line> {
        let open = &self.source[self.taken..];
        match open.rfind('\n') {
            Some(i) => {
                let lines = render(&open[..i], width, theme);
                self.taken += i + 1;
                lines
            }
            None => Vec::new(),
        }
    }
    pub fn render_tail(&self, width: usize, theme: &Theme) -> Vec<Line> {
        let open = &self.source[self.taken..];
        if open.is_empty() {
            return Vec::new();
        }
        render(open, width, theme)
    }
    pub fn finish(&mut self, width: usize, theme: &Theme) -> Vec<Line> {
        let lines = self.render_tail(width, theme);
        self.taken = self.source.len();
        self.done = true;
        lines
    }
}
