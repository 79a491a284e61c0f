//! Where `edit`'s replacements land: line-ending and BOM handling, exact-then-fuzzy matching,
//! uniqueness and overlap checks, and applying several replacements against one original.
//!
//! Models often retype a file with straight quotes, ASCII dashes or without trailing spaces,
//! so a miss on the exact text is retried in a "fuzzy" view (NFKC, trimmed line ends, ASCII
//! quotes/dashes/spaces). After a fuzzy match only the touched lines come from that view; all
//! other lines keep their original bytes, so an edit never silently rewrites unrelated code.
//! The error texts are pi's, because models have learned how to react to them.

use unicode_normalization::UnicodeNormalization;

/// One replacement as the model sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub old_text: String,
    pub new_text: String,
}

/// Why a set of edits cannot be applied. Variants ending in `At` are the multi-edit wordings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    #[error("oldText must not be empty in {path}.")]
    EmptyOldText { path: String },
    #[error("edits[{index}].oldText must not be empty in {path}.")]
    EmptyOldTextAt { path: String, index: usize },
    #[error("Could not find the exact text in {path}. The old text must match exactly including all whitespace and newlines.{context}")]
    NotFound { path: String, context: String },
    #[error("Could not find edits[{index}] in {path}. The old text must match exactly including all whitespace and newlines.{context}")]
    NotFoundAt {
        path: String,
        index: usize,
        context: String,
    },
    #[error("Found {count} occurrences of the text in {path}. The text must be unique. Please provide more context to make it unique.")]
    Duplicate { path: String, count: usize },
    #[error("Found {count} occurrences of edits[{index}] in {path}. Each oldText must be unique. Please provide more context to make it unique.")]
    DuplicateAt {
        path: String,
        index: usize,
        count: usize,
    },
    #[error("edits[{first}] and edits[{second}] overlap in {path}. Merge them into one edit or target disjoint regions.")]
    Overlap {
        path: String,
        first: usize,
        second: usize,
    },
    #[error("No changes made to {path}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected.")]
    NoChange { path: String },
    #[error("No changes made to {path}. The replacements produced identical content.")]
    NoChanges { path: String },
    #[error(
        "Cannot preserve unchanged lines because the base content has a different line count."
    )]
    LineCountMismatch,
    #[error("Replacement range is outside the base content.")]
    OutOfRange,
}

pub fn strip_bom(s: &str) -> (&str, &str) {
    match s.strip_prefix('\u{FEFF}') {
        Some(rest) => ("\u{FEFF}", rest),
        None => ("", s),
    }
}

/// CRLF if the first line break in the file is CRLF, else LF (pi's rule).
pub fn detect_line_ending(s: &str) -> &'static str {
    match (s.find("\r\n"), s.find('\n')) {
        (Some(crlf), Some(lf)) if crlf < lf => "\r\n",
        _ => "\n",
    }
}

pub fn normalize_to_lf(s: &str) -> String {
    s.replace("\r\n", "\n").replace('\r', "\n")
}

pub fn restore_line_endings(s: &str, ending: &str) -> String {
    if ending == "\r\n" {
        s.replace('\n', "\r\n")
    } else {
        s.to_string()
    }
}

/// The fuzzy view of a text used for matching and counting.
pub fn normalize_for_fuzzy(s: &str) -> String {
    let nfkc: String = s.nfkc().collect();
    nfkc.split('\n')
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
        .chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
            '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
            '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            c => c,
        })
        .collect()
}

struct Found {
    index: usize,
    len: usize,
    fuzzy: bool,
}

/// Exact first; failing that, the fuzzy needle in the fuzzy view of `content`.
fn find_text(content: &str, old: &str) -> Option<Found> {
    if let Some(index) = content.find(old) {
        return Some(Found {
            index,
            len: old.len(),
            fuzzy: false,
        });
    }
    let fuzzy_old = normalize_for_fuzzy(old);
    normalize_for_fuzzy(content)
        .find(&fuzzy_old)
        .map(|index| Found {
            index,
            len: fuzzy_old.len(),
            fuzzy: true,
        })
}

fn count_occurrences(content: &str, old: &str) -> usize {
    let hay = normalize_for_fuzzy(content);
    let needle = normalize_for_fuzzy(old);
    if needle.is_empty() {
        // JavaScript's `split("")` yields one piece per UTF-16 unit.
        return hay.encode_utf16().count().saturating_sub(1);
    }
    hay.matches(needle.as_str()).count()
}

/// A hint pointing the model at where its text probably was meant to be.
fn closest_match_context(content: &str, old: &str) -> Option<String> {
    let lines: Vec<&str> = content.split('\n').collect();
    let old_lines = old.split('\n').count();
    let first: Vec<char> = old
        .split('\n')
        .next()
        .unwrap_or("")
        .trim()
        .chars()
        .collect();
    if first.is_empty() {
        return None;
    }
    let mut len = first.len().min(60);
    while len >= 10 {
        let needle: String = first[..len].iter().collect();
        let needle = needle.trim();
        if !needle.is_empty() {
            if let Some(idx) = lines.iter().position(|l| l.contains(needle)) {
                let start = idx.saturating_sub(2);
                let end = (idx + old_lines + 3).min(lines.len());
                let snippet = (start..end)
                    .map(|i| format!("  {}: {}", i + 1, lines[i]))
                    .collect::<Vec<_>>()
                    .join("\n");
                return Some(format!(
                    "Closest match is around line {}:\n{snippet}",
                    idx + 1
                ));
            }
        }
        len -= 10;
    }
    let preview = lines
        .iter()
        .take(5)
        .enumerate()
        .map(|(i, l)| format!("  {}: {l}", i + 1))
        .collect::<Vec<_>>()
        .join("\n");
    Some(format!("File starts with:\n{preview}"))
}

#[derive(Debug, Clone)]
struct Matched {
    edit: usize,
    index: usize,
    len: usize,
    new_text: String,
}

fn apply_replacements(content: &str, reps: &[Matched], offset: usize) -> String {
    let mut out = content.to_string();
    for r in reps.iter().rev() {
        let at = r.index - offset;
        out.replace_range(at..at + r.len, &r.new_text);
    }
    out
}

/// Lines with their `\n`; a final line without one only if it is non-empty.
fn split_lines_keep_ends(s: &str) -> Vec<&str> {
    s.split_inclusive('\n').collect()
}

/// Rewrite only the lines the replacements touch (from the fuzzy `base`); copy every other
/// line from `original`, so unrelated smart quotes and trailing spaces survive.
fn apply_preserving_unchanged_lines(
    original: &str,
    base: &str,
    reps: &[Matched],
) -> Result<String, EditError> {
    let orig_lines = split_lines_keep_ends(original);
    let mut spans = Vec::new();
    let mut off = 0;
    for l in split_lines_keep_ends(base) {
        spans.push((off, off + l.len()));
        off += l.len();
    }
    if orig_lines.len() != spans.len() {
        return Err(EditError::LineCountMismatch);
    }
    // (start line, end line exclusive, replacements); `reps` is sorted by index.
    let mut groups: Vec<(usize, usize, Vec<Matched>)> = Vec::new();
    for r in reps {
        let start = spans
            .iter()
            .position(|&(s, e)| r.index >= s && r.index < e)
            .ok_or(EditError::OutOfRange)?;
        let mut end = start;
        while end < spans.len() && spans[end].1 < r.index + r.len {
            end += 1;
        }
        if end >= spans.len() {
            return Err(EditError::OutOfRange);
        }
        let end = end + 1;
        match groups.last_mut() {
            Some(g) if start < g.1 => {
                g.1 = g.1.max(end);
                g.2.push(r.clone());
            }
            _ => groups.push((start, end, vec![r.clone()])),
        }
    }
    let mut out = String::with_capacity(original.len());
    let mut next = 0;
    for (start, end, group) in &groups {
        out.extend(orig_lines[next..*start].iter().copied());
        let from = spans[*start].0;
        let to = spans[*end - 1].1;
        out.push_str(&apply_replacements(&base[from..to], group, from));
        next = *end;
    }
    out.extend(orig_lines[next..].iter().copied());
    Ok(out)
}

/// Apply `edits` to LF-normalised `content`. Every edit is matched against the original, not
/// after earlier edits. Returns the new content (still LF).
pub fn apply_edits(content: &str, edits: &[Edit], path: &str) -> Result<String, EditError> {
    let path = path.to_string();
    let single = edits.len() == 1;
    let edits: Vec<Edit> = edits
        .iter()
        .map(|e| Edit {
            old_text: normalize_to_lf(&e.old_text),
            new_text: normalize_to_lf(&e.new_text),
        })
        .collect();
    if let Some(index) = edits.iter().position(|e| e.old_text.is_empty()) {
        return Err(if single {
            EditError::EmptyOldText { path }
        } else {
            EditError::EmptyOldTextAt { path, index }
        });
    }
    // One fuzzy edit moves the whole batch into fuzzy space so offsets stay comparable.
    let used_fuzzy = edits
        .iter()
        .any(|e| find_text(content, &e.old_text).is_some_and(|f| f.fuzzy));
    let base = if used_fuzzy {
        normalize_for_fuzzy(content)
    } else {
        content.to_string()
    };

    let mut matched = Vec::with_capacity(edits.len());
    for (i, e) in edits.iter().enumerate() {
        let Some(found) = find_text(&base, &e.old_text) else {
            let context = if content.is_empty() {
                String::new()
            } else {
                let hint = closest_match_context(content, &e.old_text);
                format!("\n{}", hint.as_deref().unwrap_or("File is empty."))
            };
            return Err(if single {
                EditError::NotFound { path, context }
            } else {
                EditError::NotFoundAt {
                    path,
                    index: i,
                    context,
                }
            });
        };
        let count = count_occurrences(&base, &e.old_text);
        if count > 1 {
            return Err(if single {
                EditError::Duplicate { path, count }
            } else {
                EditError::DuplicateAt {
                    path,
                    index: i,
                    count,
                }
            });
        }
        matched.push(Matched {
            edit: i,
            index: found.index,
            len: found.len,
            new_text: e.new_text.clone(),
        });
    }
    matched.sort_by_key(|m| m.index);
    for pair in matched.windows(2) {
        if pair[0].index + pair[0].len > pair[1].index {
            return Err(EditError::Overlap {
                path,
                first: pair[0].edit,
                second: pair[1].edit,
            });
        }
    }
    let new = if used_fuzzy {
        apply_preserving_unchanged_lines(content, &base, &matched)?
    } else {
        apply_replacements(&base, &matched, 0)
    };
    if new == content {
        return Err(if single {
            EditError::NoChange { path }
        } else {
            EditError::NoChanges { path }
        });
    }
    Ok(new)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(old: &str, new: &str) -> Edit {
        Edit {
            old_text: old.into(),
            new_text: new.into(),
        }
    }

    #[test]
    fn exact_single_edit() {
        let out = apply_edits("a\nb\nc\n", &[e("b", "B")], "f").unwrap();
        assert_eq!(out, "a\nB\nc\n");
    }

    #[test]
    fn smart_quotes_in_file_match_ascii_old_text() {
        let content = "let s = \u{201C}hi\u{201D};\nlet t = \u{2018}keep\u{2019};  \n";
        let out = apply_edits(content, &[e("let s = \"hi\";", "let s = \"bye\";")], "f").unwrap();
        // The edited line comes from the fuzzy view; the untouched line keeps its bytes.
        assert_eq!(out, "let s = \"bye\";\nlet t = \u{2018}keep\u{2019};  \n");
    }

    #[test]
    fn duplicates_are_counted_in_fuzzy_space() {
        let err = apply_edits("x = 1;\nx = 1;  \n", &[e("x = 1;", "x = 2;")], "f.rs").unwrap_err();
        assert_eq!(
            err.to_string(),
            "Found 2 occurrences of the text in f.rs. The text must be unique. Please provide more context to make it unique."
        );
    }

    #[test]
    fn overlapping_edits_are_rejected() {
        let err = apply_edits("abcdef", &[e("abcd", "X"), e("cdef", "Y")], "f").unwrap_err();
        assert_eq!(
            err.to_string(),
            "edits[0] and edits[1] overlap in f. Merge them into one edit or target disjoint regions."
        );
    }

    #[test]
    fn identical_replacement_is_an_error() {
        let err = apply_edits("abc", &[e("b", "b")], "f").unwrap_err();
        assert!(matches!(err, EditError::NoChange { .. }));
        assert!(err.to_string().starts_with("No changes made to f."));
    }

    #[test]
    fn multiple_edits_apply_against_the_original() {
        let out = apply_edits(
            "one\ntwo\nthree\n",
            &[e("three", "3"), e("one", "1\none")],
            "f",
        )
        .unwrap();
        assert_eq!(out, "1\none\ntwo\n3\n");
    }

    #[test]
    fn not_found_points_at_closest_line() {
        let content = "fn main() {\n    println!(\"hello world\");\n}\n";
        let err = apply_edits(
            content,
            &[e("    println!(\"hello world!!\");", "x")],
            "m.rs",
        )
        .unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("Could not find the exact text in m.rs. The old text must match exactly including all whitespace and newlines.\nClosest match is around line 2:\n  1: fn main() {"));
    }

    #[test]
    fn multi_edit_errors_name_the_index() {
        let err = apply_edits("abc", &[e("a", "x"), e("zzz", "y")], "f").unwrap_err();
        assert!(err.to_string().starts_with("Could not find edits[1] in f."));
        let err = apply_edits("abc", &[e("a", "x"), e("", "y")], "f").unwrap_err();
        assert_eq!(err.to_string(), "edits[1].oldText must not be empty in f.");
    }

    #[test]
    fn line_endings_and_bom_helpers() {
        assert_eq!(detect_line_ending("a\r\nb\n"), "\r\n");
        assert_eq!(detect_line_ending("a\nb\r\n"), "\n");
        assert_eq!(strip_bom("\u{FEFF}x"), ("\u{FEFF}", "x"));
        assert_eq!(restore_line_endings("a\nb", "\r\n"), "a\r\nb");
    }
}
