//! The `find` tool: files and directories by glob, with fd's semantics, run in process on the
//! `ignore` and `globset` crates so no `fd` binary is needed.
//!
//! As pi runs fd (`--glob --hidden`, with every `.gitignore` passed explicitly so they apply
//! outside git repositories too), hidden entries are listed, ignore files are respected even
//! without a repository, and `.git` itself is skipped. A pattern without `/` matches the entry's
//! name at any depth (`*.rs`); one with `/` matches the path relative to the search directory
//! (`src/**/*.rs`, `**/*.json`). Results are relative paths, directories with a trailing `/`
//! as fd prints them.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkBuilder;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::details::{Listing, MAX_SAFE_INTEGER};
use super::path::{dir_arg, metadata_of};
use super::truncate::{Limits, DEFAULT_MAX_BYTES};
use super::{Tool, ToolContext, ToolError, ToolOutput};

pub const DEFAULT_LIMIT: usize = 1000;

#[derive(Debug, Default)]
pub struct FindTool;

struct Query {
    pattern: String,
    path: PathBuf,
    limit: usize,
}

fn parse(args: &Value, cwd: &Path) -> Result<Query, ToolError> {
    let pattern = args
        .get("pattern")
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::Failed("pattern must be a string".into()))?;
    let limit = args
        .get("limit")
        .and_then(Value::as_f64)
        .filter(|n| n.is_finite())
        .map_or(DEFAULT_LIMIT, |n| if n <= 0.0 { 0 } else { n as usize })
        .max(1);
    Ok(Query {
        pattern: pattern.to_string(),
        path: dir_arg(args, cwd),
        limit,
    })
}

/// `path` below `root` with `/` separators; `None` for the root itself or a path outside it.
pub fn relative(path: &Path, root: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    if rel.as_os_str().is_empty() {
        return None;
    }
    Some(
        rel.components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
    )
}

/// Walk and collect at most `limit` matching relative paths, in a stable (sorted) order.
fn walk(
    q: &Query,
    glob: &GlobMatcher,
    cancel: &CancellationToken,
) -> Result<Vec<String>, ToolError> {
    let by_path = q.pattern.contains('/');
    let mut walk = WalkBuilder::new(&q.path);
    walk.hidden(false)
        .require_git(false)
        .add_custom_ignore_filename(".fdignore")
        .filter_entry(|e| e.file_name() != ".git")
        .sort_by_file_name(|a, b| a.cmp(b));
    let mut found = Vec::new();
    for entry in walk.build() {
        if cancel.is_cancelled() {
            return Err(ToolError::Aborted);
        }
        let Ok(entry) = entry else { continue };
        let Some(rel) = relative(entry.path(), &q.path) else {
            continue;
        };
        let hit = if by_path {
            glob.is_match(&rel)
        } else {
            glob.is_match(entry.file_name())
        };
        if !hit {
            continue;
        }
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        found.push(if is_dir { format!("{rel}/") } else { rel });
        if found.len() >= q.limit {
            break;
        }
    }
    Ok(found)
}

fn run(q: &Query, cancel: &CancellationToken) -> Result<ToolOutput, ToolError> {
    metadata_of(&q.path)?;
    let glob = GlobBuilder::new(&q.pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| ToolError::Failed(format!("Invalid glob pattern: {e}")))?
        .compile_matcher();
    let found = walk(q, &glob, cancel)?;
    if found.is_empty() {
        return Ok(ToolOutput::text("No files found matching pattern"));
    }
    let limits = Limits {
        max_lines: MAX_SAFE_INTEGER,
        max_bytes: DEFAULT_MAX_BYTES,
    };
    let mut listing = Listing::new(&found.join("\n"), limits);
    if found.len() >= q.limit {
        listing.note(
            format!(
                "{} results limit reached. Use limit={} for more, or refine pattern",
                q.limit,
                q.limit.saturating_mul(2)
            ),
            "resultLimitReached",
            json!(q.limit),
        );
    }
    listing.note_byte_limit();
    Ok(listing.into_output())
}

#[async_trait]
impl Tool for FindTool {
    fn name(&self) -> &str {
        "find"
    }

    fn description(&self) -> &str {
        "Search for files by glob pattern. Returns matching file paths relative to the search \
         directory. Respects .gitignore. Output is truncated to 1000 results or 50KB (whichever \
         is hit first)."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "required": ["pattern"],
            "properties": {
                "pattern": {"type": "string", "description": "Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'"},
                "path": {"type": "string", "description": "Directory to search in (default: current directory)"},
                "limit": {"type": "number", "description": "Maximum number of results (default: 1000)"}
            }
        })
    }

    fn prompt_snippet(&self) -> Option<String> {
        Some("Find files by glob pattern (respects .gitignore)".to_string())
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
        let job = tokio::task::spawn_blocking(move || run(&q, &cancel));
        tokio::select! {
            r = job => r.map_err(|e| ToolError::Failed(format!("find failed: {e}")))?,
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

    /// A tree outside any git repository: ignore files must apply anyway.
    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, body) in files {
            let p = dir.path().join(name);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, body).unwrap();
        }
        dir
    }

    async fn find(dir: &Path, args: Value) -> Result<String, ToolError> {
        let ctx = ToolContext::new(dir.to_path_buf());
        FindTool
            .execute("id", args, &ctx)
            .await
            .map(|o| text_of(&o.content))
    }

    #[tokio::test]
    async fn name_glob_finds_nested_files_and_respects_gitignore() {
        let d = tree(&[
            (".gitignore", "target/\n*.log\n"),
            ("main.rs", ""),
            ("src/lib.rs", ""),
            ("src/deep/x.rs", ""),
            ("src/notes.txt", ""),
            ("target/gen.rs", ""),
            ("debug.log", ""),
            (".hidden/h.rs", ""),
        ]);
        let out = find(d.path(), json!({"pattern": "*.rs"})).await.unwrap();
        assert_eq!(out, ".hidden/h.rs\nmain.rs\nsrc/deep/x.rs\nsrc/lib.rs");
        let out = find(d.path(), json!({"pattern": "*.log"})).await.unwrap();
        assert_eq!(out, "No files found matching pattern");
    }

    #[tokio::test]
    async fn path_globs_match_relative_paths() {
        let d = tree(&[("a.rs", ""), ("src/b.rs", ""), ("src/deep/c.rs", "")]);
        let out = find(d.path(), json!({"pattern": "**/*.rs"})).await.unwrap();
        assert_eq!(out, "a.rs\nsrc/b.rs\nsrc/deep/c.rs");
        let out = find(d.path(), json!({"pattern": "src/*.rs"}))
            .await
            .unwrap();
        assert_eq!(out, "src/b.rs");
        let out = find(d.path(), json!({"pattern": "*.rs", "path": "src"}))
            .await
            .unwrap();
        assert_eq!(out, "b.rs\ndeep/c.rs");
    }

    #[tokio::test]
    async fn directories_get_a_slash_and_git_is_skipped() {
        let d = tree(&[("src/x", ""), (".git/config", "")]);
        let out = find(d.path(), json!({"pattern": "*"})).await.unwrap();
        assert_eq!(out, "src/\nsrc/x");
    }

    #[tokio::test]
    async fn limit_notice() {
        let d = tree(&[("a.txt", ""), ("b.txt", ""), ("c.txt", "")]);
        let out = find(d.path(), json!({"pattern": "*.txt", "limit": 2}))
            .await
            .unwrap();
        assert_eq!(
            out,
            "a.txt\nb.txt\n\n[2 results limit reached. Use limit=4 for more, or refine pattern]"
        );
    }

    #[tokio::test]
    async fn missing_path_is_an_error() {
        let d = tree(&[]);
        let e = find(d.path(), json!({"pattern": "*", "path": "nope"}))
            .await
            .unwrap_err();
        assert!(e.to_string().starts_with("Path not found: "), "{e}");
    }
}
