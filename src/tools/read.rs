//! The `read` tool: a file's text with pi's 1-based `offset`/`limit` paging and head truncation
//! (2000 lines / 50KB), or an image (recognised by magic bytes) as an image content block.
//!
//! The continuation notes (`[Showing lines A-B of N. Use offset=X to continue.]`) are part of
//! the contract with the model: they tell it exactly how to fetch the rest, so they match pi.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use serde_json::{json, Value};
use unicode_normalization::UnicodeNormalization;

use super::details::{byte_limit, push_notice, showing_lines, truncation_json};
use super::file_util::{base64_encode, js_number, node_error, number_arg, sniff_image};
use super::truncate::{format_size, truncate_head, Limits, TruncatedBy, DEFAULT_MAX_BYTES};
use super::{path, Tool, ToolContext, ToolError, ToolOutput};
use crate::message::Content;

#[derive(Default)]
pub struct ReadTool;

/// macOS names screenshots with a narrow no-break space before AM/PM, in NFD, with a curly
/// apostrophe; users type none of those. Try the variants pi tries before giving up.
fn resolve_read_path(cwd: &Path, raw: &str) -> PathBuf {
    let resolved = path::resolve(cwd, raw);
    if resolved.exists() {
        return resolved;
    }
    let s = resolved.to_string_lossy().into_owned();
    let am_pm = s
        .replace(" AM.", "\u{202F}AM.")
        .replace(" PM.", "\u{202F}PM.")
        .replace(" am.", "\u{202F}am.")
        .replace(" pm.", "\u{202F}pm.");
    let nfd: String = s.nfd().collect();
    let curly = s.replace('\'', "\u{2019}");
    let nfd_curly = nfd.replace('\'', "\u{2019}");
    [am_pm, nfd, curly, nfd_curly]
        .into_iter()
        .filter(|v| *v != s)
        .map(PathBuf::from)
        .find(|p| p.exists())
        .unwrap_or(resolved)
}

/// The text a read of `text` returns, with pi's notes, plus the truncation details if any.
fn render_text(
    text: &str,
    raw_path: &str,
    offset: Option<f64>,
    limit: Option<f64>,
) -> Result<(String, Option<Value>), ToolError> {
    let all: Vec<&str> = text.split('\n').collect();
    let total = all.len();
    // pi treats offset 0 (and anything below 1) as "from the start".
    let start = match offset {
        Some(o) if o >= 1.0 => (o.floor() as usize) - 1,
        _ => 0,
    };
    if start >= total {
        return Err(ToolError::Failed(format!(
            "Offset {} is beyond end of file ({total} lines total)",
            js_number(offset.unwrap_or(0.0))
        )));
    }
    let start_display = start + 1;
    let (selected, user_limited) = match limit {
        Some(l) => {
            let l = if l > 0.0 { l.floor() as usize } else { 0 };
            let end = start.saturating_add(l).min(total);
            (all[start..end].join("\n"), Some(end - start))
        }
        None => (all[start..].join("\n"), None),
    };
    let limits = Limits::default();
    let t = truncate_head(&selected, limits);
    let details = || Some(json!({"truncation": truncation_json(&t, limits)}));
    if t.first_line_exceeds_limit {
        let size = format_size(all[start].len());
        let note = format!(
            "[Line {start_display} is {size}, exceeds {}. Use bash: sed -n '{start_display}p' {raw_path} | head -c {DEFAULT_MAX_BYTES}]",
            byte_limit()
        );
        return Ok((note, details()));
    }
    if t.truncated {
        let end_display = start_display + t.output_lines - 1;
        let next = end_display + 1;
        let by_bytes = t.truncated_by == Some(TruncatedBy::Bytes);
        let shown = showing_lines(start_display, end_display, total, by_bytes);
        let mut text = t.content.clone();
        push_notice(
            &mut text,
            &format!("{shown}. Use offset={next} to continue."),
        );
        return Ok((text, details()));
    }
    if let Some(n) = user_limited {
        if start + n < total {
            let remaining = total - (start + n);
            let next = start + n + 1;
            let mut text = t.content;
            push_notice(
                &mut text,
                &format!("{remaining} more lines in file. Use offset={next} to continue."),
            );
            return Ok((text, None));
        }
    }
    Ok((t.content, None))
}

async fn read_file(abs: &Path, ctx: &ToolContext) -> Result<Vec<u8>, ToolError> {
    tokio::select! {
        _ = ctx.cancel.cancelled() => Err(ToolError::Aborted),
        r = tokio::fs::read(abs) => r.map_err(|e| ToolError::Failed(node_error(&e, "read", abs))),
    }
}

#[async_trait]
impl Tool for ReadTool {
    fn name(&self) -> &str {
        "read"
    }
    fn description(&self) -> &str {
        "Read the contents of a file. Supports text files and images (jpg, png, gif, webp, bmp). Images are sent as attachments. For text files, output is truncated to 2000 lines or 50KB (whichever is hit first). Use offset/limit for large files. When you need the full file, continue with offset until complete."
    }
    fn constrained_sampling(&self) -> Option<Value> {
        Some(super::builtin_constrained_sampling())
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "required": ["path"],
            "properties": {
                "path": {"type": "string", "description": "Path to the file to read (relative or absolute)"},
                "offset": {"type": "number", "description": "Line number to start reading from (1-indexed)"},
                "limit": {"type": "number", "description": "Maximum number of lines to read"}
            }
        })
    }
    fn prompt_snippet(&self) -> Option<String> {
        Some("Read file contents".into())
    }
    fn prompt_guidelines(&self) -> Vec<String> {
        vec!["Use read to examine files instead of cat or sed.".into()]
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
        let raw_path = path::file_arg(&args, "read")?;
        let abs = resolve_read_path(&ctx.cwd, raw_path);
        // pi checks access first, so a missing file reads as a failed `access`, not `read`.
        if let Err(e) = std::fs::File::open(&abs) {
            return Err(ToolError::Failed(node_error(&e, "access", &abs)));
        }
        let bytes = read_file(&abs, ctx).await?;
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Aborted);
        }
        // pi downsizes images to at most 2000x2000; ours go out at full size (no image crate yet).
        if let Some(mime) = sniff_image(&bytes) {
            return Ok(ToolOutput {
                content: vec![
                    Content::text(format!("Read image file [{mime}]")),
                    Content::Image {
                        data: base64_encode(&bytes),
                        mime_type: mime.to_string(),
                    },
                ],
                details: None,
                ..Default::default()
            });
        }
        let text = String::from_utf8_lossy(&bytes);
        let (out, details) = render_text(
            &text,
            raw_path,
            number_arg(&args, "offset"),
            number_arg(&args, "limit"),
        )?;
        Ok(ToolOutput {
            content: vec![Content::text(out)],
            details,
            ..Default::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::text_of;

    fn numbered(n: usize) -> String {
        (1..=n)
            .map(|i| format!("line {i}"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    async fn run(dir: &Path, args: Value) -> Result<ToolOutput, ToolError> {
        ReadTool
            .execute("id", args, &ToolContext::new(dir.to_path_buf()))
            .await
    }

    #[tokio::test]
    async fn reads_whole_small_file() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.txt"), "hello\nworld\n").unwrap();
        let out = run(d.path(), json!({"path": "a.txt"})).await.unwrap();
        assert_eq!(text_of(&out.content), "hello\nworld\n");
        assert!(out.details.is_none());
    }

    #[tokio::test]
    async fn offset_and_limit_page_with_a_continue_hint() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.txt"), numbered(10)).unwrap();
        let out = run(d.path(), json!({"path": "a.txt", "offset": 3, "limit": 2}))
            .await
            .unwrap();
        assert_eq!(
            text_of(&out.content),
            "line 3\nline 4\n\n[6 more lines in file. Use offset=5 to continue.]"
        );
    }

    #[tokio::test]
    async fn long_file_is_cut_at_2000_lines_with_showing_note() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("big.txt"), numbered(2500)).unwrap();
        let out = run(d.path(), json!({"path": "big.txt"})).await.unwrap();
        let text = text_of(&out.content);
        assert!(text.starts_with("line 1\n"));
        assert!(text.ends_with(
            "line 2000\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]"
        ));
        let details = out.details.unwrap();
        assert_eq!(details["truncation"]["truncatedBy"], "lines");
        assert_eq!(details["truncation"]["totalLines"], 2500);

        let out = run(d.path(), json!({"path": "big.txt", "offset": 2001}))
            .await
            .unwrap();
        assert!(text_of(&out.content).starts_with("line 2001\n"));
        assert!(out.details.is_none());
    }

    #[tokio::test]
    async fn byte_truncation_names_the_limit() {
        let d = tempfile::tempdir().unwrap();
        let line = "x".repeat(1000);
        let content = vec![line.as_str(); 100].join("\n");
        std::fs::write(d.path().join("wide.txt"), content).unwrap();
        let out = run(d.path(), json!({"path": "wide.txt"})).await.unwrap();
        assert!(text_of(&out.content)
            .ends_with("[Showing lines 1-51 of 100 (50.0KB limit). Use offset=52 to continue.]"));
    }

    #[tokio::test]
    async fn huge_first_line_suggests_sed() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("one.txt"), "y".repeat(60 * 1024)).unwrap();
        let out = run(d.path(), json!({"path": "one.txt"})).await.unwrap();
        assert_eq!(
            text_of(&out.content),
            "[Line 1 is 60.0KB, exceeds 50.0KB limit. Use bash: sed -n '1p' one.txt | head -c 51200]"
        );
    }

    #[tokio::test]
    async fn offset_past_end_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.txt"), "a\nb").unwrap();
        let err = run(d.path(), json!({"path": "a.txt", "offset": 9}))
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Offset 9 is beyond end of file (2 lines total)"
        );
    }

    #[tokio::test]
    async fn missing_file_error_names_the_path() {
        let d = tempfile::tempdir().unwrap();
        let err = run(d.path(), json!({"path": "nope.txt"}))
            .await
            .unwrap_err();
        let want = format!(
            "ENOENT: no such file or directory, access '{}'",
            d.path().join("nope.txt").display()
        );
        assert_eq!(err.to_string(), want);
    }

    #[tokio::test]
    async fn image_is_detected_by_magic_bytes_not_extension() {
        let d = tempfile::tempdir().unwrap();
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01";
        std::fs::write(d.path().join("pic.dat"), png).unwrap();
        let out = run(d.path(), json!({"path": "pic.dat"})).await.unwrap();
        assert_eq!(out.content[0], Content::text("Read image file [image/png]"));
        match &out.content[1] {
            Content::Image { data, mime_type } => {
                assert_eq!(mime_type, "image/png");
                assert_eq!(data, &base64_encode(png));
            }
            other => panic!("expected image, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn cancelled_read_is_aborted() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.txt"), "a").unwrap();
        let ctx = ToolContext::new(d.path().to_path_buf());
        ctx.cancel.cancel();
        let err = ReadTool
            .execute("id", json!({"path": "a.txt"}), &ctx)
            .await
            .unwrap_err();
        assert!(matches!(err, ToolError::Aborted));
    }
}
