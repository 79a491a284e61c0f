//! Which files the summarized conversation touched, so the summary can list them: after a
//! compaction the model no longer sees the tool calls, and the paths are what it most often
//! needs to pick the work back up.
//!
//! As pi does: `read` tool calls count as reads, `write` and `edit` calls as modifications
//! (only a non-empty string `path` argument counts). The lists are cumulative: the previous
//! compaction's `details` (unless a hook wrote it) seed them. A file both read and modified is
//! listed only as modified. Both lists are sorted.

use serde::Serialize;
use serde_json::Value;

use super::CompactionDetails;
use crate::message::{Content, Message};
use crate::session::entry::AgentMessage;

/// pi's `FileOperations`: three insertion-ordered sets of paths (the order hooks see).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FileOps {
    pub read: Vec<String>,
    pub written: Vec<String>,
    pub edited: Vec<String>,
}

fn add(set: &mut Vec<String>, path: &str) {
    if !set.iter().any(|p| p == path) {
        set.push(path.to_string());
    }
}

/// JavaScript's default `sort()` order (UTF-16 code units), so lists match pi byte for byte.
fn js_sort(v: &mut [String]) {
    v.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
}

impl FileOps {
    /// Seeds from a previous compaction's `details` (`{readFiles, modifiedFiles}`); its
    /// modified files count as edited.
    pub fn seed_from_details(&mut self, details: &Value) {
        let list = |k: &str| {
            details
                .get(k)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
        };
        for f in list("readFiles") {
            add(&mut self.read, f);
        }
        for f in list("modifiedFiles") {
            add(&mut self.edited, f);
        }
    }

    /// pi's `extractFileOpsFromMessage`: the tool calls of an assistant message.
    pub fn record(&mut self, message: &AgentMessage) {
        match message {
            AgentMessage::Typed(t) => {
                let Message::Assistant(a) = t.as_ref() else {
                    return;
                };
                for block in &a.content {
                    if let Content::ToolCall(tc) = block {
                        self.record_call(&tc.name, &tc.arguments);
                    }
                }
            }
            AgentMessage::Raw(v) if message.role() == "assistant" => {
                let blocks = v.get("content").and_then(Value::as_array);
                for b in blocks.into_iter().flatten() {
                    if b.get("type").and_then(Value::as_str) != Some("toolCall") {
                        continue;
                    }
                    if let (Some(name), Some(args)) =
                        (b.get("name").and_then(Value::as_str), b.get("arguments"))
                    {
                        self.record_call(name, args);
                    }
                }
            }
            _ => {}
        }
    }

    fn record_call(&mut self, tool: &str, args: &Value) {
        let Some(path) = args.get("path").and_then(Value::as_str) else {
            return;
        };
        if path.is_empty() {
            return;
        }
        match tool {
            "read" => add(&mut self.read, path),
            "write" => add(&mut self.written, path),
            "edit" => add(&mut self.edited, path),
            _ => {}
        }
    }

    /// pi's `computeFileLists`: read-only files and modified files, each sorted.
    pub fn lists(&self) -> CompactionDetails {
        let mut modified: Vec<String> = Vec::new();
        for f in self.edited.iter().chain(&self.written) {
            add(&mut modified, f);
        }
        let mut read: Vec<String> = self
            .read
            .iter()
            .filter(|f| !modified.contains(f))
            .cloned()
            .collect();
        js_sort(&mut read);
        js_sort(&mut modified);
        CompactionDetails {
            read_files: read,
            modified_files: modified,
        }
    }
}

/// pi's `formatFileOperations`: the blocks appended to a summary, or "" when both lists are
/// empty.
pub fn format_file_lists(details: &CompactionDetails) -> String {
    let mut sections = Vec::new();
    if !details.read_files.is_empty() {
        sections.push(format!(
            "<read-files>\n{}\n</read-files>",
            details.read_files.join("\n")
        ));
    }
    if !details.modified_files.is_empty() {
        sections.push(format!(
            "<modified-files>\n{}\n</modified-files>",
            details.modified_files.join("\n")
        ));
    }
    if sections.is_empty() {
        return String::new();
    }
    format!("\n\n{}", sections.join("\n\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::compaction::test_support::*;
    use serde_json::json;

    fn assistant_calls(calls: Vec<Content>) -> AgentMessage {
        AgentMessage::from(Message::Assistant(assistant_msg(calls)))
    }

    #[test]
    fn read_write_edit_calls_are_sorted_into_lists() {
        let mut ops = FileOps::default();
        ops.record(&assistant_calls(vec![
            call("read", json!({"path": "src/z.rs"})),
            call("read", json!({"path": "src/a.rs"})),
            call("write", json!({"path": "new.txt"})),
            call("edit", json!({"path": "src/a.rs"})),
            call("bash", json!({"path": "ignored", "command": "ls"})),
            call("read", json!({"path": ""})),
            call("read", json!({"file": "no-path"})),
        ]));
        assert_eq!(ops.read, ["src/z.rs", "src/a.rs"]);
        let l = ops.lists();
        assert_eq!(l.read_files, ["src/z.rs"]);
        assert_eq!(l.modified_files, ["new.txt", "src/a.rs"]);
    }

    #[test]
    fn raw_assistant_messages_and_other_roles() {
        let mut ops = FileOps::default();
        ops.record(&AgentMessage::Raw(json!({"role": "assistant", "content": [
            {"type": "toolCall", "id": "1", "name": "edit", "arguments": {"path": "r.rs"}}]})));
        // A user message quoting a tool call shape is not a tool call.
        ops.record(&AgentMessage::Raw(json!({"role": "user", "content": [
            {"type": "toolCall", "name": "read", "arguments": {"path": "u.rs"}}]})));
        assert_eq!(ops.edited, ["r.rs"]);
        assert!(ops.read.is_empty());
    }

    #[test]
    fn previous_details_seed_cumulative_lists() {
        let mut ops = FileOps::default();
        ops.seed_from_details(
            &json!({"readFiles": ["old.rs", "both.rs", 5], "modifiedFiles": ["m.rs"]}),
        );
        ops.record(&assistant_calls(vec![call(
            "write",
            json!({"path": "both.rs"}),
        )]));
        assert_eq!(ops.edited, ["m.rs"]);
        let l = ops.lists();
        assert_eq!(l.read_files, ["old.rs"]);
        assert_eq!(l.modified_files, ["both.rs", "m.rs"]);
    }

    #[test]
    fn formats_blocks_only_for_non_empty_lists() {
        assert_eq!(format_file_lists(&CompactionDetails::default()), "");
        let d = CompactionDetails {
            read_files: vec!["a".into(), "b".into()],
            modified_files: vec![],
        };
        assert_eq!(
            format_file_lists(&d),
            "\n\n<read-files>\na\nb\n</read-files>"
        );
        let d = CompactionDetails {
            read_files: vec!["a".into()],
            modified_files: vec!["c".into()],
        };
        assert_eq!(
            format_file_lists(&d),
            "\n\n<read-files>\na\n</read-files>\n\n<modified-files>\nc\n</modified-files>"
        );
    }

    #[test]
    fn sorting_follows_javascript_code_unit_order() {
        // U+FF21 (fullwidth A) sorts after U+1F600 in UTF-16 but before it in UTF-8.
        let mut ops = FileOps::default();
        ops.record(&assistant_calls(vec![
            call("read", json!({"path": "\u{FF21}"})),
            call("read", json!({"path": "\u{1F600}"})),
        ]));
        assert_eq!(ops.lists().read_files, ["\u{1F600}", "\u{FF21}"]);
    }
}
