//! The `truncation` object tools put in their result details, shaped like pi's
//! `TruncationResult` so UIs and session files written by either implementation agree; and
//! the [`Listing`] grep, find and ls share: the same cut, the same bracketed notices, the
//! same details, written once so the three cannot drift apart. The notice pieces bash and read
//! share with them (`[…]` under the text, `Showing lines A-B of N`, `50.0KB limit`) are here
//! too, so every tool words a cut alike.

use serde_json::{json, Map, Value};

use super::truncate::{
    format_size, truncate_head, Limits, TruncatedBy, Truncation, DEFAULT_MAX_BYTES,
};
use super::ToolOutput;

/// JavaScript's `Number.MAX_SAFE_INTEGER`: pi's "no line limit" for grep and find.
pub const MAX_SAFE_INTEGER: usize = 9_007_199_254_740_991;

/// pi's `TruncationResult` as it appears in tool details (camelCase, with the limits used).
pub fn truncation_json(t: &Truncation, limits: Limits) -> Value {
    json!({
        "content": t.content,
        "truncated": t.truncated,
        "truncatedBy": match t.truncated_by {
            Some(TruncatedBy::Lines) => Value::from("lines"),
            Some(TruncatedBy::Bytes) => Value::from("bytes"),
            None => Value::Null,
        },
        "totalLines": t.total_lines,
        "totalBytes": t.total_bytes,
        "outputLines": t.output_lines,
        "outputBytes": t.output_bytes,
        "lastLinePartial": t.last_line_partial,
        "firstLineExceedsLimit": t.first_line_exceeds_limit,
        "maxLines": limits.max_lines.min(MAX_SAFE_INTEGER),
        "maxBytes": limits.max_bytes,
    })
}

/// Adds a notice under a tool's text, bracketed and set off by a blank line as pi does.
pub fn push_notice(text: &mut String, notice: &str) {
    text.push_str("\n\n[");
    text.push_str(notice);
    text.push(']');
}

/// The byte limit as notices name it: `50.0KB limit`.
pub fn byte_limit() -> String {
    format!("{} limit", format_size(DEFAULT_MAX_BYTES))
}

/// `Showing lines A-B of N` (1-based, inclusive), with ` (50.0KB limit)` when the byte limit
/// made the cut: how read and bash begin the notice of a cut text.
pub fn showing_lines(first: usize, last: usize, total: usize, by_bytes: bool) -> String {
    let mut s = format!("Showing lines {first}-{last} of {total}");
    if by_bytes {
        s.push_str(&format!(" ({})", byte_limit()));
    }
    s
}

/// A list result (grep's matches, find's paths, ls's entries) as the model gets it: the lines
/// head-truncated, then pi's notices in one bracket (`[A. B]`) and the `details` each goes
/// with, in the order they were noted.
pub struct Listing {
    truncation: Truncation,
    limits: Limits,
    notices: Vec<String>,
    details: Map<String, Value>,
}

impl Listing {
    /// `text` (the lines, joined) cut to `limits`.
    pub fn new(text: &str, limits: Limits) -> Self {
        Listing {
            truncation: truncate_head(text, limits),
            limits,
            notices: Vec::new(),
            details: Map::new(),
        }
    }

    /// A limit was reached: `notice` for the model, `key: value` in the details.
    pub fn note(&mut self, notice: String, key: &str, value: Value) {
        self.notices.push(notice);
        self.details.insert(key.into(), value);
    }

    /// The byte limit, when it cut the text.
    pub fn note_byte_limit(&mut self) {
        if self.truncation.truncated {
            let notice = format!("{} reached", byte_limit());
            let details = truncation_json(&self.truncation, self.limits);
            self.note(notice, "truncation", details);
        }
    }

    pub fn into_output(self) -> ToolOutput {
        let mut text = self.truncation.content;
        if !self.notices.is_empty() {
            push_notice(&mut text, &self.notices.join(". "));
        }
        ToolOutput {
            content: vec![crate::message::Content::text(text)],
            details: (!self.details.is_empty()).then_some(Value::Object(self.details)),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::truncate::truncate_head;

    #[test]
    fn uses_pi_field_names() {
        let limits = Limits {
            max_lines: usize::MAX,
            max_bytes: 4,
        };
        let v = truncation_json(&truncate_head("ab\ncd\nef", limits), limits);
        assert_eq!(v["truncatedBy"], "bytes");
        assert_eq!(v["totalLines"], 3);
        assert_eq!(v["maxLines"], 9_007_199_254_740_991u64);
    }

    #[test]
    fn notices_are_bracketed_under_the_text_and_name_the_byte_limit() {
        let mut text = "out".to_string();
        push_notice(&mut text, &showing_lines(3, 9, 9, true));
        assert_eq!(text, "out\n\n[Showing lines 3-9 of 9 (50.0KB limit)]");
        assert_eq!(showing_lines(1, 2, 5, false), "Showing lines 1-2 of 5");
    }
}
