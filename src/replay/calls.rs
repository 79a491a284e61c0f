//! The tool calls recorded in session files: every `toolCall` block of every assistant message,
//! on every branch, in file order, with what became of it (the `toolResult` that answered it).
//!
//! Files are streamed, never held: the header is checked by the session store's own code, then
//! each line is read as it passes ([`super::line`] over [`super::scan`]), keeping only the
//! calls and what became of each. So a session of any size — one huge line included — costs
//! the calls it records, and a line is taken exactly when the loader would take it: pi's v3
//! files and the TypeScript pi's (the same format, and its v1/v2 files) are read alike, damaged
//! lines are skipped, and nothing is ever written. Blocks are read as stored JSON rather than
//! typed messages, so a message this pi could not type still yields its calls.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::line::{self, Call, Said};
use super::scan::{ScanError, Scanner};
use crate::session::load::open_streaming;
use crate::session::SessionError;

/// What the session says happened to a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recorded {
    /// The tool ran and succeeded.
    Ok,
    /// The tool ran and failed (or did not run for another reason).
    Error,
    /// A hook blocked it (its error result says so).
    Blocked,
    /// No result was recorded (the session ended, or the run was aborted, first).
    NoResult,
}

impl Recorded {
    pub fn as_str(&self) -> &'static str {
        match self {
            Recorded::Ok => "ok",
            Recorded::Error => "error",
            Recorded::Blocked => "blocked",
            Recorded::NoResult => "no result",
        }
    }
}

/// One tool call as the model made it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedCall {
    /// The session file it was read from.
    pub file: PathBuf,
    pub session_id: String,
    pub call_id: String,
    pub tool: String,
    pub input: Value,
    pub recorded: Recorded,
}

/// Why a session file gave no calls.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error("{}: cannot list the directory: {source}", path.display())]
    Dir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The session files `paths` name: files as given, directories searched (recursively) for
/// `*.jsonl`, in name order.
pub fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ReadError> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut found = Vec::new();
            walk(p, &mut found)?;
            found.sort();
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), ReadError> {
    let entries = std::fs::read_dir(dir).map_err(|source| ReadError::Dir {
        path: dir.to_path_buf(),
        source,
    })?;
    for e in entries.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => walk(&p, out)?,
            Ok(t) if t.is_file() && p.extension().is_some_and(|x| x == "jsonl") => out.push(p),
            _ => {}
        }
    }
    Ok(())
}

/// Every recorded call of one session file. An empty file has none.
pub fn read_session(path: &Path) -> Result<Vec<RecordedCall>, ReadError> {
    let Some((header, reader)) = open_streaming(path)? else {
        return Ok(Vec::new());
    };
    let (calls, results) = read_lines(reader, header.version).map_err(|e| SessionError::Io {
        path: path.to_path_buf(),
        source: e,
    })?;
    Ok(calls
        .into_iter()
        .map(|(call_id, tool, input)| RecordedCall {
            file: path.to_path_buf(),
            session_id: header.id.clone(),
            recorded: results.get(&call_id).cloned().unwrap_or(Recorded::NoResult),
            call_id,
            tool,
            input,
        })
        .collect())
}

/// The calls of the lines after a session header (format `version`), and the result recorded
/// for each call id. Only a read error fails it: a damaged line is skipped.
pub(super) fn read_lines<R: Read>(
    reader: R,
    version: u32,
) -> std::io::Result<(Vec<Call>, HashMap<String, Recorded>)> {
    let mut scan = Scanner::new(reader);
    let mut calls = Vec::new();
    let mut results = HashMap::new();
    while !scan.at_end()? {
        match line::read(&mut scan, version) {
            Ok(Said::Calls(c)) => calls.extend(c),
            Ok(Said::Result { id, recorded }) => {
                results.insert(id, recorded);
            }
            Ok(Said::Nothing) | Err(ScanError::Syntax(_)) => {}
            Err(ScanError::Io(e)) => return Err(e),
        }
        scan.finish_line()?;
    }
    Ok((calls, results))
}

/// The calls of every file, in order; a file that cannot be read is reported with its error
/// and skipped, so one damaged file does not hide the others.
pub fn read_sessions(files: &[PathBuf]) -> (Vec<RecordedCall>, Vec<ReadError>) {
    let mut calls = Vec::new();
    let mut errors = Vec::new();
    for f in files {
        match read_session(f) {
            Ok(c) => calls.extend(c),
            Err(e) => errors.push(e),
        }
    }
    (calls, errors)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_calls_and_what_became_of_them() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("s.jsonl");
        let lines = [
            json!({"type": "session", "version": 3, "id": "sess-1", "timestamp": "2025-01-01T00:00:00Z", "cwd": "/p"}),
            json!({"type": "message", "id": "a1", "parentId": null, "timestamp": "2025-01-01T00:00:01Z",
                   "message": {"role": "assistant", "content": [
                       {"type": "text", "text": "ok"},
                       {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}},
                       {"type": "toolCall", "id": "c2", "name": "write", "arguments": "{\"path\":\"/etc/x\"}"},
                       {"type": "toolCall", "id": "c3", "name": "bash", "arguments": {"command": "rm -rf /"}},
                       {"type": "toolCall", "id": "c4", "name": "read", "arguments": {"path": "x"}}],
                   "api": "faux", "provider": "faux", "model": "m", "stopReason": "toolUse", "timestamp": 1}}),
            json!({"type": "message", "id": "r1", "parentId": "a1", "timestamp": "2025-01-01T00:00:02Z",
                   "message": {"role": "toolResult", "toolCallId": "c1", "toolName": "bash",
                               "content": [{"type": "text", "text": "a b"}], "isError": false, "timestamp": 2}}),
            json!({"type": "message", "id": "r2", "parentId": "r1", "timestamp": "2025-01-01T00:00:02Z",
                   "message": {"role": "toolResult", "toolCallId": "c2", "toolName": "write",
                               "content": [{"type": "text", "text": "EACCES"}], "isError": true, "timestamp": 2}}),
            json!({"type": "message", "id": "r3", "parentId": "r2", "timestamp": "2025-01-01T00:00:02Z",
                   "message": {"role": "toolResult", "toolCallId": "c3", "toolName": "bash",
                               "content": [{"type": "text", "text": "Blocked by hook g: no"}], "isError": true, "timestamp": 2}}),
        ];
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&f, text).unwrap();
        let calls = read_session(&f).unwrap();
        let got: Vec<(&str, &str, &Recorded)> = calls
            .iter()
            .map(|c| (c.call_id.as_str(), c.tool.as_str(), &c.recorded))
            .collect();
        assert_eq!(
            got,
            vec![
                ("c1", "bash", &Recorded::Ok),
                ("c2", "write", &Recorded::Error),
                ("c3", "bash", &Recorded::Blocked),
                ("c4", "read", &Recorded::NoResult),
            ]
        );
        assert_eq!(calls[1].input, json!({"path": "/etc/x"}));
        assert_eq!(calls[0].session_id, "sess-1");
        // A directory is searched for session files.
        assert_eq!(expand(&[d.path().to_path_buf()]).unwrap(), vec![f.clone()]);
        // Not a session: an error naming the file, nothing written.
        let bad = d.path().join("notes.txt");
        std::fs::write(&bad, "hello\n").unwrap();
        let (calls, errors) = read_sessions(&[bad.clone(), f]);
        assert_eq!(calls.len(), 4);
        assert!(errors[0].to_string().contains("notes.txt"), "{}", errors[0]);
        assert_eq!(std::fs::read_to_string(&bad).unwrap(), "hello\n");
    }
}
