//! A replay's results as a person reads them (a table, differences only when two sources are
//! compared, and a summary line) and as a program reads them (one JSON document). Pure: the
//! rows in, text or JSON out.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::calls::RecordedCall;
use super::source::{Decision, Outcome};

/// One replayed call: the primary source's decision, and the other source's with `--against`.
pub struct Row<'a> {
    pub call: &'a RecordedCall,
    pub decision: Decision,
    pub against: Option<Decision>,
}

impl Row<'_> {
    pub fn differs(&self) -> bool {
        self.against
            .as_ref()
            .is_some_and(|b| !self.decision.same_as(b))
    }
}

/// What the report says about the run as a whole.
pub struct RunInfo<'a> {
    pub hook: &'a str,
    pub against: Option<&'a str>,
    pub files: usize,
    /// Time spent asking the sources, start-up excluded.
    pub elapsed: std::time::Duration,
}

const ARGS_WIDTH: usize = 60;
const DECISION_WIDTH: usize = 72;

/// `text` cut to `width` characters, with an ellipsis when it was longer.
fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_string()
    } else {
        let head: String = text.chars().take(width - 1).collect();
        format!("{head}…")
    }
}

/// The arguments in one short line: a `bash` command or a path as the text itself, anything
/// else as compact JSON; cut to `ARGS_WIDTH` characters.
pub fn args_summary(tool: &str, input: &Value) -> String {
    let key = match tool {
        "bash" => Some("command"),
        "read" | "write" | "edit" | "ls" => Some("path"),
        "grep" | "find" => Some("pattern"),
        _ => None,
    };
    let text = key
        .and_then(|k| input.get(k).and_then(Value::as_str))
        .map(str::to_string)
        .unwrap_or_else(|| input.to_string());
    let one_line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    cut(&one_line, ARGS_WIDTH)
}

fn session_label(call: &RecordedCall) -> String {
    call.session_id.chars().take(8).collect()
}

/// The table: every call, or with `--against` only the calls decided differently.
pub fn table(rows: &[Row<'_>], info: &RunInfo<'_>) -> String {
    let comparing = info.against.is_some();
    let mut header = vec!["SESSION", "CALL", "TOOL", "ARGS", "RECORDED"];
    let a_title = format!("DECISION ({})", info.hook);
    let b_title = info.against.map(|b| format!("DECISION ({b})"));
    header.push(&a_title);
    if let Some(b) = &b_title {
        header.push(b);
    }
    let mut cells: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
    for r in rows.iter().filter(|r| !comparing || r.differs()) {
        let mut line = vec![
            session_label(r.call),
            r.call.call_id.clone(),
            r.call.tool.clone(),
            args_summary(&r.call.tool, &r.call.input),
            r.call.recorded.as_str().to_string(),
            // With a second decision after it, the first is cut (the JSON has it whole).
            if comparing {
                cut(&r.decision.summary(), DECISION_WIDTH)
            } else {
                r.decision.summary()
            },
        ];
        if let Some(b) = &r.against {
            line.push(b.summary());
        }
        cells.push(line);
    }
    let cols = cells[0].len();
    let widths: Vec<usize> = (0..cols)
        .map(|i| {
            cells
                .iter()
                .map(|c| c[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    if cells.len() > 1 {
        for line in &cells {
            let mut s = String::new();
            for (i, cell) in line.iter().enumerate() {
                if i + 1 == cols {
                    s.push_str(cell);
                } else {
                    let pad = widths[i] - cell.chars().count();
                    s.push_str(cell);
                    s.push_str(&" ".repeat(pad + 2));
                }
            }
            out.push_str(s.trim_end());
            out.push('\n');
        }
    }
    out.push_str(&summary_line(rows, info));
    out.push('\n');
    out
}

fn counts(decisions: impl Iterator<Item = Outcome>) -> [usize; 5] {
    let mut c = [0; 5];
    for o in decisions {
        c[match o {
            Outcome::Allow => 0,
            Outcome::Block => 1,
            Outcome::Patch => 2,
            Outcome::Error => 3,
            Outcome::NotAsked => 4,
        }] += 1;
    }
    c
}

fn rate(n: usize, elapsed: std::time::Duration) -> f64 {
    let s = elapsed.as_secs_f64();
    if s > 0.0 {
        n as f64 / s
    } else {
        0.0
    }
}

fn summary_line(rows: &[Row<'_>], info: &RunInfo<'_>) -> String {
    let sessions: BTreeSet<&str> = rows.iter().map(|r| r.call.session_id.as_str()).collect();
    let [allow, block, patch, error, not_asked] = counts(rows.iter().map(|r| r.decision.outcome));
    let mut s = format!(
        "{} from {} ({}) through {} in {:.2} s ({:.0} calls/s): \
         {allow} allow, {block} block, {patch} patch, {error} error, {not_asked} not asked",
        plural(rows.len(), "tool call"),
        plural(sessions.len(), "session"),
        plural(info.files, "file"),
        info.hook,
        info.elapsed.as_secs_f64(),
        rate(rows.len(), info.elapsed),
    );
    if let Some(b) = info.against {
        let differ = rows.iter().filter(|r| r.differs()).count();
        s.push_str(&format!("; {differ} decided differently by {b}"));
    }
    s
}

fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// The whole replay as one JSON document.
pub fn json(rows: &[Row<'_>], info: &RunInfo<'_>) -> Value {
    let calls: Vec<Value> = rows
        .iter()
        .map(|r| {
            let mut v = json!({
                "file": r.call.file.display().to_string(),
                "session_id": r.call.session_id,
                "call_id": r.call.call_id,
                "tool": r.call.tool,
                "input": r.call.input,
                "recorded": r.call.recorded.as_str(),
                "decision": r.decision,
            });
            if let Some(b) = &r.against {
                v["against"] = json!(b);
                v["differs"] = json!(r.differs());
            }
            v
        })
        .collect();
    let [allow, block, patch, error, not_asked] = counts(rows.iter().map(|r| r.decision.outcome));
    let sessions: BTreeSet<&str> = rows.iter().map(|r| r.call.session_id.as_str()).collect();
    let mut summary = json!({
        "calls": rows.len(),
        "sessions": sessions.len(),
        "files": info.files,
        "allow": allow, "block": block, "patch": patch, "error": error, "not_asked": not_asked,
        "elapsed_ms": info.elapsed.as_secs_f64() * 1000.0,
        "calls_per_second": rate(rows.len(), info.elapsed),
    });
    if info.against.is_some() {
        summary["differing"] = json!(rows.iter().filter(|r| r.differs()).count());
    }
    json!({
        "hook": info.hook,
        "against": info.against,
        "calls": calls,
        "summary": summary,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::calls::Recorded;
    use std::path::PathBuf;
    use std::time::Duration;

    fn call(id: &str, cmd: &str) -> RecordedCall {
        RecordedCall {
            file: PathBuf::from("/s/a.jsonl"),
            session_id: "0197a3c2-aaaa".into(),
            call_id: id.into(),
            tool: "bash".into(),
            input: json!({"command": cmd}),
            recorded: Recorded::Ok,
        }
    }

    fn decision(outcome: Outcome, reason: Option<&str>) -> Decision {
        Decision {
            outcome,
            reason: reason.map(str::to_string),
            patch: None,
            fails_closed: None,
            feedback: Vec::new(),
            latency_us: 7,
        }
    }

    #[test]
    fn the_diff_shows_only_calls_decided_differently() {
        let (a, b) = (call("c1", "ls"), call("c2", "rm -rf /"));
        let rows = vec![
            Row {
                call: &a,
                decision: decision(Outcome::Allow, None),
                against: Some(Decision {
                    latency_us: 99,
                    ..decision(Outcome::Allow, None)
                }),
            },
            Row {
                call: &b,
                decision: decision(Outcome::Block, Some("no")),
                against: Some(decision(Outcome::Allow, None)),
            },
        ];
        let info = RunInfo {
            hook: "new",
            against: Some("old"),
            files: 1,
            elapsed: Duration::from_millis(2),
        };
        let t = table(&rows, &info);
        assert!(!t.contains("c1"), "{t}");
        assert!(
            t.contains("c2") && t.contains("block: no") && t.contains("DECISION (old)"),
            "{t}"
        );
        assert!(t.contains("1 decided differently by old"), "{t}");
        let j = json(&rows, &info);
        assert_eq!(j["summary"]["differing"], 1);
        assert_eq!(j["calls"][0]["differs"], false);
        assert_eq!(j["calls"][1]["decision"]["outcome"], "block");
        assert_eq!(j["calls"][1]["against"]["outcome"], "allow");
    }

    #[test]
    fn arguments_are_one_short_line() {
        assert_eq!(
            args_summary("bash", &json!({"command": "ls\n-la"})),
            "ls -la"
        );
        assert_eq!(args_summary("mcp_x", &json!({"q": 1})), r#"{"q":1}"#);
        let long = args_summary("bash", &json!({"command": "x".repeat(200)}));
        assert_eq!(long.chars().count(), ARGS_WIDTH);
    }
}
