//! Claude Code command hooks as a replay decision source (`pi hook replay --claude-hooks
//! FILE`): the hooks of an unmodified `settings.json`, run through the host's own gate — the
//! same runner, ordering, name mapping and failure policy a session uses — for each recorded
//! call. A hook that fails under a closed policy is therefore reported as the block the host
//! would have made, with the host's reason. PermissionRequest hooks answer a PreToolUse `ask`
//! here as in a session (no one is asked in a replay: without their answer the call is
//! blocked, as in print mode), and a block carries PostToolUseFailure's `feedback`. The
//! other new events are not about a recorded call and are not replayed: SubagentStart and
//! SubagentStop never fire; Setup, InstructionsLoaded, ConfigChange and Notification are
//! about start-up, files and the terminal; PostToolUse and PostToolUseFailure on a call that
//! ran would need its result run again.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use super::calls::RecordedCall;
use super::source::{Decision, DecisionSource, Outcome};
use crate::hooks::calls::HostCalls;
use crate::hooks::claude::{config, ClaudeSet};
use crate::hooks::events::GateEvent;
use crate::hooks::instance::HostContext;
use crate::hooks::runner::{GateVerdict, Runner};
use crate::hooks::spec::HookSource;

/// The Claude Code hooks of some settings files, in file order.
pub struct ClaudeHooks {
    name: String,
    set: ClaudeSet,
    runner: Runner,
}

impl ClaudeHooks {
    /// Reads the `hooks` object of each file (a warning for each entry pi skips goes to
    /// `warnings`).
    pub fn load(
        files: &[PathBuf],
        cwd: &Path,
        warnings: &mut Vec<String>,
    ) -> Result<ClaudeHooks, config::ClaudeConfigError> {
        let calls = Arc::new(HostCalls::new("print", cwd.to_path_buf()));
        let (tx, _rx) = mpsc::unbounded_channel();
        let mut set = ClaudeSet::new(calls, tx, HostContext::new(cwd.to_path_buf(), "print"));
        for f in files {
            let (specs, w) = config::from_file(f, HookSource::Cli)?;
            warnings.extend(w);
            set.add(specs, &[]);
        }
        set.attach_shell(Arc::new(Default::default()));
        let endpoints = set.endpoints().into_iter().map(|(_, e)| e).collect();
        let name = files
            .iter()
            .map(|f| format!("--claude-hooks {}", f.display()))
            .collect::<Vec<_>>()
            .join(" ");
        Ok(ClaudeHooks {
            name,
            set,
            runner: Runner::new(endpoints, None),
        })
    }
}

#[async_trait]
impl DecisionSource for ClaudeHooks {
    fn name(&self) -> String {
        self.name.clone()
    }

    async fn decide(&self, call: &RecordedCall) -> Decision {
        if !self.runner.any_wants(GateEvent::ToolCall, Some(&call.tool)) {
            return Decision::new(Outcome::NotAsked, 0);
        }
        let t0 = Instant::now();
        // A patch is judged, not run: the arguments are not validated again here.
        let verdict = self
            .runner
            .gate(&call.call_id, &call.tool, call.input.clone(), &|_| Ok(()))
            .await;
        let us = u64::try_from(t0.elapsed().as_micros()).unwrap_or(u64::MAX);
        match verdict {
            GateVerdict::Block { reason, .. } => {
                let mut d = Decision::new(Outcome::Block, us);
                // What the live run appends to the blocked call's result.
                d.feedback = self
                    .runner
                    .blocked_feedback(&call.call_id, &call.tool, &call.input, &reason)
                    .await;
                d.reason = Some(reason);
                d
            }
            GateVerdict::Allow { input, .. } if input != call.input => {
                let mut d = Decision::new(Outcome::Patch, us);
                d.patch = Some(merge_diff(&call.input, &input));
                d
            }
            GateVerdict::Allow { .. } => Decision::new(Outcome::Allow, us),
        }
    }

    async fn close(&self) {
        self.set.shutdown().await;
    }
}

/// The RFC 7386 merge patch that turns `from` into `to` (the shape a native hook's patch
/// has), so the two kinds of hook compare in one report.
fn merge_diff(from: &Value, to: &Value) -> Value {
    match (from, to) {
        (Value::Object(a), Value::Object(b)) => {
            let mut out = Map::new();
            for (k, old) in a {
                match b.get(k) {
                    None => {
                        out.insert(k.clone(), Value::Null);
                    }
                    Some(new) if new != old => {
                        out.insert(k.clone(), merge_diff(old, new));
                    }
                    Some(_) => {}
                }
            }
            for (k, new) in b {
                if !a.contains_key(k) {
                    out.insert(k.clone(), new.clone());
                }
            }
            Value::Object(out)
        }
        _ => to.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_diff_is_a_merge_patch_that_gives_the_new_arguments() {
        let from = json!({"command": "rm -rf /", "timeout": 5, "keep": {"a": 1, "b": 2}});
        let to = json!({"command": "echo no", "keep": {"a": 1}, "added": true});
        let patch = merge_diff(&from, &to);
        assert_eq!(
            patch,
            json!({"command": "echo no", "timeout": null, "keep": {"b": null}, "added": true})
        );
        let mut applied = from.clone();
        json_patch::merge(&mut applied, &patch);
        assert_eq!(applied, to);
    }
}
