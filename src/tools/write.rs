//! The `write` tool: create or overwrite a whole file, creating missing parent directories.
//!
//! Writes go through the per-file mutation queue so a parallel `edit` of the same file cannot
//! read the old contents, lose the race and clobber this write.

use async_trait::async_trait;
use serde_json::{json, Value};

use super::file_util::node_error;
use super::{path, Tool, ToolContext, ToolError, ToolOutput};

#[derive(Default)]
pub struct WriteTool;

#[async_trait]
impl Tool for WriteTool {
    fn name(&self) -> &str {
        "write"
    }
    fn description(&self) -> &str {
        "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. Automatically creates parent directories."
    }
    fn constrained_sampling(&self) -> Option<Value> {
        Some(super::builtin_constrained_sampling())
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "required": ["path", "content"],
            "properties": {
                "path": {"type": "string", "description": "Path to the file to write (relative or absolute)"},
                "content": {"type": "string", "description": "Content to write to the file"}
            }
        })
    }
    fn prompt_snippet(&self) -> Option<String> {
        Some("Create or overwrite files".into())
    }
    fn prompt_guidelines(&self) -> Vec<String> {
        vec!["Use write only for new files or complete rewrites.".into()]
    }
    async fn execute(
        &self,
        _id: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let (Some(raw_path), Some(content)) = (
            args.get("path").and_then(Value::as_str),
            args.get("content").and_then(Value::as_str),
        ) else {
            return Err(ToolError::Failed(
                "write requires string `path` and `content`".into(),
            ));
        };
        let abs = path::resolve(&ctx.cwd, raw_path);
        let _guard = ctx.lock_file(&abs).await?;
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Aborted);
        }
        if let Some(dir) = abs.parent() {
            tokio::fs::create_dir_all(dir)
                .await
                .map_err(|e| ToolError::Failed(node_error(&e, "mkdir", dir)))?;
        }
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Aborted);
        }
        // Not raced against cancellation: a half-finished write must still finish while we
        // hold the file's lock, or the next queued mutation could see a torn file.
        tokio::fs::write(&abs, content)
            .await
            .map_err(|e| ToolError::Failed(node_error(&e, "open", &abs)))?;
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Aborted);
        }
        // pi 1.6's words (0.73 also gave the length; 1.6 no longer does).
        Ok(ToolOutput::text(format!(
            "Successfully wrote to {raw_path}"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::text_of;

    #[tokio::test]
    async fn creates_parent_directories_and_says_so() {
        let d = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(d.path().to_path_buf());
        let out = WriteTool
            .execute("id", json!({"path": "a/b/c.txt", "content": "hello"}), &ctx)
            .await
            .unwrap();
        assert_eq!(text_of(&out.content), "Successfully wrote to a/b/c.txt");
        assert_eq!(
            std::fs::read_to_string(d.path().join("a/b/c.txt")).unwrap(),
            "hello"
        );
    }

    #[tokio::test]
    async fn overwrites_existing_file() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("f.txt"), "old contents that are longer").unwrap();
        let ctx = ToolContext::new(d.path().to_path_buf());
        WriteTool
            .execute("id", json!({"path": "f.txt", "content": "new"}), &ctx)
            .await
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(d.path().join("f.txt")).unwrap(),
            "new"
        );
    }

    #[tokio::test]
    async fn cancelled_write_touches_nothing() {
        let d = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(d.path().to_path_buf());
        ctx.cancel.cancel();
        let err = WriteTool
            .execute("id", json!({"path": "x.txt", "content": "x"}), &ctx)
            .await
            .unwrap_err();
        assert!(matches!(err, ToolError::Aborted));
        assert!(!d.path().join("x.txt").exists());
    }

    #[tokio::test]
    async fn a_write_waiting_on_a_held_lock_ends_when_cancelled_and_never_writes() {
        let d = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(d.path().to_path_buf());
        let held = ctx
            .mutations
            .lock_as(&d.path().join("f.txt"), Some("hook"))
            .await;
        let waiting = {
            let ctx = ctx.clone();
            tokio::spawn(async move {
                WriteTool
                    .execute("id", json!({"path": "f.txt", "content": "x"}), &ctx)
                    .await
            })
        };
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "the write waits for the lock");
        ctx.cancel.cancel();
        let err = waiting.await.unwrap().unwrap_err();
        assert!(matches!(err, ToolError::Aborted));
        drop(held);
        assert!(!d.path().join("f.txt").exists());
    }
}
