//! The two diffs `edit` reports in its details: pi's display diff (`+12 line` / `-12 line` /
//! ` 12 line` rows with `...` between distant hunks, plus the first changed line for editors)
//! and a standard unified patch for tools that apply or show patches.

use similar::{ChangeTag, TextDiff};

struct Part {
    tag: ChangeTag,
    lines: Vec<String>,
}

/// Consecutive lines of one kind, as jsdiff's `diffLines` groups them.
fn parts(old: &str, new: &str) -> Vec<Part> {
    let diff = TextDiff::from_lines(old, new);
    let mut parts: Vec<Part> = Vec::new();
    for change in diff.iter_all_changes() {
        let v = change.value();
        let line = v.strip_suffix('\n').unwrap_or(v).to_string();
        match parts.last_mut() {
            Some(p) if p.tag == change.tag() => p.lines.push(line),
            _ => parts.push(Part {
                tag: change.tag(),
                lines: vec![line],
            }),
        }
    }
    parts
}

/// Line counters in the old and new file while walking the parts.
struct Cursor {
    old: usize,
    new: usize,
    width: usize,
}

impl Cursor {
    fn context(&mut self, lines: &[String], out: &mut Vec<String>) {
        for line in lines {
            out.push(format!(" {:>w$} {line}", self.old, w = self.width));
            self.old += 1;
            self.new += 1;
        }
    }

    /// Skip unchanged lines, marking the gap with `...` when asked.
    fn skip(&mut self, n: usize, out: &mut Vec<String>, mark: bool) {
        if mark && n > 0 {
            out.push(format!(" {} ...", " ".repeat(self.width)));
        }
        self.old += n;
        self.new += n;
    }
}

/// pi's display diff with `context` lines around each change, and the first changed line
/// (1-based, in the new file).
pub fn display_diff(old: &str, new: &str, context: usize) -> (String, Option<usize>) {
    let parts = parts(old, new);
    let max_line = old.split('\n').count().max(new.split('\n').count());
    let width = max_line.to_string().len();
    let mut c = Cursor {
        old: 1,
        new: 1,
        width,
    };
    let mut out: Vec<String> = Vec::new();
    let mut first_changed = None;
    let mut last_was_change = false;

    for (i, part) in parts.iter().enumerate() {
        let raw = &part.lines;
        if part.tag != ChangeTag::Equal {
            first_changed.get_or_insert(c.new);
            for line in raw {
                if part.tag == ChangeTag::Insert {
                    out.push(format!("+{:>width$} {line}", c.new));
                    c.new += 1;
                } else {
                    out.push(format!("-{:>width$} {line}", c.old));
                    c.old += 1;
                }
            }
            last_was_change = true;
            continue;
        }
        let next_is_change = parts.get(i + 1).is_some_and(|p| p.tag != ChangeTag::Equal);
        match (last_was_change, next_is_change) {
            (true, true) if raw.len() <= context * 2 => c.context(raw, &mut out),
            (true, true) => {
                c.context(&raw[..context], &mut out);
                c.skip(raw.len() - 2 * context, &mut out, true);
                c.context(&raw[raw.len() - context..], &mut out);
            }
            (true, false) => {
                let shown = raw.len().min(context);
                c.context(&raw[..shown], &mut out);
                c.skip(raw.len() - shown, &mut out, true);
            }
            (false, true) => {
                let skipped = raw.len().saturating_sub(context);
                c.skip(skipped, &mut out, true);
                c.context(&raw[skipped..], &mut out);
            }
            (false, false) => c.skip(raw.len(), &mut out, false),
        }
        last_was_change = false;
    }
    (out.join("\n"), first_changed)
}

/// A standard unified patch with `---`/`+++` headers naming `path`.
pub fn unified_patch(path: &str, old: &str, new: &str, context: usize) -> String {
    TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(context)
        .header(path, path)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_diff_numbers_lines_and_elides_far_context() {
        let old: String = (1..=20).map(|i| format!("l{i}\n")).collect();
        let new = old.replace("l10\n", "L10\n");
        let (diff, first) = display_diff(&old, &new, 4);
        assert_eq!(first, Some(10));
        let want = [
            "    ...", "  6 l6", "  7 l7", "  8 l8", "  9 l9", "-10 l10", "+10 L10", " 11 l11",
            " 12 l12", " 13 l13", " 14 l14", "    ...",
        ]
        .join("\n");
        assert_eq!(diff, want);
    }

    #[test]
    fn patch_has_headers_and_hunk() {
        let p = unified_patch("a.txt", "x\ny\n", "x\nz\n", 4);
        assert!(p.starts_with("--- a.txt\n+++ a.txt\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n"));
    }
}
