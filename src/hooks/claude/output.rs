//! What a finished Claude Code hook process said, by Claude Code's rules, as one [`Decision`]:
//! exit 0 (stdout is JSON when it starts with `{`, else plain text), exit 2 (a blocking
//! error; the reason is the JSON's if it gives one, else stderr), any other exit code (an
//! error shown to the user; the action goes on unless the JSON decides) — and, unlike
//! Claude Code, a hook that could not run at all (exit 126/127, a signal, a timeout, a
//! failed spawn, stdout that starts with `{` but is not JSON) is a [`Failure`], which the
//! runner treats under the hook's `fail` policy instead of as "allow".
//!
//! Pure: the endpoint turns a decision into pi's reply for the event.

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::config::ClaudeEvent;

/// How the process ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    Exited(i32),
    Signaled(i32),
    TimedOut(Duration),
    SpawnFailed(String),
}

/// A finished run: how it ended and what it wrote (each stream capped, see `run`).
#[derive(Debug, Clone)]
pub struct Ran {
    pub ending: Ending,
    pub stdout: String,
    pub stderr: String,
    /// From the request to the process running.
    pub spawn_us: u64,
    /// From the request to the process gone and its output read.
    pub total_us: u64,
}

/// Why a hook's answer does not count: it could not run, or said something unreadable.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct Failure {
    /// `not_found`, `not_executable`, `killed`, `timeout`, `spawn_failed`, `bad_output`.
    pub kind: &'static str,
    pub message: String,
}

/// Claude Code's JSON output; unknown fields are ignored, as Claude Code ignores them.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HookJson {
    #[serde(rename = "continue")]
    pub continue_: Option<bool>,
    pub stop_reason: Option<String>,
    pub suppress_output: Option<bool>,
    pub system_message: Option<String>,
    pub decision: Option<String>,
    pub reason: Option<String>,
    pub hook_specific_output: Option<Specific>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Specific {
    pub hook_event_name: Option<String>,
    pub permission_decision: Option<String>,
    pub permission_decision_reason: Option<String>,
    pub updated_input: Option<Value>,
    pub additional_context: Option<String>,
    /// PermissionRequest's answer.
    pub decision: Option<Value>,
}

/// A PermissionRequest hook's answer for the person (`hookSpecificOutput.decision`).
#[derive(Debug, Clone, PartialEq)]
pub enum Permission {
    /// `behavior: "allow"`, with `updatedInput` (Claude Code's shape, the whole input).
    Allow { updated_input: Option<Value> },
    /// `behavior: "deny"`: `message` to the model; `interrupt` stops the run.
    Deny { message: String, interrupt: bool },
}

/// What the hook decided, in Claude Code's terms, for the endpoint to apply.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Decision {
    /// Block the action: the tool call (reason to the model), the prompt (reason to the
    /// user), stopping (reason to the model, which goes on), the compaction.
    pub block: Option<String>,
    /// PreToolUse `ask`: the user decides; the reason is shown to them.
    pub ask: Option<String>,
    /// PreToolUse `updatedInput` (Claude Code's shape, replacing the whole input).
    pub updated_input: Option<Value>,
    /// PermissionRequest's allow or deny (exit 2 is a deny).
    pub permission: Option<Permission>,
    /// Context for the model: `additionalContext`, or plain stdout of UserPromptSubmit and
    /// SessionStart.
    pub context: Vec<String>,
    /// `continue: false`: the run stops (the `stopReason` is shown to the user).
    pub stop: Option<String>,
    /// For the user: `systemMessage`, or exit 2's stderr where nothing can be blocked.
    pub notices: Vec<String>,
    /// A non-blocking error (an exit code other than 0 and 2): reported as the hook's error;
    /// the action goes on.
    pub error: Option<String>,
}

/// Whether a Claude Code event can be blocked with exit 2 / `decision: "block"`.
/// (PostToolUseFailure's "block" is feedback: the tool already failed; see [`decide`].)
fn can_block(event: ClaudeEvent) -> bool {
    !matches!(
        event,
        ClaudeEvent::SessionStart
            | ClaudeEvent::SessionEnd
            | ClaudeEvent::Notification
            | ClaudeEvent::Setup
            | ClaudeEvent::SubagentStart
    )
}

/// Whether plain stdout (exit 0, not JSON) is context for the model.
fn text_is_context(event: ClaudeEvent) -> bool {
    matches!(
        event,
        ClaudeEvent::UserPromptSubmit | ClaudeEvent::SessionStart
    )
}

fn parse_json(stdout: &str) -> Result<Option<HookJson>, Failure> {
    let trimmed = stdout.trim_start();
    if !trimmed.starts_with('{') {
        return Ok(None);
    }
    serde_json::from_str(trimmed.trim_end())
        .map(Some)
        .map_err(|e| Failure {
            kind: "bad_output",
            message: format!("its stdout starts with `{{` but is not Claude Code hook JSON: {e}"),
        })
}

fn nonempty(s: &str) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// Whether the process ran to an answer, and which: `Err` when it could not run.
pub fn exit_code(ran: &Ran) -> Result<i32, Failure> {
    match &ran.ending {
        Ending::Exited(127) => Err(Failure {
            kind: "not_found",
            message: format!(
                "exit 127: its command was not found{}",
                nonempty(&ran.stderr)
                    .map(|s| format!(" ({s})"))
                    .unwrap_or_default()
            ),
        }),
        Ending::Exited(126) => Err(Failure {
            kind: "not_executable",
            message: format!(
                "exit 126: its command could not be executed{}",
                nonempty(&ran.stderr)
                    .map(|s| format!(" ({s})"))
                    .unwrap_or_default()
            ),
        }),
        // What a shell reports for a child killed by signal N (`sh -c` runs every command).
        Ending::Exited(c @ 129..=159) => Err(Failure {
            kind: "killed",
            message: format!("it was killed by signal {} (exit {c})", c - 128),
        }),
        Ending::Exited(c) => Ok(*c),
        Ending::Signaled(s) => Err(Failure {
            kind: "killed",
            message: format!("it was killed by signal {s}"),
        }),
        Ending::TimedOut(d) => Err(Failure {
            kind: "timeout",
            message: format!(
                "it did not finish within its timeout of {} s and was killed",
                d.as_secs_f64()
            ),
        }),
        Ending::SpawnFailed(e) => Err(Failure {
            kind: "spawn_failed",
            message: format!("it could not be started: {e}"),
        }),
    }
}

/// The decision of a finished run of a hook on `event`.
pub fn decide(event: ClaudeEvent, ran: &Ran) -> Result<Decision, Failure> {
    let code = exit_code(ran)?;
    let mut d = Decision::default();
    if code == 2 {
        // A blocking error: stdout is not consulted beyond a reason it may give.
        let json = parse_json(&ran.stdout).ok().flatten();
        let reason = json
            .as_ref()
            .and_then(json_reason)
            .or_else(|| nonempty(&ran.stderr))
            .unwrap_or_else(|| "the hook exited with code 2".into());
        if can_block(event) {
            d.block = Some(reason);
        } else {
            d.notices.push(reason);
        }
        return Ok(feedback_and_denials(event, d));
    }
    let json = parse_json(&ran.stdout)?;
    if code != 0 {
        let mut msg = format!("exited with code {code}");
        if let Some(e) = nonempty(&ran.stderr) {
            msg.push_str(&format!(": {e}"));
        }
        d.error = Some(msg);
        if json.is_none() {
            return Ok(d);
        }
    }
    let Some(j) = json else {
        if code == 0 && text_is_context(event) {
            d.context.extend(nonempty(&ran.stdout));
        }
        return Ok(d);
    };
    apply_json(event, j, &mut d)?;
    Ok(feedback_and_denials(event, d))
}

/// What a "block" means where nothing is left to block: PostToolUseFailure's reason is
/// feedback for the model (the tool already failed), PermissionRequest's a deny.
fn feedback_and_denials(event: ClaudeEvent, mut d: Decision) -> Decision {
    match event {
        ClaudeEvent::PostToolUseFailure => {
            if let Some(why) = d.block.take() {
                d.context.push(why);
            }
        }
        ClaudeEvent::PermissionRequest if d.permission.is_none() => {
            if let Some(message) = d.block.take() {
                d.permission = Some(Permission::Deny {
                    message,
                    interrupt: false,
                });
            }
        }
        _ => {}
    }
    d
}

/// The blocking reason a JSON output gives, if any.
fn json_reason(j: &HookJson) -> Option<String> {
    j.hook_specific_output
        .as_ref()
        .and_then(|s| s.permission_decision_reason.clone())
        .or_else(|| j.reason.clone())
        .and_then(|r| nonempty(&r))
}

fn bad(message: String) -> Failure {
    Failure {
        kind: "bad_output",
        message,
    }
}

fn apply_json(event: ClaudeEvent, j: HookJson, d: &mut Decision) -> Result<(), Failure> {
    d.notices
        .extend(j.system_message.as_deref().and_then(nonempty));
    if j.continue_ == Some(false) {
        d.stop = Some(
            j.stop_reason
                .as_deref()
                .and_then(nonempty)
                .unwrap_or_else(|| "a Claude Code hook stopped the run (continue: false)".into()),
        );
    }
    let specific = j.hook_specific_output.clone().unwrap_or_default();
    d.context
        .extend(specific.additional_context.as_deref().and_then(nonempty));
    let reason = json_reason(&j);
    match j.decision.as_deref() {
        None | Some("approve") | Some("allow") => {}
        Some("block") if can_block(event) => {
            d.block = Some(
                reason
                    .clone()
                    .unwrap_or_else(|| "blocked by the hook".into()),
            );
        }
        Some("block") => {}
        Some(other) => {
            return Err(bad(format!(
                "`decision` must be \"block\" (or \"approve\"), not {other:?}"
            )))
        }
    }
    if event == ClaudeEvent::PermissionRequest {
        d.permission = permission(specific.decision.as_ref())?;
    }
    if event == ClaudeEvent::PreToolUse {
        match specific.permission_decision.as_deref() {
            None | Some("allow") => {}
            Some("deny") => {
                d.block = Some(reason.unwrap_or_else(|| "denied by the hook".into()));
            }
            Some("ask") => {
                d.ask = Some(reason.unwrap_or_else(|| "the hook asks for confirmation".into()));
            }
            Some(other) => {
                return Err(bad(format!(
                    "`permissionDecision` must be \"allow\", \"deny\" or \"ask\", not {other:?}"
                )))
            }
        }
        match specific.updated_input {
            None | Some(Value::Null) => {}
            Some(v @ Value::Object(_)) => d.updated_input = Some(v),
            Some(other) => {
                return Err(bad(format!(
                    "`updatedInput` must be an object (the tool's whole input), not {other}"
                )))
            }
        }
    }
    Ok(())
}

/// PermissionRequest's `decision` object: `behavior` `allow` (with `updatedInput`) or `deny`
/// (with `message`, `interrupt`).
fn permission(v: Option<&Value>) -> Result<Option<Permission>, Failure> {
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let Value::Object(m) = v else {
        return Err(bad(format!(
            "PermissionRequest's `decision` must be an object with `behavior`, not {v}"
        )));
    };
    match m.get("behavior").and_then(Value::as_str) {
        Some("allow") => match m.get("updatedInput") {
            None | Some(Value::Null) => Ok(Some(Permission::Allow {
                updated_input: None,
            })),
            Some(u @ Value::Object(_)) => Ok(Some(Permission::Allow {
                updated_input: Some(u.clone()),
            })),
            Some(other) => Err(bad(format!(
                "`updatedInput` must be an object (the tool's whole input), not {other}"
            ))),
        },
        Some("deny") => Ok(Some(Permission::Deny {
            message: m
                .get("message")
                .and_then(Value::as_str)
                .and_then(nonempty)
                .unwrap_or_else(|| "denied by the hook".into()),
            interrupt: m.get("interrupt").and_then(Value::as_bool) == Some(true),
        })),
        other => Err(bad(format!(
            "PermissionRequest's `decision.behavior` must be \"allow\" or \"deny\", not {}",
            other.map_or("missing".to_string(), |b| format!("{b:?}"))
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ran(ending: Ending, stdout: &str, stderr: &str) -> Ran {
        Ran {
            ending,
            stdout: stdout.into(),
            stderr: stderr.into(),
            spawn_us: 1,
            total_us: 2,
        }
    }

    fn exit(code: i32, stdout: &str, stderr: &str) -> Ran {
        ran(Ending::Exited(code), stdout, stderr)
    }

    #[test]
    fn exit_two_blocks_with_stderr_where_the_event_can_be_blocked() {
        let d = decide(ClaudeEvent::PreToolUse, &exit(2, "", "no rm\n")).unwrap();
        assert_eq!(d.block.as_deref(), Some("no rm"));
        let d = decide(ClaudeEvent::SessionStart, &exit(2, "", "meh")).unwrap();
        assert_eq!(d.block, None);
        assert_eq!(d.notices, ["meh"]);
    }

    #[test]
    fn other_exit_codes_are_shown_and_let_the_action_go_on() {
        let d = decide(ClaudeEvent::PreToolUse, &exit(1, "", "lint broke")).unwrap();
        assert_eq!(d.block, None);
        assert_eq!(d.error.as_deref(), Some("exited with code 1: lint broke"));
    }

    #[test]
    fn a_hook_that_cannot_run_is_a_failure() {
        for (r, kind) in [
            (exit(127, "", "sh: nope: not found"), "not_found"),
            (exit(126, "", ""), "not_executable"),
            (ran(Ending::Signaled(9), "", ""), "killed"),
            (exit(137, "", "Killed"), "killed"),
            (
                ran(Ending::TimedOut(Duration::from_secs(1)), "", ""),
                "timeout",
            ),
            (
                ran(Ending::SpawnFailed("no sh".into()), "", ""),
                "spawn_failed",
            ),
            (exit(0, "{not json", ""), "bad_output"),
        ] {
            assert_eq!(decide(ClaudeEvent::PreToolUse, &r).unwrap_err().kind, kind);
        }
    }

    #[test]
    fn json_permission_decisions() {
        let out = |v: Value| decide(ClaudeEvent::PreToolUse, &exit(0, &v.to_string(), "")).unwrap();
        let d = out(json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "deny", "permissionDecisionReason": "secrets"}}));
        assert_eq!(d.block.as_deref(), Some("secrets"));
        let d = out(json!({"hookSpecificOutput": {"permissionDecision": "ask",
            "permissionDecisionReason": "sure?"}}));
        assert_eq!(d.ask.as_deref(), Some("sure?"));
        let d = out(json!({"hookSpecificOutput": {"permissionDecision": "allow",
            "updatedInput": {"command": "ls"}}}));
        assert_eq!(d.updated_input, Some(json!({"command": "ls"})));
        assert_eq!(d.block, None);
        let d = out(json!({"decision": "block", "reason": "old style"}));
        assert_eq!(d.block.as_deref(), Some("old style"));
        let d = out(json!({"continue": false, "stopReason": "halt", "systemMessage": "hi"}));
        assert_eq!(d.stop.as_deref(), Some("halt"));
        assert_eq!(d.notices, ["hi"]);
        assert!(decide(
            ClaudeEvent::PreToolUse,
            &exit(
                0,
                r#"{"hookSpecificOutput": {"permissionDecision": "maybe"}}"#,
                ""
            )
        )
        .is_err());
    }

    #[test]
    fn plain_stdout_is_context_only_for_prompt_and_session_start() {
        let d = decide(
            ClaudeEvent::UserPromptSubmit,
            &exit(0, "today is Monday\n", ""),
        )
        .unwrap();
        assert_eq!(d.context, ["today is Monday"]);
        let d = decide(ClaudeEvent::PostToolUse, &exit(0, "formatted", "")).unwrap();
        assert!(d.context.is_empty());
        let d = decide(
            ClaudeEvent::PostToolUse,
            &exit(
                0,
                r#"{"hookSpecificOutput": {"additionalContext": "3 warnings"}}"#,
                "",
            ),
        )
        .unwrap();
        assert_eq!(d.context, ["3 warnings"]);
    }

    #[test]
    fn permission_request_decisions() {
        let out = |v: Value| decide(ClaudeEvent::PermissionRequest, &exit(0, &v.to_string(), ""));
        let d = out(
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow", "updatedInput": {"command": "ls"}}}}),
        )
        .unwrap();
        assert_eq!(
            d.permission,
            Some(Permission::Allow {
                updated_input: Some(json!({"command": "ls"}))
            })
        );
        let d = out(
            json!({"hookSpecificOutput": {"decision": {"behavior": "deny",
            "message": "no", "interrupt": true}}}),
        )
        .unwrap();
        assert_eq!(
            d.permission,
            Some(Permission::Deny {
                message: "no".into(),
                interrupt: true
            })
        );
        assert!(out(json!({"hookSpecificOutput": {"decision": {"behavior": "maybe"}}})).is_err());
        let d = decide(ClaudeEvent::PermissionRequest, &exit(2, "", "nope")).unwrap();
        assert_eq!(
            d.permission,
            Some(Permission::Deny {
                message: "nope".into(),
                interrupt: false
            })
        );
        assert_eq!(d.block, None);
    }

    #[test]
    fn a_failure_hooks_exit_two_is_feedback() {
        let d = decide(ClaudeEvent::PostToolUseFailure, &exit(2, "", "try again")).unwrap();
        assert_eq!(d.block, None);
        assert_eq!(d.context, ["try again"]);
    }

    #[test]
    fn a_json_block_reason_wins_over_stderr_on_exit_two() {
        let d = decide(
            ClaudeEvent::Stop,
            &exit(
                2,
                r#"{"decision": "block", "reason": "tests fail"}"#,
                "noise",
            ),
        )
        .unwrap();
        assert_eq!(d.block.as_deref(), Some("tests fail"));
    }
}
