//! Markdown frontmatter: the `---` block at the top of a template, split off the body and read
//! as flat `key: value` pairs.
//!
//! The split follows pi's `utils/frontmatter.ts` exactly (newline normalization, BOM, leading
//! blank lines, the first `\n---` closing the block, the body trimmed). The block itself is read
//! by a small YAML subset rather than a YAML crate, because templates only use string fields:
//! plain, single- and double-quoted scalars, `|` / `>` block scalars and indented continuation
//! lines. Nested maps and lists are skipped; flow collections (`[file] [line]`, which strict
//! YAML rejects) are kept as their raw text because that is what users mean by them.

use std::collections::BTreeMap;

use super::args::is_js_space;

/// Frontmatter that pi's YAML parser would reject; the template is then not loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrontmatterError {
    #[error("frontmatter line {line}: unterminated quoted value for `{key}`")]
    Unterminated { key: String, line: usize },
    #[error("frontmatter line {line}: unexpected text after the quoted value of `{key}`")]
    TrailingText { key: String, line: usize },
    #[error("frontmatter line {line}: duplicate key `{key}`")]
    Duplicate { key: String, line: usize },
}

/// String fields of the frontmatter and the body after it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    pub fields: BTreeMap<String, String>,
    pub body: String,
}

pub fn parse(content: &str) -> Result<Parsed, FrontmatterError> {
    let normalized = content.replace("\r\n", "\n").replace('\r', "\n");
    let normalized = normalized.strip_prefix('\u{feff}').unwrap_or(&normalized);
    let Some((yaml, body)) = split(normalized) else {
        return Ok(Parsed {
            fields: BTreeMap::new(),
            body: normalized.to_string(),
        });
    };
    Ok(Parsed {
        fields: parse_fields(yaml)?,
        body: body.trim_matches(is_js_space).to_string(),
    })
}

/// `(yaml, rest)` when the text opens with `---` (after blank space) on its own line and a
/// later line starts with `---`.
fn split(text: &str) -> Option<(&str, &str)> {
    let after_space = text.trim_start_matches(is_js_space);
    let after_fence = after_space.strip_prefix("---")?;
    let start = if after_fence.is_empty() {
        text.len()
    } else {
        after_fence.strip_prefix('\n')?;
        text.len() - after_fence.len() + 1
    };
    let end = start + text[start..].find("\n---")?;
    Some((&text[start..end], &text[end + 4..]))
}

fn parse_fields(yaml: &str) -> Result<BTreeMap<String, String>, FrontmatterError> {
    let lines: Vec<&str> = yaml.split('\n').collect();
    let mut fields = BTreeMap::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let line_no = i + 1;
        i += 1;
        let trimmed = line.trim();
        // Indented lines here belong to a nested value already skipped; unkeyed lines make
        // the document a scalar or list, which has no fields.
        if trimmed.is_empty() || trimmed.starts_with('#') || line.starts_with([' ', '\t']) {
            continue;
        }
        let Some((key, rest)) = split_key(line) else {
            continue;
        };
        let continuation = indented_block(&lines, &mut i);
        let value = scalar(rest, &continuation).map_err(|e| match e {
            ScalarError::Unterminated => FrontmatterError::Unterminated {
                key: key.clone(),
                line: line_no,
            },
            ScalarError::Trailing => FrontmatterError::TrailingText {
                key: key.clone(),
                line: line_no,
            },
        })?;
        if fields.contains_key(&key) {
            return Err(FrontmatterError::Duplicate { key, line: line_no });
        }
        if let Some(value) = value {
            fields.insert(key, value);
        }
    }
    Ok(fields)
}

/// `key` and the text after `key:`; the colon must end the line or be followed by a blank,
/// as in YAML (`a:b` is a plain scalar, not a key).
fn split_key(line: &str) -> Option<(String, &str)> {
    let mut search = 0;
    while let Some(off) = line[search..].find(':') {
        let at = search + off;
        let after = &line[at + 1..];
        if after.is_empty() || after.starts_with([' ', '\t']) {
            let key = line[..at].trim();
            let key = unquote_key(key);
            return (!key.is_empty()).then(|| (key, after.trim_start()));
        }
        search = at + 1;
    }
    None
}

fn unquote_key(key: &str) -> String {
    for q in ['"', '\''] {
        if key.len() >= 2 && key.starts_with(q) && key.ends_with(q) {
            return key[1..key.len() - 1].to_string();
        }
    }
    key.to_string()
}

/// The lines after a key that belong to its value: blank or indented ones.
fn indented_block<'a>(lines: &[&'a str], i: &mut usize) -> Vec<&'a str> {
    let mut block = Vec::new();
    while *i < lines.len() {
        let l = lines[*i];
        if !l.trim().is_empty() && !l.starts_with([' ', '\t']) {
            break;
        }
        block.push(l);
        *i += 1;
    }
    // Trailing blank lines separate entries; they are not part of the value.
    while block.last().is_some_and(|l| l.trim().is_empty()) {
        block.pop();
    }
    block
}

enum ScalarError {
    Unterminated,
    Trailing,
}

/// The string value of one entry, or `None` for null and for nested maps and lists.
fn scalar(first: &str, more: &[&str]) -> Result<Option<String>, ScalarError> {
    if let Some(header) = first.strip_prefix(['|', '>']) {
        return Ok(Some(block_scalar(first.starts_with('|'), header, more)));
    }
    if first.starts_with(['"', '\'']) {
        return quoted(first, more).map(Some);
    }
    if first.starts_with(['[', '{']) {
        return Ok(Some(fold(first, more)));
    }
    let own = strip_comment(first);
    if own.is_empty() {
        let nested = more
            .iter()
            .map(|l| l.trim())
            .find(|l| !l.is_empty())
            .is_some_and(|l| l.starts_with("- ") || l == "-" || split_key(l).is_some());
        if nested || more.is_empty() {
            return Ok(None);
        }
    }
    let value = fold(own, more);
    Ok((!matches!(value.as_str(), "~" | "null" | "Null" | "NULL")).then_some(value))
}

/// Plain multi-line scalars: lines joined by spaces, a blank line becomes a newline.
fn fold(first: &str, more: &[&str]) -> String {
    let mut out = first.trim().to_string();
    let mut pending_newlines = 0;
    for l in more {
        let l = strip_comment(l.trim());
        if l.is_empty() {
            pending_newlines += 1;
            continue;
        }
        if pending_newlines > 0 {
            out.push_str(&"\n".repeat(pending_newlines));
        } else if !out.is_empty() {
            out.push(' ');
        }
        pending_newlines = 0;
        out.push_str(l);
    }
    out
}

fn strip_comment(s: &str) -> &str {
    if s.starts_with('#') {
        return "";
    }
    match s.find(" #").or_else(|| s.find("\t#")) {
        Some(at) => s[..at].trim_end(),
        None => s.trim_end(),
    }
}

/// `|` (literal) and `>` (folded) blocks with the clip, strip (`-`) and keep (`+`) chomping.
fn block_scalar(literal: bool, header: &str, more: &[&str]) -> String {
    let chomp = header.trim_start_matches(|c: char| c.is_ascii_digit());
    let indent = more
        .iter()
        .find(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .unwrap_or(0);
    let lines: Vec<&str> = more.iter().map(|l| l.get(indent..).unwrap_or("")).collect();
    let mut text = if literal {
        lines.join("\n")
    } else {
        let mut out = String::new();
        let mut prev_blank = true;
        for l in &lines {
            if l.is_empty() {
                out.push('\n');
                prev_blank = true;
            } else {
                if !prev_blank {
                    out.push(' ');
                }
                out.push_str(l);
                prev_blank = false;
            }
        }
        out
    };
    let body_len = text.trim_end_matches('\n').len();
    match chomp.chars().next() {
        Some('-') => text.truncate(body_len),
        Some('+') => text.push('\n'),
        _ if body_len > 0 => {
            text.truncate(body_len);
            text.push('\n');
        }
        _ => text.clear(),
    }
    text
}

/// A single- or double-quoted scalar, possibly spanning lines (folded with spaces).
fn quoted(first: &str, more: &[&str]) -> Result<String, ScalarError> {
    let quote = if first.starts_with('"') { '"' } else { '\'' };
    let mut source = first[1..].to_string();
    for l in more {
        source.push('\n');
        source.push_str(l.trim());
    }
    let mut out = String::new();
    let mut chars = source.chars().peekable();
    loop {
        let Some(c) = chars.next() else {
            return Err(ScalarError::Unterminated);
        };
        match c {
            '\'' if quote == '\'' && chars.peek() == Some(&'\'') => {
                chars.next();
                out.push('\'');
            }
            c if c == quote => break,
            '\\' if quote == '"' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some('0') => out.push('\0'),
                Some('\n') => {}
                Some(other) => out.push(other),
                None => return Err(ScalarError::Unterminated),
            },
            '\n' => out.push(' '),
            c => out.push(c),
        }
    }
    let rest: String = chars.collect();
    if !strip_comment(rest.trim()).is_empty() {
        return Err(ScalarError::Trailing);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(text: &str) -> BTreeMap<String, String> {
        parse(text).unwrap().fields
    }

    fn get(text: &str, key: &str) -> Option<String> {
        fields(text).get(key).cloned()
    }

    #[test]
    fn splits_frontmatter_and_trims_body() {
        let p = parse("---\ndescription: Code review\n---\n\nReview $1\n\n").unwrap();
        assert_eq!(p.fields["description"], "Code review");
        assert_eq!(p.body, "Review $1");
    }

    #[test]
    fn without_frontmatter_body_is_untouched() {
        assert_eq!(parse("  hello\n").unwrap().body, "  hello\n");
        // No closing fence: not frontmatter.
        assert_eq!(parse("---\na: b\n").unwrap().body, "---\na: b\n");
        // `---x` is not a fence.
        assert!(parse("---x\na: b\n---\n").unwrap().fields.is_empty());
    }

    #[test]
    fn crlf_bom_and_leading_blank_lines() {
        let p = parse("\u{feff}\r\n\r\n---\r\ndescription: d\r\n---\r\nbody\r\n").unwrap();
        assert_eq!(p.fields["description"], "d");
        assert_eq!(p.body, "body");
    }

    #[test]
    fn quoted_values() {
        let fm =
            "---\nargument-hint: \"[file | #PR | PR-URL]\"\nb: 'it''s'\nc: \"a\\\"b\\n\"\n---\n";
        assert_eq!(get(fm, "argument-hint").unwrap(), "[file | #PR | PR-URL]");
        assert_eq!(get(fm, "b").unwrap(), "it's");
        assert_eq!(get(fm, "c").unwrap(), "a\"b\n");
        assert_eq!(get("---\na: \"x\" # note\n---\n", "a").unwrap(), "x");
    }

    #[test]
    fn plain_values_comments_and_nulls() {
        let fm =
            "---\n# comment\na: hello world # trailing\nb: url#frag\nc: ~\nd: null\ne: 42\n---\n";
        let f = fields(fm);
        assert_eq!(f["a"], "hello world");
        assert_eq!(f["b"], "url#frag");
        assert!(!f.contains_key("c") && !f.contains_key("d"));
        assert_eq!(f["e"], "42");
    }

    #[test]
    fn flow_collections_keep_raw_text() {
        assert_eq!(
            get("---\nargument-hint: [file] [line]\n---\n", "argument-hint").unwrap(),
            "[file] [line]"
        );
    }

    #[test]
    fn multi_line_values() {
        let fm = "---\ndescription: first\n  second\n\n  third\nnext: x\n---\n";
        assert_eq!(get(fm, "description").unwrap(), "first second\nthird");
        let fm = "---\ndescription:\n  on the next line\n---\n";
        assert_eq!(get(fm, "description").unwrap(), "on the next line");
        let fm = "---\nd: \"one\n  two\"\n---\n";
        assert_eq!(get(fm, "d").unwrap(), "one two");
    }

    #[test]
    fn block_scalars() {
        let fm =
            "---\nlit: |\n  a\n   b\n\nfold: >-\n  one\n  two\n\n  three\nkeep: |+\n  k\n---\n";
        let f = fields(fm);
        assert_eq!(f["lit"], "a\n b\n");
        assert_eq!(f["fold"], "one two\nthree");
        assert_eq!(f["keep"], "k\n");
    }

    #[test]
    fn nested_structures_are_skipped() {
        let fm = "---\nmeta:\n  a: 1\ntags:\n  - x\ndescription: d\n---\n";
        let f = fields(fm);
        assert_eq!(f.len(), 1);
        assert_eq!(f["description"], "d");
        assert!(get("---\nempty:\n---\n", "empty").is_none());
    }

    #[test]
    fn colon_needs_a_blank_after_it() {
        assert_eq!(
            get("---\nurl: http://x:8080/a\n---\n", "url").unwrap(),
            "http://x:8080/a"
        );
        assert!(fields("---\na:b\n---\n").is_empty());
        assert_eq!(
            get("---\n\"quoted key\": v\n---\n", "quoted key").unwrap(),
            "v"
        );
    }

    #[test]
    fn errors() {
        assert!(matches!(
            parse("---\na: \"open\n---\n"),
            Err(FrontmatterError::Unterminated { line: 1, .. })
        ));
        assert!(matches!(
            parse("---\nx: 1\na: 'q' extra\n---\n"),
            Err(FrontmatterError::TrailingText { line: 2, .. })
        ));
        assert!(matches!(
            parse("---\na: 1\na: 2\n---\n"),
            Err(FrontmatterError::Duplicate { line: 2, .. })
        ));
    }
}
