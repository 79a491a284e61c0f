//! The `ls` tool: one directory's entries, sorted case-insensitively as pi sorts them, with a
//! `/` suffix on directories, dotfiles included, capped by an entry limit and 50KB.
//!
//! pi sorts with JavaScript's `localeCompare` on lowercased names (ICU root collation), where
//! punctuation sorts before digits and digits before letters, and accents are secondary. The
//! `collation_key` below approximates that so listings come out in the order pi users expect.

use std::cmp::Ordering;

use async_trait::async_trait;
use serde_json::{json, Value};
use unicode_normalization::UnicodeNormalization;

use super::details::Listing;
use super::file_util::{js_number, number_arg};
use super::truncate::{Limits, DEFAULT_MAX_BYTES};
use super::{path, Tool, ToolContext, ToolError, ToolOutput};

const DEFAULT_LIMIT: usize = 500;
/// JavaScript's `Number.MAX_SAFE_INTEGER`: pi's "no line limit" for ls.
const NO_LINE_LIMIT: usize = 9_007_199_254_740_991;
/// ASCII punctuation and symbols in ICU root collation order.
const ICU_PUNCT_ORDER: &str = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";

#[derive(Default)]
pub struct LsTool;

/// A primary collation key: (class, weight) per character; class 0 space, 1 punctuation,
/// 2 digit, 3 letter or other.
fn collation_key(name: &str) -> Vec<(u8, u32)> {
    name.to_lowercase()
        .chars()
        .map(|c| {
            if c.is_whitespace() {
                (0, u32::from(c))
            } else if let Some(i) = ICU_PUNCT_ORDER.find(c) {
                (1, i as u32)
            } else if c.is_ascii_punctuation() || (!c.is_alphanumeric() && !c.is_whitespace()) {
                (1, 1000 + u32::from(c))
            } else if let Some(d) = c.to_digit(10) {
                (2, d)
            } else {
                // Accents are a secondary difference: compare on the base letter first.
                let base = c.nfd().next().unwrap_or(c);
                (3, u32::from(base))
            }
        })
        .collect()
}

fn compare_names(a: &str, b: &str) -> Ordering {
    collation_key(a)
        .cmp(&collation_key(b))
        .then_with(|| a.to_lowercase().cmp(&b.to_lowercase()))
        .then_with(|| a.cmp(b))
}

#[async_trait]
impl Tool for LsTool {
    fn name(&self) -> &str {
        "ls"
    }
    fn description(&self) -> &str {
        "List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. Includes dotfiles. Output is truncated to 500 entries or 50KB (whichever is hit first)."
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Directory to list (default: current directory)"},
                "limit": {"type": "number", "description": "Maximum number of entries to return (default: 500)"}
            }
        })
    }
    fn prompt_snippet(&self) -> Option<String> {
        Some("List directory contents".into())
    }
    async fn execute(
        &self,
        _id: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Aborted);
        }
        let dir = path::dir_arg(&args, &ctx.cwd);
        let limit_arg = number_arg(&args, "limit");
        let limit = match limit_arg {
            Some(l) if l > 0.0 => l.floor() as usize,
            Some(_) => 0,
            None => DEFAULT_LIMIT,
        };

        let meta = path::metadata_of(&dir)?;
        if !meta.is_dir() {
            return Err(ToolError::Failed(format!(
                "Not a directory: {}",
                dir.display()
            )));
        }
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .and_then(|it| {
                it.map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
                    .collect()
            })
            .map_err(|e| ToolError::Failed(format!("Cannot read directory: {e}")))?;
        names.sort_by(|a, b| compare_names(a, b));

        let mut results = Vec::new();
        let mut limit_reached = false;
        for name in names {
            if ctx.cancel.is_cancelled() {
                return Err(ToolError::Aborted);
            }
            if results.len() >= limit {
                limit_reached = true;
                break;
            }
            // Like pi, follow symlinks and skip entries that cannot be stat'ed (dangling links).
            let Ok(m) = std::fs::metadata(dir.join(&name)) else {
                continue;
            };
            results.push(if m.is_dir() { format!("{name}/") } else { name });
        }
        if results.is_empty() {
            return Ok(ToolOutput::text("(empty directory)"));
        }

        let limits = Limits {
            max_lines: NO_LINE_LIMIT,
            max_bytes: DEFAULT_MAX_BYTES,
        };
        let mut listing = Listing::new(&results.join("\n"), limits);
        if limit_reached {
            let shown = limit_arg.map_or_else(|| limit.to_string(), js_number);
            let more = limit_arg.map_or_else(|| (limit * 2).to_string(), |l| js_number(l * 2.0));
            listing.note(
                format!("{shown} entries limit reached. Use limit={more} for more"),
                "entryLimitReached",
                json!(limit),
            );
        }
        listing.note_byte_limit();
        Ok(listing.into_output())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::text_of;
    use std::path::Path;

    async fn run(dir: &Path, args: Value) -> Result<ToolOutput, ToolError> {
        LsTool
            .execute("id", args, &ToolContext::new(dir.to_path_buf()))
            .await
    }

    #[tokio::test]
    async fn sorts_case_insensitively_marks_dirs_and_shows_dotfiles() {
        let d = tempfile::tempdir().unwrap();
        for f in ["b.txt", "A.txt", ".hidden", "c.md"] {
            std::fs::write(d.path().join(f), "").unwrap();
        }
        std::fs::create_dir(d.path().join("Src")).unwrap();
        let out = run(d.path(), json!({})).await.unwrap();
        assert_eq!(text_of(&out.content), ".hidden\nA.txt\nb.txt\nc.md\nSrc/");
        assert!(out.details.is_none());
    }

    #[tokio::test]
    async fn empty_directory_says_so() {
        let d = tempfile::tempdir().unwrap();
        let out = run(d.path(), json!({"path": "."})).await.unwrap();
        assert_eq!(text_of(&out.content), "(empty directory)");
    }

    #[tokio::test]
    async fn entry_limit_adds_notice() {
        let d = tempfile::tempdir().unwrap();
        for i in 0..5 {
            std::fs::write(d.path().join(format!("f{i}")), "").unwrap();
        }
        let out = run(d.path(), json!({"limit": 2})).await.unwrap();
        assert_eq!(
            text_of(&out.content),
            "f0\nf1\n\n[2 entries limit reached. Use limit=4 for more]"
        );
        assert_eq!(out.details.unwrap()["entryLimitReached"], 2);
    }

    #[tokio::test]
    async fn missing_path_and_file_path_are_errors() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("file"), "").unwrap();
        let err = run(d.path(), json!({"path": "nope"})).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("Path not found: {}", d.path().join("nope").display())
        );
        let err = run(d.path(), json!({"path": "file"})).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("Not a directory: {}", d.path().join("file").display())
        );
    }

    #[test]
    fn punctuation_sorts_before_digits_before_letters() {
        let mut v = vec!["zeta", "_private", "1file", "Alpha", ".git", "émile", "eve"];
        v.sort_by(|a, b| compare_names(a, b));
        assert_eq!(
            v,
            vec!["_private", ".git", "1file", "Alpha", "émile", "eve", "zeta"]
        );
    }
}
