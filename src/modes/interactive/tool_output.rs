//! A tool's output as the transcript shows it, collapsed or expanded (Ctrl+O), and its time.
//! Collapsed: the last rows, after a line counting the rows of the *real* output that are not
//! shown (a truncated bash result's `totalLines`, not the rows the model was sent).
//! Expanded: the whole output — a truncated bash call's full output file, read when the view
//! expands, not the truncated text. A truncated result's notice (pi's
//! `[Showing lines …. Full output: …]`) is taken out of the text and shown apart, worded as
//! pi 1.6 shows it (`[Full output: …. Truncated: showing 2000 of 3001 lines]`). Pure but for
//! [`read_full_output`].

use std::time::Duration;

use serde_json::Value;

use super::text::{lines_of, Line, Style};
use super::theme::Theme;

/// Output rows shown under a finished call while collapsed.
pub const TAIL_ROWS: usize = 6;

/// At most this much of a full output file is read into the transcript when it expands (the
/// file stays where the notice says, whole).
const FULL_OUTPUT_MAX_BYTES: u64 = 16 << 20;

/// The output text without the truncation notice pi appends for the model, and the notice as
/// the person is shown it, when the result was truncated.
pub fn split_notice(output: &str, details: Option<&Value>) -> (String, Option<String>) {
    let Some(d) = details else {
        return (output.to_string(), None);
    };
    let path = d.get("fullOutputPath").and_then(Value::as_str);
    let truncation = d.get("truncation").filter(|t| t["truncated"] == true);
    if path.is_none() && truncation.is_none() {
        return (output.to_string(), None);
    }
    let mut text = output.trim_end().to_string();
    if let Some(at) = text.rfind("\n\n[") {
        if text.ends_with(']') && path.is_none_or(|p| text[at..].contains(p)) {
            text.truncate(at);
        }
    }
    let mut parts = Vec::new();
    if let Some(p) = path {
        parts.push(format!("Full output: {p}"));
    }
    if let Some(t) = truncation {
        let n = |k: &str| t.get(k).and_then(Value::as_u64).unwrap_or(0);
        if t["truncatedBy"] == "lines" {
            parts.push(format!(
                "Truncated: showing {} of {} lines",
                n("outputLines"),
                n("totalLines")
            ));
        } else {
            parts.push(format!(
                "Truncated: {} lines shown ({} limit)",
                n("outputLines"),
                crate::tools::truncate::format_size(n("maxBytes") as usize)
            ));
        }
    }
    (text, Some(format!("[{}]", parts.join(". "))))
}

/// How many lines the real output had: a truncated result's `totalLines`, else the text's.
pub fn real_line_count(text: &str, details: Option<&Value>) -> usize {
    details
        .and_then(|d| d.get("truncation"))
        .filter(|t| t["truncated"] == true)
        .and_then(|t| t.get("totalLines"))
        .and_then(Value::as_u64)
        .map_or_else(|| text.lines().count(), |n| n as usize)
}

/// The rows of `text` to show: all of them expanded; collapsed, the last [`TAIL_ROWS`] after
/// a line saying how many of the `total` real lines come before them.
pub fn body_rows(
    text: &str,
    total: usize,
    expanded: bool,
    style: Style,
    theme: &Theme,
) -> Vec<Line> {
    let text = text.trim_end_matches('\n');
    if text.is_empty() {
        return Vec::new();
    }
    let all = lines_of(text, style);
    if expanded {
        return all;
    }
    let shown = all.len().min(TAIL_ROWS);
    let earlier = total.max(all.len()).saturating_sub(shown);
    let mut out = Vec::new();
    if earlier > 0 {
        out.push(Line::styled(
            format!("... ({earlier} earlier lines, ctrl+o to expand)"),
            theme.muted,
        ));
    }
    let skip = all.len() - shown;
    out.extend(all.into_iter().skip(skip));
    out
}

/// The full output file of a truncated result, if it names one that can be read (its last
/// [`FULL_OUTPUT_MAX_BYTES`] when it is larger, from a line start).
pub fn read_full_output(details: Option<&Value>) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    let path = details?.get("fullOutputPath")?.as_str()?;
    let mut f = std::fs::File::open(path).ok()?;
    let len = f.metadata().ok()?.len();
    let skip = len.saturating_sub(FULL_OUTPUT_MAX_BYTES);
    f.seek(SeekFrom::Start(skip)).ok()?;
    let mut bytes = Vec::new();
    f.take(FULL_OUTPUT_MAX_BYTES).read_to_end(&mut bytes).ok()?;
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if skip > 0 {
        if let Some(nl) = text.find('\n') {
            text.drain(..=nl);
        }
    }
    Some(text)
}

/// A duration as pi 1.6 shows a tool's: `4.2s` below a minute, then `1m 30s`, `2h 3m 4s`.
pub fn format_duration(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs < 60.0 {
        return format!("{secs:.1}s");
    }
    let total = d.as_secs();
    let (m, s) = (total / 60, total % 60);
    if m < 60 {
        format!("{m}m {s}s")
    } else {
        format!("{}h {}m {s}s", m / 60, m % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::theme::ThemeName;
    use serde_json::json;

    fn texts(lines: &[Line]) -> Vec<String> {
        lines.iter().map(Line::text).collect()
    }

    #[test]
    fn durations_read_as_pi_shows_them() {
        assert_eq!(format_duration(Duration::from_millis(140)), "0.1s");
        assert_eq!(format_duration(Duration::from_secs(90)), "1m 30s");
        assert_eq!(format_duration(Duration::from_secs(7384)), "2h 3m 4s");
    }

    #[test]
    fn a_truncated_result_counts_the_real_output_and_says_where_the_rest_is() {
        let theme = Theme::new(ThemeName::Dark, false);
        let content: String = (1002..=3001).map(|i| format!("line {i}\n")).collect();
        let output =
            format!("{content}\n[Showing lines 1002-3001 of 3001. Full output: /tmp/x.log]");
        let details = json!({"fullOutputPath": "/tmp/x.log", "truncation": {
            "truncated": true, "truncatedBy": "lines", "totalLines": 3001, "outputLines": 2000}});
        let (text, notice) = split_notice(&output, Some(&details));
        assert_eq!(
            notice.as_deref(),
            Some("[Full output: /tmp/x.log. Truncated: showing 2000 of 3001 lines]")
        );
        assert!(text.ends_with("line 3001"), "{text:?}");
        let total = real_line_count(&text, Some(&details));
        let rows = texts(&body_rows(&text, total, false, Style::plain(), &theme));
        assert_eq!(rows[0], "... (2995 earlier lines, ctrl+o to expand)");
        assert_eq!(rows.len(), TAIL_ROWS + 1);
        assert_eq!(rows.last().map(String::as_str), Some("line 3001"));
        let all = body_rows(&text, total, true, Style::plain(), &theme);
        assert_eq!(all.len(), 2000);
    }

    #[test]
    fn short_output_has_no_count_line() {
        let theme = Theme::new(ThemeName::Dark, false);
        let rows = texts(&body_rows("a\nb\n", 2, false, Style::plain(), &theme));
        assert_eq!(rows, ["a", "b"]);
    }
}
