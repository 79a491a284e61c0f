//! The `edit` tool: one or more exact-text replacements in a single file, matched against the
//! original contents, with the file's BOM and dominant line ending preserved.
//!
//! This module owns the tool surface (schema, legacy-argument folding, file I/O under the
//! per-file mutation lock, result details); matching lives in `edit_match`, diffs in
//! `edit_diff`.

use async_trait::async_trait;
use serde_json::{json, Map, Value};

use super::edit_diff::{display_diff, unified_patch};
use super::edit_match::{
    apply_edits, detect_line_ending, normalize_to_lf, restore_line_endings, strip_bom, Edit,
};
use super::file_util::errno_code;
use super::{path, Tool, ToolContext, ToolError, ToolOutput};

#[derive(Default)]
pub struct EditTool;

const DESCRIPTION: &str = "Edit a single file using exact text replacement. Every edits[].oldText must match a unique, non-overlapping region of the original file. If two changes affect the same block or nearby lines, merge them into one edit instead of emitting overlapping edits. Do not include large unchanged regions just to connect distant changes.";

/// Older models send `{path, oldText, newText}`, and some send `edits` as a JSON string; both
/// are folded into the `edits` array before schema validation, exactly as pi does.
fn prepare(args: Value) -> Value {
    let Value::Object(map) = args else {
        return args;
    };
    let mut map = map;
    if let Some(Value::String(s)) = map.get("edits") {
        if let Ok(parsed @ Value::Array(_)) = serde_json::from_str::<Value>(s) {
            map.insert("edits".into(), parsed);
        }
    }
    let (Some(Value::String(old)), Some(Value::String(new))) =
        (map.get("oldText"), map.get("newText"))
    else {
        return Value::Object(map);
    };
    let legacy = json!({"oldText": old, "newText": new});
    let mut edits = match map.get("edits") {
        Some(Value::Array(a)) => a.clone(),
        _ => Vec::new(),
    };
    edits.push(legacy);
    // Rebuilt rather than `remove`d so the remaining keys keep their order.
    let mut out = Map::new();
    for (k, v) in map {
        match k.as_str() {
            "oldText" | "newText" => {}
            "edits" => {
                out.insert(k, Value::Array(std::mem::take(&mut edits)));
            }
            _ => {
                out.insert(k, v);
            }
        }
    }
    if !out.contains_key("edits") {
        out.insert("edits".into(), Value::Array(edits));
    }
    Value::Object(out)
}

fn parse_edits(args: &Value) -> Result<Vec<Edit>, ToolError> {
    let invalid = || {
        ToolError::Failed(
            "Edit tool input is invalid. edits must contain at least one replacement.".into(),
        )
    };
    let list = args
        .get("edits")
        .and_then(Value::as_array)
        .ok_or_else(invalid)?;
    if list.is_empty() {
        return Err(invalid());
    }
    list.iter()
        .map(|e| {
            let old = e.get("oldText").and_then(Value::as_str);
            let new = e.get("newText").and_then(Value::as_str);
            match (old, new) {
                (Some(o), Some(n)) => Ok(Edit {
                    old_text: o.to_string(),
                    new_text: n.to_string(),
                }),
                _ => Err(invalid()),
            }
        })
        .collect()
}

fn could_not_edit(raw_path: &str, e: &std::io::Error) -> ToolError {
    let why = match errno_code(e) {
        Some(code) => format!("Error code: {code}"),
        None => e.to_string(),
    };
    ToolError::Failed(format!("Could not edit file: {raw_path}. {why}."))
}

#[async_trait]
impl Tool for EditTool {
    fn name(&self) -> &str {
        "edit"
    }
    fn description(&self) -> &str {
        DESCRIPTION
    }
    fn constrained_sampling(&self) -> Option<Value> {
        Some(super::builtin_constrained_sampling())
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "required": ["path", "edits"],
            "properties": {
                "path": {"type": "string", "description": "Path to the file to edit (relative or absolute)"},
                "edits": {
                    "type": "array",
                    "description": "One or more targeted replacements. Each edit is matched against the original file, not incrementally. Do not include overlapping or nested edits. If two changes touch the same block or nearby lines, merge them into one edit instead.",
                    "items": {
                        "type": "object",
                        "required": ["oldText", "newText"],
                        "properties": {
                            "oldText": {"type": "string", "description": "Exact text for one targeted replacement. It must be unique in the original file and must not overlap with any other edits[].oldText in the same call."},
                            "newText": {"type": "string", "description": "Replacement text for this targeted edit."}
                        }
                    }
                }
            }
        })
    }
    fn prompt_snippet(&self) -> Option<String> {
        Some("Make precise file edits with exact text replacement, including multiple disjoint edits in one call".into())
    }
    fn prompt_guidelines(&self) -> Vec<String> {
        [
            "Use edit for targeted changes. Batch changes to one file in a single call.",
            "Each edits[].oldText must exactly and uniquely match the original file. Keep matches short and non-overlapping; merge nearby changes without including large unchanged regions.",
        ]
        .map(String::from)
        .to_vec()
    }
    fn prepare_arguments(&self, args: Value) -> Value {
        prepare(args)
    }
    async fn execute(
        &self,
        _id: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let raw_path = path::file_arg(&args, "edit")?;
        let edits = parse_edits(&args)?;
        let abs = path::resolve(&ctx.cwd, raw_path);
        // Held across read-modify-write; cancellation is only observed between steps so the
        // lock is never released while a write is in flight.
        let _guard = ctx.lock_file(&abs).await?;
        let aborted = || ctx.cancel.is_cancelled();
        if aborted() {
            return Err(ToolError::Aborted);
        }
        // pi checks read+write access first; opening for both is the same check.
        if let Err(e) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&abs)
        {
            if aborted() {
                return Err(ToolError::Aborted);
            }
            return Err(could_not_edit(raw_path, &e));
        }
        let bytes = tokio::fs::read(&abs)
            .await
            .map_err(|e| could_not_edit(raw_path, &e))?;
        if aborted() {
            return Err(ToolError::Aborted);
        }
        let raw = String::from_utf8_lossy(&bytes);
        let (bom, text) = strip_bom(&raw);
        let ending = detect_line_ending(text);
        let base = normalize_to_lf(text);
        let new =
            apply_edits(&base, &edits, raw_path).map_err(|e| ToolError::Failed(e.to_string()))?;
        if aborted() {
            return Err(ToolError::Aborted);
        }
        let final_content = format!("{bom}{}", restore_line_endings(&new, ending));
        tokio::fs::write(&abs, final_content)
            .await
            .map_err(|e| could_not_edit(raw_path, &e))?;
        if aborted() {
            return Err(ToolError::Aborted);
        }

        let (diff, first_changed) = display_diff(&base, &new, 4);
        let mut details = json!({
            "diff": diff,
            "patch": unified_patch(raw_path, &base, &new, 4),
        });
        if let (Some(n), Value::Object(m)) = (first_changed, &mut details) {
            m.insert("firstChangedLine".into(), json!(n));
        }
        Ok(ToolOutput {
            content: vec![crate::message::Content::text(format!(
                "Successfully replaced {} block(s) in {raw_path}.",
                edits.len()
            ))],
            details: Some(details),
            ..Default::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::text_of;
    use std::path::Path;

    async fn run(dir: &Path, args: Value) -> Result<ToolOutput, ToolError> {
        let args = EditTool.prepare_arguments(args);
        EditTool
            .execute("id", args, &ToolContext::new(dir.to_path_buf()))
            .await
    }

    #[tokio::test]
    async fn crlf_file_with_bom_keeps_both() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("w.txt");
        std::fs::write(&f, "\u{FEFF}first\r\nsecond\r\nthird\r\n").unwrap();
        let out = run(
            d.path(),
            json!({"path": "w.txt", "edits": [{"oldText": "second\nthird", "newText": "2nd\n3rd"}]}),
        )
        .await
        .unwrap();
        assert_eq!(
            text_of(&out.content),
            "Successfully replaced 1 block(s) in w.txt."
        );
        assert_eq!(
            std::fs::read_to_string(&f).unwrap(),
            "\u{FEFF}first\r\n2nd\r\n3rd\r\n"
        );
        let details = out.details.unwrap();
        assert_eq!(details["firstChangedLine"], 2);
        assert!(details["patch"].as_str().unwrap().contains("-second\n"));
        assert!(details["diff"].as_str().unwrap().contains("+2 2nd"));
    }

    #[tokio::test]
    async fn fuzzy_match_with_smart_quotes_succeeds() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("q.py");
        std::fs::write(&f, "print(\u{201C}hi\u{201D})\nx = \u{2018}keep\u{2019}\n").unwrap();
        run(
            d.path(),
            json!({"path": "q.py", "edits": [{"oldText": "print(\"hi\")", "newText": "print(\"bye\")"}]}),
        )
        .await
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(&f).unwrap(),
            "print(\"bye\")\nx = \u{2018}keep\u{2019}\n"
        );
    }

    #[tokio::test]
    async fn duplicate_match_fails_with_pis_message() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("d.txt"), "a\na\n").unwrap();
        let err = run(
            d.path(),
            json!({"path": "d.txt", "oldText": "a", "newText": "b"}),
        )
        .await
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Found 2 occurrences of the text in d.txt. The text must be unique. Please provide more context to make it unique."
        );
    }

    #[tokio::test]
    async fn overlapping_and_no_op_edits_fail_and_leave_file_alone() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("o.txt");
        std::fs::write(&f, "abcdef").unwrap();
        let err = run(
            d.path(),
            json!({"path": "o.txt", "edits": [{"oldText": "abc", "newText": "x"}, {"oldText": "cde", "newText": "y"}]}),
        )
        .await
        .unwrap_err();
        assert!(err.to_string().contains("overlap in o.txt"));
        let err = run(
            d.path(),
            json!({"path": "o.txt", "edits": [{"oldText": "abc", "newText": "abc"}]}),
        )
        .await
        .unwrap_err();
        assert!(err
            .to_string()
            .starts_with("No changes made to o.txt. The replacement produced identical content."));
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "abcdef");
    }

    #[tokio::test]
    async fn multi_edit_applies_all() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("m.txt");
        std::fs::write(&f, "alpha\nbeta\ngamma\n").unwrap();
        let out = run(
            d.path(),
            json!({"path": "m.txt", "edits": [{"oldText": "alpha", "newText": "A"}, {"oldText": "gamma", "newText": "G"}]}),
        )
        .await
        .unwrap();
        assert_eq!(
            text_of(&out.content),
            "Successfully replaced 2 block(s) in m.txt."
        );
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "A\nbeta\nG\n");
    }

    #[test]
    fn legacy_and_stringified_arguments_are_folded() {
        let v = prepare(json!({"path": "p", "oldText": "a", "newText": "b"}));
        assert_eq!(
            v,
            json!({"path": "p", "edits": [{"oldText": "a", "newText": "b"}]})
        );
        let v = prepare(json!({"path": "p", "edits": "[{\"oldText\":\"x\",\"newText\":\"y\"}]"}));
        assert_eq!(
            v,
            json!({"path": "p", "edits": [{"oldText": "x", "newText": "y"}]})
        );
        let v = prepare(json!({
            "path": "p",
            "edits": [{"oldText": "x", "newText": "y"}],
            "oldText": "a",
            "newText": "b"
        }));
        assert_eq!(v["edits"].as_array().unwrap().len(), 2);
        assert!(v.get("oldText").is_none());
    }

    #[test]
    fn registry_accepts_legacy_arguments_after_preparation() {
        let mut reg = crate::tools::ToolRegistry::default();
        reg.register(std::sync::Arc::new(EditTool));
        let args = reg
            .validate("edit", json!({"path": "p", "oldText": "a", "newText": "b"}))
            .unwrap();
        assert_eq!(args["edits"][0]["oldText"], "a");
        assert!(reg
            .validate("edit", json!({"path": "p", "edits": [{"oldText": "a"}]}))
            .is_err());
    }

    #[tokio::test]
    async fn missing_file_names_the_error_code() {
        let d = tempfile::tempdir().unwrap();
        let err = run(
            d.path(),
            json!({"path": "none.txt", "edits": [{"oldText": "a", "newText": "b"}]}),
        )
        .await
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Could not edit file: none.txt. Error code: ENOENT."
        );
    }

    #[tokio::test]
    async fn cancelled_edit_is_aborted() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("c.txt"), "a").unwrap();
        let ctx = ToolContext::new(d.path().to_path_buf());
        ctx.cancel.cancel();
        let args = json!({"path": "c.txt", "edits": [{"oldText": "a", "newText": "b"}]});
        let err = EditTool.execute("id", args, &ctx).await.unwrap_err();
        assert!(matches!(err, ToolError::Aborted));
        assert_eq!(
            std::fs::read_to_string(d.path().join("c.txt")).unwrap(),
            "a"
        );
    }
}
