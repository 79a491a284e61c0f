//! The `grep` tool: a content search with ripgrep's semantics, run in process on ripgrep's own
//! crates (`ignore` for the walk, `grep-regex`/`grep-searcher` for matching) so no `rg` binary
//! is needed.
//!
//! Like pi (which runs `rg --hidden`), hidden files are searched, `.gitignore`/`.ignore` are
//! respected and `.git` itself is skipped. Output mirrors pi: `path:LINE: text` for matches and
//! `path-LINE- text` for context lines, one block per match, lines cut at 500 characters and
//! the whole text head-truncated at 50 KB.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use grep_regex::RegexMatcherBuilder;
use grep_searcher::{sinks, BinaryDetection, Searcher, SearcherBuilder};
use ignore::overrides::OverrideBuilder;
use ignore::WalkBuilder;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::details::{Listing, MAX_SAFE_INTEGER};
use super::path::{dir_arg, metadata_of};
use super::truncate::{truncate_line, Limits, DEFAULT_MAX_BYTES, GREP_MAX_LINE_LENGTH};
use super::{Tool, ToolContext, ToolError, ToolOutput};

pub const DEFAULT_LIMIT: usize = 100;

#[derive(Debug, Default)]
pub struct GrepTool;

#[derive(Debug, Clone)]
struct Query {
    pattern: String,
    path: PathBuf,
    glob: Option<String>,
    ignore_case: bool,
    literal: bool,
    context: usize,
    limit: usize,
}

/// A match found by the searcher; the text is the matched line as the searcher saw it.
struct Hit {
    line: u64,
    text: String,
}

/// Everything the search produced, before formatting.
struct Found {
    lines: Vec<String>,
    matches: usize,
    lines_truncated: bool,
}

fn number_arg(args: &Value, key: &str) -> Option<f64> {
    args.get(key)
        .and_then(Value::as_f64)
        .filter(|n| n.is_finite())
}

/// Non-negative integer from a JSON number; fractions are cut as JavaScript's loops would.
fn count_arg(args: &Value, key: &str) -> Option<usize> {
    number_arg(args, key).map(|n| if n <= 0.0 { 0 } else { n as usize })
}

fn parse(args: &Value, cwd: &Path) -> Result<Query, ToolError> {
    let pattern = args
        .get("pattern")
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::Failed("pattern must be a string".into()))?;
    Ok(Query {
        pattern: pattern.to_string(),
        path: dir_arg(args, cwd),
        glob: args
            .get("glob")
            .and_then(Value::as_str)
            .filter(|g| !g.is_empty())
            .map(str::to_string),
        ignore_case: args.get("ignoreCase").and_then(Value::as_bool) == Some(true),
        literal: args.get("literal").and_then(Value::as_bool) == Some(true),
        context: count_arg(args, "context").unwrap_or(0),
        limit: count_arg(args, "limit").unwrap_or(DEFAULT_LIMIT).max(1),
    })
}

/// How a file is named in the output: relative to a searched directory, else its file name.
fn display_path(file: &Path, root: &Path, root_is_dir: bool) -> String {
    if root_is_dir {
        if let Ok(rel) = file.strip_prefix(root) {
            if !rel.as_os_str().is_empty() {
                return rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/");
            }
        }
    }
    file.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.display().to_string())
}

fn clean(line: &str) -> &str {
    line.trim_end_matches(['\n', '\r'])
}

/// One block per match, as pi prints them (overlapping context repeats, like pi).
fn format_hits(file: &Path, name: &str, hits: &[Hit], context: usize, found: &mut Found) {
    let file_lines: Option<Vec<String>> = if context > 0 {
        std::fs::read(file).ok().map(|bytes| {
            String::from_utf8_lossy(&bytes)
                .replace("\r\n", "\n")
                .replace('\r', "\n")
                .split('\n')
                .map(str::to_string)
                .collect()
        })
    } else {
        None
    };
    for hit in hits {
        let Ok(line_no) = usize::try_from(hit.line) else {
            continue;
        };
        let (start, end) = match &file_lines {
            Some(lines) => (
                line_no.saturating_sub(context).max(1),
                (line_no + context).min(lines.len()).max(line_no),
            ),
            None => (line_no, line_no),
        };
        for current in start..=end {
            let text = if current == line_no {
                clean(&hit.text).replace('\r', "")
            } else {
                file_lines
                    .as_ref()
                    .and_then(|l| l.get(current - 1))
                    .map(|l| l.replace('\r', ""))
                    .unwrap_or_default()
            };
            let (text, cut) = truncate_line(&text, GREP_MAX_LINE_LENGTH);
            found.lines_truncated |= cut;
            let sep = if current == line_no { ':' } else { '-' };
            found
                .lines
                .push(format!("{name}{sep}{current}{sep} {text}"));
        }
    }
}

fn search(q: &Query, cancel: &CancellationToken) -> Result<Found, ToolError> {
    let meta = metadata_of(&q.path)?;
    let is_dir = meta.is_dir();
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(q.ignore_case)
        .fixed_strings(q.literal)
        .line_terminator(Some(b'\n'))
        .build(&q.pattern)
        .map_err(|e| ToolError::Failed(e.to_string()))?;
    let mut searcher: Searcher = SearcherBuilder::new()
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .line_number(true)
        .build();

    let mut found = Found {
        lines: Vec::new(),
        matches: 0,
        lines_truncated: false,
    };
    let mut search_file = |file: &Path, found: &mut Found| -> bool {
        let remaining = q.limit - found.matches;
        let mut hits: Vec<Hit> = Vec::new();
        let sink = sinks::Lossy(|line, text| {
            hits.push(Hit {
                line,
                text: text.to_string(),
            });
            Ok(hits.len() < remaining)
        });
        // Unreadable files are skipped, as rg reports them without giving up.
        if searcher.search_path(&matcher, file, sink).is_err() && hits.is_empty() {
            return true;
        }
        found.matches += hits.len();
        if !hits.is_empty() {
            let name = display_path(file, &q.path, is_dir);
            format_hits(file, &name, &hits, q.context, found);
        }
        found.matches < q.limit
    };

    if !is_dir {
        search_file(&q.path, &mut found);
        return Ok(found);
    }

    let mut walk = WalkBuilder::new(&q.path);
    walk.hidden(false)
        .add_custom_ignore_filename(".rgignore")
        .filter_entry(|e| e.file_name() != ".git")
        .sort_by_file_name(|a, b| a.cmp(b));
    if let Some(glob) = &q.glob {
        let overrides = OverrideBuilder::new(&q.path)
            .add(glob)
            .and_then(|b| b.build())
            .map_err(|e| ToolError::Failed(format!("Invalid glob {glob:?}: {e}")))?;
        walk.overrides(overrides);
    }
    for entry in walk.build() {
        if cancel.is_cancelled() {
            return Err(ToolError::Aborted);
        }
        // Unreadable directories are skipped rather than failing the whole search.
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        if !search_file(entry.path(), &mut found) {
            break;
        }
    }
    Ok(found)
}

fn render(q: &Query, found: Found) -> ToolOutput {
    if found.matches == 0 {
        return ToolOutput::text("No matches found");
    }
    // The match limit already bounds lines; only bytes are limited here.
    let limits = Limits {
        max_lines: MAX_SAFE_INTEGER,
        max_bytes: DEFAULT_MAX_BYTES,
    };
    let mut listing = Listing::new(&found.lines.join("\n"), limits);
    if found.matches >= q.limit {
        listing.note(
            format!(
                "{} matches limit reached. Use limit={} for more, or refine pattern",
                q.limit,
                q.limit.saturating_mul(2)
            ),
            "matchLimitReached",
            json!(q.limit),
        );
    }
    listing.note_byte_limit();
    if found.lines_truncated {
        listing.note(
            format!(
                "Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines"
            ),
            "linesTruncated",
            json!(true),
        );
    }
    listing.into_output()
}

#[async_trait]
impl Tool for GrepTool {
    fn name(&self) -> &str {
        "grep"
    }

    fn description(&self) -> &str {
        "Search file contents for a pattern. Returns matching lines with file paths and line \
         numbers. Respects .gitignore. Output is truncated to 100 matches or 50KB (whichever is \
         hit first). Long lines are truncated to 500 chars."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "required": ["pattern"],
            "properties": {
                "pattern": {"type": "string", "description": "Search pattern (regex or literal string)"},
                "path": {"type": "string", "description": "Directory or file to search (default: current directory)"},
                "glob": {"type": "string", "description": "Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'"},
                "ignoreCase": {"type": "boolean", "description": "Case-insensitive search (default: false)"},
                "literal": {"type": "boolean", "description": "Treat pattern as literal string instead of regex (default: false)"},
                "context": {"type": "number", "description": "Number of lines to show before and after each match (default: 0)"},
                "limit": {"type": "number", "description": "Maximum number of matches to return (default: 100)"}
            }
        })
    }

    fn prompt_snippet(&self) -> Option<String> {
        Some("Search file contents for patterns (respects .gitignore)".to_string())
    }

    async fn execute(
        &self,
        _call_id: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Aborted);
        }
        let q = parse(&args, &ctx.cwd)?;
        let cancel = ctx.cancel.clone();
        let job = tokio::task::spawn_blocking(move || {
            let found = search(&q, &cancel)?;
            Ok(render(&q, found))
        });
        tokio::select! {
            r = job => r.map_err(|e| ToolError::Failed(format!("grep failed: {e}")))?,
            // The walk notices the token too and stops on its own.
            _ = ctx.cancel.cancelled() => Err(ToolError::Aborted),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::text_of;
    use std::fs;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        // rg honours .gitignore only inside a git repository.
        fs::create_dir(dir.path().join(".git")).unwrap();
        for (name, body) in files {
            let p = dir.path().join(name);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, body).unwrap();
        }
        dir
    }

    async fn grep(dir: &Path, args: Value) -> Result<String, ToolError> {
        let ctx = ToolContext::new(dir.to_path_buf());
        GrepTool
            .execute("id", args, &ctx)
            .await
            .map(|o| text_of(&o.content))
    }

    #[tokio::test]
    async fn finds_matches_and_respects_gitignore() {
        let d = tree(&[
            (".gitignore", "ignored/\n"),
            ("src/a.rs", "fn main() {}\nlet needle = 1;\n"),
            ("ignored/b.rs", "needle\n"),
            (".hidden/c.txt", "a needle here\n"),
        ]);
        let out = grep(d.path(), json!({"pattern": "needle"})).await.unwrap();
        assert_eq!(
            out,
            ".hidden/c.txt:1: a needle here\nsrc/a.rs:2: let needle = 1;"
        );
    }

    #[tokio::test]
    async fn context_lines_use_dashes() {
        let d = tree(&[("f.txt", "one\ntwo\nthree\nfour\n")]);
        let out = grep(d.path(), json!({"pattern": "three", "context": 1}))
            .await
            .unwrap();
        assert_eq!(out, "f.txt-2- two\nf.txt:3: three\nf.txt-4- four");
    }

    #[tokio::test]
    async fn single_file_uses_its_name() {
        let d = tree(&[("sub/f.txt", "hit\n")]);
        let out = grep(d.path(), json!({"pattern": "hit", "path": "sub/f.txt"}))
            .await
            .unwrap();
        assert_eq!(out, "f.txt:1: hit");
    }

    #[tokio::test]
    async fn limit_notice() {
        let body: String = (0..10).map(|i| format!("x{i}\n")).collect();
        let d = tree(&[("f.txt", &body)]);
        let out = grep(d.path(), json!({"pattern": "x", "limit": 3}))
            .await
            .unwrap();
        assert_eq!(
            out,
            "f.txt:1: x0\nf.txt:2: x1\nf.txt:3: x2\n\n\
             [3 matches limit reached. Use limit=6 for more, or refine pattern]"
        );
    }

    #[tokio::test]
    async fn literal_and_ignore_case() {
        let d = tree(&[("f.txt", "a.b\naxb\nHELLO\n")]);
        let out = grep(d.path(), json!({"pattern": "a.b", "literal": true}))
            .await
            .unwrap();
        assert_eq!(out, "f.txt:1: a.b");
        let out = grep(d.path(), json!({"pattern": "hello"})).await.unwrap();
        assert_eq!(out, "No matches found");
        let out = grep(d.path(), json!({"pattern": "hello", "ignoreCase": true}))
            .await
            .unwrap();
        assert_eq!(out, "f.txt:3: HELLO");
    }

    #[tokio::test]
    async fn glob_filters_files() {
        let d = tree(&[("a/x.rs", "hit\n"), ("a/x.txt", "hit\n")]);
        let out = grep(d.path(), json!({"pattern": "hit", "glob": "*.rs"}))
            .await
            .unwrap();
        assert_eq!(out, "a/x.rs:1: hit");
    }

    #[tokio::test]
    async fn long_lines_are_cut_with_notice() {
        let d = tree(&[("f.txt", &format!("{}\n", "z".repeat(600)))]);
        let out = grep(d.path(), json!({"pattern": "z"})).await.unwrap();
        assert!(out.starts_with(&format!("f.txt:1: {}... [truncated]", "z".repeat(500))));
        assert!(out
            .ends_with("\n\n[Some lines truncated to 500 chars. Use read tool to see full lines]"));
    }

    #[tokio::test]
    async fn bad_regex_and_missing_path_are_errors() {
        let d = tree(&[("f.txt", "x\n")]);
        let e = grep(d.path(), json!({"pattern": "a("})).await.unwrap_err();
        assert!(e.to_string().contains("regex parse error"), "{e}");
        let e = grep(d.path(), json!({"pattern": "x", "path": "nope"}))
            .await
            .unwrap_err();
        assert!(e.to_string().starts_with("Path not found: "), "{e}");
    }
}
