//! Output truncation shared by every tool: at most 2000 lines or 50 KB, whichever comes first,
//! never a partial line (except a single over-long last line in tail mode, as pi does).
//!
//! `head` keeps the start (read, grep, find, ls); `tail` keeps the end (bash). What was cut
//! goes, where the tool keeps it (bash's output, MCP's long texts), to a file made by
//! [`full_text_file`] whose path the notice names.

pub const DEFAULT_MAX_LINES: usize = 2000;
pub const DEFAULT_MAX_BYTES: usize = 50 * 1024;
pub const GREP_MAX_LINE_LENGTH: usize = 500;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TruncatedBy {
    Lines,
    Bytes,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncation {
    pub content: String,
    pub truncated: bool,
    pub truncated_by: Option<TruncatedBy>,
    pub total_lines: usize,
    pub total_bytes: usize,
    pub output_lines: usize,
    pub output_bytes: usize,
    /// Tail mode only: the kept text starts inside a line longer than the byte limit.
    pub last_line_partial: bool,
    /// Head mode only: the very first line alone exceeds the byte limit.
    pub first_line_exceeds_limit: bool,
}

#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_lines: usize,
    pub max_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_lines: DEFAULT_MAX_LINES,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// A new file in the temp directory that outlives pi, for the whole of a text the model got
/// cut: the notice names its path so the model can `read` what it missed.
pub fn full_text_file(
    prefix: &str,
    suffix: &str,
) -> std::io::Result<(std::fs::File, std::path::PathBuf)> {
    tempfile::Builder::new()
        .prefix(prefix)
        .suffix(suffix)
        .rand_bytes(16)
        .tempfile_in(std::env::temp_dir())
        .and_then(|f| f.keep().map_err(|e| e.error))
}

fn split_lines(s: &str) -> Vec<&str> {
    s.split('\n').collect()
}

fn untouched(content: &str, total_lines: usize) -> Truncation {
    Truncation {
        content: content.to_string(),
        truncated: false,
        truncated_by: None,
        total_lines,
        total_bytes: content.len(),
        output_lines: total_lines,
        output_bytes: content.len(),
        last_line_partial: false,
        first_line_exceeds_limit: false,
    }
}

/// Keep the first lines that fit.
pub fn truncate_head(content: &str, limits: Limits) -> Truncation {
    let lines = split_lines(content);
    let total_lines = lines.len();
    if total_lines <= limits.max_lines && content.len() <= limits.max_bytes {
        return untouched(content, total_lines);
    }
    if lines[0].len() > limits.max_bytes {
        return Truncation {
            content: String::new(),
            truncated: true,
            truncated_by: Some(TruncatedBy::Bytes),
            total_lines,
            total_bytes: content.len(),
            output_lines: 0,
            output_bytes: 0,
            last_line_partial: false,
            first_line_exceeds_limit: true,
        };
    }
    let mut out: Vec<&str> = Vec::new();
    let mut bytes = 0usize;
    let mut by = TruncatedBy::Lines;
    for (i, line) in lines.iter().enumerate() {
        if i >= limits.max_lines {
            by = TruncatedBy::Lines;
            break;
        }
        let add = line.len() + usize::from(i > 0);
        if bytes + add > limits.max_bytes {
            by = TruncatedBy::Bytes;
            break;
        }
        bytes += add;
        out.push(line);
    }
    let text = out.join("\n");
    Truncation {
        output_bytes: text.len(),
        output_lines: out.len(),
        content: text,
        truncated: true,
        truncated_by: Some(by),
        total_lines,
        total_bytes: content.len(),
        last_line_partial: false,
        first_line_exceeds_limit: false,
    }
}

/// Keep the last lines that fit. A last line longer than the byte limit is cut to its end.
pub fn truncate_tail(content: &str, limits: Limits) -> Truncation {
    let lines = split_lines(content);
    let total_lines = lines.len();
    if total_lines <= limits.max_lines && content.len() <= limits.max_bytes {
        return untouched(content, total_lines);
    }
    let mut out: Vec<&str> = Vec::new();
    let mut bytes = 0usize;
    let mut by = TruncatedBy::Lines;
    let mut partial = None;
    for (n, line) in lines.iter().rev().enumerate() {
        if n >= limits.max_lines {
            by = TruncatedBy::Lines;
            break;
        }
        let add = line.len() + usize::from(n > 0);
        if bytes + add > limits.max_bytes {
            by = TruncatedBy::Bytes;
            if out.is_empty() {
                // A single line longer than the limit: keep its tail, on a char boundary.
                let mut start = line.len() - limits.max_bytes;
                while !line.is_char_boundary(start) {
                    start += 1;
                }
                partial = Some(&line[start..]);
            }
            break;
        }
        bytes += add;
        out.push(line);
    }
    let last_line_partial = partial.is_some();
    if let Some(p) = partial {
        out.push(p);
    }
    out.reverse();
    let text = out.join("\n");
    Truncation {
        output_bytes: text.len(),
        output_lines: out.len(),
        content: text,
        truncated: true,
        truncated_by: Some(by),
        total_lines,
        total_bytes: content.len(),
        last_line_partial,
        first_line_exceeds_limit: false,
    }
}

/// Cut one line to `max` characters, marking the cut as pi's grep does.
pub fn truncate_line(line: &str, max: usize) -> (String, bool) {
    if line.chars().count() <= max {
        return (line.to_string(), false);
    }
    let cut: String = line.chars().take(max).collect();
    (format!("{cut}... [truncated]"), true)
}

/// `50.0KB`-style sizes as pi prints them.
pub fn format_size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes}B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1}KB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1}MB", bytes as f64 / (1024.0 * 1024.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_keeps_first_lines_by_line_limit() {
        let s = (1..=10)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join("\n");
        let t = truncate_head(
            &s,
            Limits {
                max_lines: 3,
                max_bytes: 1000,
            },
        );
        assert!(t.truncated);
        assert_eq!(t.content, "1\n2\n3");
        assert_eq!(t.truncated_by, Some(TruncatedBy::Lines));
        assert_eq!(t.total_lines, 10);
    }

    #[test]
    fn head_never_cuts_a_line_on_bytes() {
        let t = truncate_head(
            "aaaa\nbbbb\ncccc",
            Limits {
                max_lines: 100,
                max_bytes: 11,
            },
        );
        assert_eq!(t.content, "aaaa\nbbbb");
        assert_eq!(t.truncated_by, Some(TruncatedBy::Bytes));
    }

    #[test]
    fn head_reports_oversized_first_line() {
        let t = truncate_head(
            &"x".repeat(100),
            Limits {
                max_lines: 10,
                max_bytes: 10,
            },
        );
        assert!(t.first_line_exceeds_limit);
        assert_eq!(t.content, "");
    }

    #[test]
    fn tail_keeps_last_lines() {
        let s = (1..=10)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join("\n");
        let t = truncate_tail(
            &s,
            Limits {
                max_lines: 2,
                max_bytes: 1000,
            },
        );
        assert_eq!(t.content, "9\n10");
        assert_eq!(t.output_lines, 2);
    }

    #[test]
    fn tail_keeps_end_of_single_huge_line() {
        let s = format!("{}END", "é".repeat(100));
        let t = truncate_tail(
            &s,
            Limits {
                max_lines: 10,
                max_bytes: 10,
            },
        );
        assert!(t.last_line_partial);
        assert!(t.content.ends_with("END"));
        assert!(t.content.len() <= 10);
    }

    #[test]
    fn short_content_is_untouched() {
        let t = truncate_tail("a\nb", Limits::default());
        assert!(!t.truncated);
        assert_eq!(t.content, "a\nb");
    }

    #[test]
    fn long_grep_line_is_marked() {
        let (l, cut) = truncate_line(&"a".repeat(600), 500);
        assert!(cut);
        assert!(l.ends_with("... [truncated]"));
    }
}
