//! One Claude Code command hook as a participant in pi's own events: the runner reaches it
//! through [`Endpoint`] like a hook process, so load order, `fail` policies, shadow-free
//! enforcement, `hook_decision` / `--explain-hooks` and the latency report treat it like a
//! native hook. Each request starts the command once (`run`), with Claude Code's stdin
//! (`input`), and turns its [`Decision`](super::output::Decision) into the reply pi's event
//! expects:
//!
//! | Claude Code | pi event | what the hook can do |
//! |---|---|---|
//! | PreToolUse | `tool_call` (gate) | deny blocks; `updatedInput` patches; `ask` asks the user, blocks without one |
//! | PermissionRequest | within a PreToolUse `ask`, before the person is asked | `decision.behavior` allow (with `updatedInput`) or deny (`message`, `interrupt` ends the run) |
//! | PostToolUse | `tool_result` (chain) of a call that succeeded | `additionalContext` appended; `decision: block` replaces the result |
//! | PostToolUseFailure | `tool_result` of a failed call; a blocked call's result | feedback (`additionalContext`, exit 2's stderr) appended |
//! | UserPromptSubmit | `input` (chain) | block drops the prompt; context goes with it (`before_agent_start`) |
//! | SessionStart / SessionEnd | `session_start` / `session_shutdown` | context with the first prompt / nothing |
//! | Stop | `agent_before_settle` (boundary) | `decision: block` continues the run with the reason |
//! | SubagentStart, SubagentStop | never (pi has no subagents) | – |
//! | PreCompact | `session_before_compact` (cancelable) | block cancels the compaction |
//! | Notification | `ui_prompt_start`, `agent_settled` (notify) | nothing (side effects) |
//!
//! The environment is the model's shell's (`shellEnvironment`, no credentials) plus what the
//! hook asks for and is granted, `CLAUDE_PROJECT_DIR` and a plugin's variables (`hook_env`); a
//! managed hook gets the fixed managed environment instead.

use std::ffi::OsString;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::config::{ClaudeEvent, ClaudeSpec};
use super::hook_env;
use super::input::{self, Session};
use super::latency::Recorder;
use super::names;
use super::output::{decide, Decision, Permission};
use super::run;
use super::transcript;
use crate::agent::events::AgentEvent;
use crate::hooks::calls::HostCalls;
use crate::hooks::instance::HostContext;
use crate::hooks::protocol::FailPolicy;
use crate::hooks::runner::{Endpoint, EndpointError, Moment};
use crate::hooks::spec::{HookMode, HookSource};
use crate::tools::shell_env::ShellEnvironment;

#[path = "background.rs"]
mod background;

/// How long Claude Code waits, idle, before its `idle_prompt` notification.
pub const IDLE_AFTER: Duration = Duration::from_secs(60);

/// Claude Code stops honouring Stop blocks after this many in a row.
pub const STOP_BLOCK_CAP: u32 = 8;

/// The `custom_type` of context a Claude Code hook adds.
pub const CONTEXT_TYPE: &str = "claude_hook_context";
/// The `custom_type` of a Stop hook's reason to go on.
pub const STOP_TYPE: &str = "claude_stop_hook";

/// What the Claude Code hooks of one hook generation share.
pub struct Shared {
    calls: Arc<HostCalls>,
    events: mpsc::UnboundedSender<AgentEvent>,
    ctx: HostContext,
    shell: OnceLock<Arc<ShellEnvironment>>,
    /// Stop blocks in a row since the run last settled (`stop_hook_active` when non-zero).
    stop_blocks: AtomicU32,
    /// Notification runs still going, finished or killed at shutdown.
    background: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    transcript: transcript::Slot,
    /// The generation's hooks, for the events one hook's answer leads to (PermissionRequest
    /// within a PreToolUse `ask`). Weak: the hooks own this.
    hooks: Mutex<Vec<Weak<ClaudeHook>>>,
    /// How long pi waits, idle, before `idle_prompt` (the `messageIdleNotifThresholdMs`
    /// setting; Claude Code's 60 s by default).
    idle_after: OnceLock<Duration>,
    /// Set at shutdown: no idle notification starts any more.
    closing: std::sync::atomic::AtomicBool,
}

impl Shared {
    pub fn new(
        calls: Arc<HostCalls>,
        events: mpsc::UnboundedSender<AgentEvent>,
        ctx: HostContext,
    ) -> Arc<Self> {
        Arc::new(Shared {
            calls,
            events,
            ctx,
            shell: OnceLock::new(),
            stop_blocks: AtomicU32::new(0),
            background: Mutex::default(),
            transcript: transcript::Slot::default(),
            hooks: Mutex::default(),
            idle_after: OnceLock::new(),
            closing: Default::default(),
        })
    }

    /// The idle time before `idle_prompt`, from the settings.
    pub fn set_idle_after(&self, after: Duration) {
        let _ = self.idle_after.set(after);
    }

    fn idle_after(&self) -> Duration {
        self.idle_after.get().copied().unwrap_or(IDLE_AFTER)
    }

    fn is_closing(&self) -> bool {
        self.closing.load(Ordering::SeqCst)
    }

    /// A run not waited for (Notification, `async`), finished or killed at shutdown.
    fn keep_background(&self, task: tokio::task::JoinHandle<()>) {
        let mut bg = self.background.lock().unwrap_or_else(|p| p.into_inner());
        bg.retain(|t| !t.is_finished());
        bg.push(task);
    }

    /// Makes `hook` one of the generation's, in configuration order.
    pub fn register(&self, hook: &Arc<ClaudeHook>) {
        self.hooks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Arc::downgrade(hook));
    }

    /// The generation's hooks of `event`, in configuration order.
    pub fn hooks_of(&self, event: ClaudeEvent) -> Vec<Arc<ClaudeHook>> {
        self.hooks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|h| h.spec.event == event)
            .collect()
    }

    /// The model's shell environment policy, once the tools are built.
    pub fn attach_shell(&self, shell: Arc<ShellEnvironment>) {
        let _ = self.shell.set(shell);
    }

    /// Waits up to `grace` for Notification runs still going, then kills them.
    pub async fn finish_background(&self, grace: Duration) {
        self.closing.store(true, Ordering::SeqCst);
        let mut tasks: Vec<_> =
            std::mem::take(&mut *self.background.lock().unwrap_or_else(|p| p.into_inner()));
        let all = futures_util::future::join_all(tasks.iter_mut());
        let _ = tokio::time::timeout(grace, all).await;
        for t in tasks {
            // Dropping a run kills its process group.
            t.abort();
        }
    }

    fn session(&self) -> Session<'_> {
        Session {
            session_id: self.ctx.session_id.as_deref().unwrap_or(""),
            transcript_path: self.transcript.path(&self.ctx),
            cwd: &self.ctx.cwd,
            mode: &self.ctx.mode,
            mcp: self.calls.as_ref(),
        }
    }
}

/// One Claude Code command hook of a generation.
pub struct ClaudeHook {
    spec: ClaudeSpec,
    shared: Arc<Shared>,
    /// Context for the model, delivered with the next prompt (`before_agent_start`).
    pending: Mutex<Vec<String>>,
    /// Bumped by every Notification event: an idle wait that sees it changed ends.
    idle_epoch: std::sync::atomic::AtomicU64,
    recorder: Recorder,
}

fn error(kind: &str, message: impl Into<String>) -> EndpointError {
    EndpointError {
        kind: kind.into(),
        message: message.into(),
    }
}

impl ClaudeHook {
    pub fn new(spec: ClaudeSpec, shared: Arc<Shared>) -> Self {
        let recorder = Recorder::new(&spec);
        ClaudeHook {
            spec,
            shared,
            pending: Mutex::default(),
            idle_epoch: Default::default(),
            recorder,
        }
    }

    pub fn spec(&self) -> &ClaudeSpec {
        &self.spec
    }

    pub fn recorder(&self) -> &Recorder {
        &self.recorder
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, Vec<String>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The run's environment (`hook_env`) and pi's own variables in it.
    fn environment(&self) -> (Vec<(OsString, OsString)>, hook_env::OwnVars) {
        let shell = self.shared.shell.get().cloned();
        let home = (self.spec.source == HookSource::Managed)
            .then(|| self.shared.ctx.managed_home.path().ok())
            .flatten();
        let agent_dir = self
            .spec
            .plugin
            .as_ref()
            .and_then(|_| crate::config::agent_dir(&crate::config::SystemEnv).ok());
        let place = hook_env::RunPlace {
            project_dir: &self.shared.ctx.cwd,
            shell: shell.as_deref(),
            managed_home: home,
            agent_dir: agent_dir.as_deref(),
        };
        let parent: Vec<_> = std::env::vars_os().collect();
        let own = hook_env::own_vars(&self.spec, &place);
        (
            hook_env::environment(&self.spec, &place, &parent, &own),
            own,
        )
    }

    /// Runs the command with `stdin` and reads its decision; a hook that could not run is
    /// an error (which the runner treats under the hook's policy).
    async fn execute(&self, stdin: &Value, deadline: Duration) -> Result<Decision, EndpointError> {
        let bytes = serde_json::to_vec(stdin).unwrap_or_default();
        self.shared
            .transcript
            .sync(&self.shared.ctx, &self.shared.calls);
        let (env, own) = self.environment();
        let cwd = &self.shared.ctx.cwd;
        let ran = run::run_spec(&self.spec, cwd, env, &own, &bytes, deadline)
            .await
            .map_err(|f| error(f.kind, f.message))?;
        self.recorder.record(ran.total_us, ran.spawn_us);
        tracing::debug!(hook = %self.spec.name, ending = ?ran.ending, stdout = %ran.stdout,
                        stderr = %ran.stderr, "Claude Code hook ran");
        if let Some(f) = run::strict_failure(self.spec.strict_exit.as_ref(), &ran) {
            return Err(error(f.kind, f.message));
        }
        let d = decide(self.spec.event, &ran).map_err(|f| error(f.kind, f.message))?;
        for n in &d.notices {
            let _ = self
                .shared
                .calls
                .handle(
                    &self.spec.name,
                    "ui.notify",
                    json!({"message": n, "level": "warning"}),
                )
                .await;
        }
        if let Some(e) = &d.error {
            self.report(self.pi_event_name(), "nonblocking_error", e);
        }
        Ok(d)
    }

    /// pi's event this hook runs in, else Claude Code's name for it (in error reports).
    fn pi_event_name(&self) -> &'static str {
        self.spec
            .event
            .pi_event()
            .map_or(self.spec.event.name(), |e| e.name())
    }

    fn report(&self, event: &str, kind: &str, message: &str) {
        let _ = self.shared.events.send(AgentEvent::HookError {
            hook: self.spec.name.clone(),
            event: event.to_string(),
            kind: kind.to_string(),
            message: message.to_string(),
        });
    }

    /// `continue: false`: the run stops once this reply is in.
    fn stop_run(&self, why: &str) {
        tracing::info!(hook = %self.spec.name, reason = why, "Claude Code hook stopped the run");
        let calls = self.shared.calls.clone();
        let name = self.spec.name.clone();
        tokio::spawn(async move {
            let _ = calls.handle(&name, "agent.abort", json!({})).await;
        });
    }

    fn base(&self) -> serde_json::Map<String, Value> {
        input::base(&self.shared.session(), self.spec.event)
    }

    async fn pre_tool_use(
        &self,
        payload: Value,
        deadline: Duration,
    ) -> Result<Value, EndpointError> {
        let session = self.shared.session();
        let (claude_tool, stdin) = input::tool_event(&session, self.spec.event, &payload);
        if !self.selects(&claude_tool, &payload) {
            return Ok(Value::Null);
        }
        let d = self.execute(&stdin, deadline).await?;
        if let Some(why) = &d.stop {
            self.stop_run(why);
            return Ok(json!({"block": true, "reason": why}));
        }
        if let Some(why) = d.block {
            return Ok(json!({"block": true, "reason": why}));
        }
        let pi_tool = payload["tool_name"].as_str().unwrap_or_default();
        let mut patch = d
            .updated_input
            .as_ref()
            .and_then(|u| names::patch_for(pi_tool, &payload["input"], u, session.cwd));
        if let Some(why) = d.ask {
            match self.permission_request(&payload).await {
                Some(Permission::Deny { message, interrupt }) => {
                    return Ok(json!({"block": true, "reason": message, "terminate": interrupt}))
                }
                Some(Permission::Allow { updated_input }) => {
                    if let Some(p) = updated_input
                        .as_ref()
                        .and_then(|u| names::patch_for(pi_tool, &payload["input"], u, session.cwd))
                    {
                        patch = Some(p);
                    }
                }
                None => {
                    if let Some(block) = self
                        .ask_person(&why, &claude_tool, &payload, patch.as_ref())
                        .await
                    {
                        return Ok(block);
                    }
                }
            }
        }
        Ok(match patch {
            Some(p) => json!({"patch": p}),
            None => Value::Null,
        })
    }

    /// PreToolUse's `ask` with no PermissionRequest answer: the person decides; the block
    /// reply when they decline or no one can be asked.
    async fn ask_person(
        &self,
        why: &str,
        claude_tool: &str,
        payload: &Value,
        patch: Option<&Value>,
    ) -> Option<Value> {
        if !self.shared.calls.can_ask() {
            return Some(json!({"block": true, "reason": format!(
                "it asks for confirmation ({why}), but no one can be asked here (this mode has no interactive UI), so the call is blocked"
            )}));
        }
        let message = super::ask::message(why, claude_tool, &payload["input"], patch);
        let asked = self
            .shared
            .calls
            .handle(
                &self.spec.name,
                "ui.confirm",
                json!({"title": format!("Allow {claude_tool}? ({})", self.spec.name), "message": message}),
            )
            .await;
        match asked {
            Ok(v) if v["confirmed"] == Value::Bool(true) => None,
            Ok(_) => Some(json!({"block": true, "reason": format!("the user declined: {why}")})),
            Err(e) => Some(json!({"block": true, "reason": format!(
                "it asks for confirmation ({why}), but no one can be asked here ({}), so the call is blocked",
                e.message
            )})),
        }
    }

    /// PermissionRequest, where a PreToolUse hook asked for the person: the hooks of the
    /// generation that match the tool, in configuration order, answer first. A deny wins at
    /// once; otherwise the first allow; `None` when none decided (the person is asked). A
    /// hook that fails is reported and decides nothing, so the person is asked.
    async fn permission_request(&self, payload: &Value) -> Option<Permission> {
        let mut allowed = None;
        for h in self.shared.hooks_of(ClaudeEvent::PermissionRequest) {
            let (claude_tool, stdin) =
                input::tool_event(&h.shared.session(), ClaudeEvent::PermissionRequest, payload);
            if !h.selects(&claude_tool, payload) {
                continue;
            }
            match h.execute(&stdin, h.spec.timeout).await {
                Ok(d) => match d.permission {
                    Some(deny @ Permission::Deny { .. }) => return Some(deny),
                    Some(allow) => {
                        allowed.get_or_insert(allow);
                    }
                    None => {}
                },
                Err(e) => h.report("tool_call", &e.kind, &e.message),
            }
        }
        allowed
    }

    /// PostToolUseFailure for a call the gate blocked: the feedback for the model.
    async fn after_block(&self, payload: &Value) -> Vec<String> {
        if self.spec.event != ClaudeEvent::PostToolUseFailure {
            return Vec::new();
        }
        let mut failed = payload.clone();
        failed["content"] = json!([{"type": "text", "text": payload["reason"]}]);
        failed["is_error"] = json!(true);
        let (claude_tool, stdin) =
            input::tool_event(&self.shared.session(), self.spec.event, &failed);
        if !self.selects(&claude_tool, payload) {
            return Vec::new();
        }
        match self.execute(&stdin, self.spec.timeout).await {
            Ok(d) => d.context,
            Err(e) => {
                self.report("tool_call", &e.kind, &e.message);
                Vec::new()
            }
        }
    }

    /// PostToolUse for a call that succeeded, PostToolUseFailure for one that failed.
    async fn post_tool_use(
        &self,
        payload: Value,
        deadline: Duration,
    ) -> Result<Value, EndpointError> {
        let failed = payload["is_error"].as_bool().unwrap_or(false);
        if failed != (self.spec.event == ClaudeEvent::PostToolUseFailure) {
            return Ok(Value::Null);
        }
        let (claude_tool, stdin) =
            input::tool_event(&self.shared.session(), self.spec.event, &payload);
        if !self.selects(&claude_tool, &payload) {
            return Ok(Value::Null);
        }
        let d = self.execute(&stdin, deadline).await?;
        let text = |t: &str| json!({"type": "text", "text": t});
        let mut content: Vec<Value> = payload["content"].as_array().cloned().unwrap_or_default();
        let mut is_error = None;
        let mut changed = false;
        if let Some(why) = &d.block {
            content = vec![text(why)];
            is_error = Some(true);
            changed = true;
        }
        for c in &d.context {
            content.push(text(c));
            changed = true;
        }
        if let Some(why) = &d.stop {
            self.stop_run(why);
            content.push(text(&format!("Stopped by {}: {why}", self.spec.name)));
            changed = true;
        }
        if !changed {
            return Ok(Value::Null);
        }
        let mut reply = json!({"content": content});
        if let Some(e) = is_error {
            reply["is_error"] = json!(e);
        }
        Ok(reply)
    }

    async fn prompt_submit(
        &self,
        payload: Value,
        deadline: Duration,
    ) -> Result<Value, EndpointError> {
        // A new prompt: context for an earlier one that never reached the model is dropped.
        self.pending().clear();
        let mut stdin = self.base();
        stdin.insert("prompt".into(), payload["text"].clone());
        let d = self.execute(&Value::Object(stdin), deadline).await?;
        if let Some(why) = d.stop.as_ref().or(d.block.as_ref()) {
            let _ = self
                .shared
                .calls
                .handle(
                    &self.spec.name,
                    "ui.notify",
                    json!({"message": format!("prompt blocked: {why}"), "level": "warning"}),
                )
                .await;
            return Ok(json!({"action": "handled"}));
        }
        self.pending().extend(d.context);
        Ok(Value::Null)
    }

    fn deliver_context(&self) -> Value {
        let pending = std::mem::take(&mut *self.pending());
        if pending.is_empty() {
            return Value::Null;
        }
        json!({"message": {"custom_type": CONTEXT_TYPE, "content": pending.join("\n\n"),
                           "display": true, "details": {"hook": self.spec.name}}})
    }

    async fn session_start(
        &self,
        payload: Value,
        deadline: Duration,
    ) -> Result<Value, EndpointError> {
        let mut stdin = self.base();
        let source = input::session_source(payload["reason"].as_str().unwrap_or("startup"));
        stdin.insert("source".into(), json!(source));
        if !self.spec.matcher.matches(source) {
            return Ok(Value::Null);
        }
        let d = self.execute(&Value::Object(stdin), deadline).await?;
        self.pending().extend(d.context);
        Ok(Value::Null)
    }

    async fn session_end(
        &self,
        payload: Value,
        deadline: Duration,
    ) -> Result<Value, EndpointError> {
        let mut stdin = self.base();
        let reason = input::session_end_reason(
            payload["reason"].as_str().unwrap_or("other"),
            &self.shared.ctx.mode,
        );
        stdin.insert("reason".into(), json!(reason));
        if self.spec.matcher.matches(reason) {
            self.execute(&Value::Object(stdin), deadline).await?;
        }
        Ok(Value::Null)
    }

    async fn stop(&self, deadline: Duration) -> Result<Value, EndpointError> {
        let mut stdin = self.base();
        let active = self.shared.stop_blocks.load(Ordering::SeqCst) > 0;
        stdin.insert("stop_hook_active".into(), json!(active));
        let d = self.execute(&Value::Object(stdin), deadline).await?;
        if d.stop.is_some() {
            return Ok(json!({"continue": false}));
        }
        let Some(why) = d.block else {
            return Ok(Value::Null);
        };
        let n = self.shared.stop_blocks.fetch_add(1, Ordering::SeqCst) + 1;
        if n > STOP_BLOCK_CAP {
            self.report(
                "agent_before_settle",
                "stop_block_cap",
                &format!(
                    "{STOP_BLOCK_CAP} Stop blocks in a row; this one is not honoured and the run ends (as Claude Code does)"
                ),
            );
            return Ok(Value::Null);
        }
        Ok(
            json!({"continue": true, "messages": [{"custom_type": STOP_TYPE, "content": why,
                  "display": true, "details": {"hook": self.spec.name}}]}),
        )
    }

    async fn pre_compact(
        &self,
        payload: Value,
        deadline: Duration,
    ) -> Result<Value, EndpointError> {
        let mut stdin = self.base();
        let trigger = input::compact_trigger(payload["reason"].as_str().unwrap_or(""));
        stdin.insert("trigger".into(), json!(trigger));
        let instructions = payload["custom_instructions"].as_str().unwrap_or("");
        stdin.insert("custom_instructions".into(), json!(instructions));
        if !self.spec.matcher.matches(trigger) {
            return Ok(Value::Null);
        }
        let d = self.execute(&Value::Object(stdin), deadline).await?;
        Ok(if d.block.is_some() || d.stop.is_some() {
            json!({"cancel": true})
        } else {
            Value::Null
        })
    }

    /// The Claude Code event a [`Moment`] is.
    fn moment_event(moment: Moment) -> ClaudeEvent {
        match moment {
            Moment::NothingToCompact => ClaudeEvent::PreCompact,
            Moment::InstructionsLoaded => ClaudeEvent::InstructionsLoaded,
            Moment::Setup => ClaudeEvent::Setup,
            Moment::ConfigChange => ClaudeEvent::ConfigChange,
        }
    }

    /// A moment pi has no event for: `payload` holds the event's own stdin fields. A block
    /// stops what was about to happen (where Claude Code lets it: not a change to the
    /// managed policy's settings); context goes with the next prompt.
    async fn at_moment(&self, payload: &Value) -> Result<Option<String>, EndpointError> {
        let mut stdin = self.base();
        if let Value::Object(fields) = payload {
            stdin.extend(fields.clone());
        }
        let stdin = Value::Object(stdin);
        if let Some(subject) = input::matcher_subject(self.spec.event, &stdin) {
            if !self.spec.matcher.matches(&subject) {
                return Ok(None);
            }
        }
        let d = self.execute(&stdin, self.spec.timeout).await?;
        self.pending().extend(d.context);
        let unblockable =
            self.spec.event == ClaudeEvent::ConfigChange && stdin["source"] == "policy_settings";
        Ok(d.block.or(d.stop).filter(|_| !unblockable))
    }

    /// A Notification run for pi's notify `event`, if this one is one.
    fn notification(&self, event: &str, payload: &Value) -> Option<Value> {
        let (message, kind) = match event {
            "ui_prompt_start" => {
                let kind = if payload["kind"] == "confirm" {
                    "permission_prompt"
                } else {
                    "elicitation_dialog"
                };
                let title = payload["title"].as_str().unwrap_or("pi needs your input");
                (title.to_string(), kind)
            }
            "agent_settled" => ("pi is waiting for your input".to_string(), "idle_prompt"),
            _ => return None,
        };
        if !self.spec.matcher.matches(kind) {
            return None;
        }
        let mut stdin = self.base();
        stdin.insert("message".into(), json!(message));
        stdin.insert("notification_type".into(), json!(kind));
        Some(Value::Object(stdin))
    }

    /// Whether this tool hook's matcher selects the call: by its Claude Code name, or by
    /// pi's own name where the two differ (an MCP tool whose server's name had a hyphen), so
    /// the check here agrees with [`Self::runs_at`].
    fn selects(&self, claude_tool: &str, payload: &Value) -> bool {
        let pi_tool = payload["tool_name"].as_str().unwrap_or_default();
        self.spec.matcher.matches(claude_tool)
            || (pi_tool.starts_with("mcp__")
                && pi_tool != claude_tool
                && self.spec.matcher.matches(pi_tool))
    }

    /// Whether this hook runs at pi's `event` (tool events: for `tool`).
    fn runs_at(&self, event: &str, tool: Option<&str>) -> bool {
        let e = self.spec.event;
        let tool_event = matches!(
            e,
            ClaudeEvent::PreToolUse | ClaudeEvent::PostToolUse | ClaudeEvent::PostToolUseFailure
        );
        if e.pi_event().is_some_and(|p| p.name() == event) {
            return match (tool_event, tool) {
                (true, Some(t)) => names::matchable_names(t, self.shared.calls.as_ref())
                    .iter()
                    .any(|n| self.spec.matcher.matches(n)),
                (true, None) => false,
                _ => true,
            };
        }
        match event {
            // Context this hook owes the model goes with the next prompt.
            "before_agent_start" => !self.pending().is_empty(),
            // The run settled: Stop blocks no longer count as "in a row"; someone waits.
            // A run starting ends the wait for `idle_prompt`.
            "agent_start" => {
                e == ClaudeEvent::Notification
                    && matches!(self.shared.ctx.mode.as_str(), "interactive" | "rpc")
            }
            "agent_settled" => match e {
                ClaudeEvent::Stop => true,
                ClaudeEvent::Notification => {
                    matches!(self.shared.ctx.mode.as_str(), "interactive" | "rpc")
                }
                _ => false,
            },
            _ => false,
        }
    }
}

#[async_trait]
impl Endpoint for Arc<ClaudeHook> {
    fn name(&self) -> String {
        self.spec.name.clone()
    }

    fn wants(&self, event: &str, tool: Option<&str>) -> Option<Duration> {
        self.runs_at(event, tool).then_some(self.spec.timeout)
    }

    fn fail_policy(&self) -> FailPolicy {
        if self.spec.source == HookSource::Managed {
            return FailPolicy::Closed;
        }
        self.spec.fail.unwrap_or_default()
    }

    fn mode(&self) -> HookMode {
        HookMode::Enforce
    }

    fn required(&self) -> bool {
        self.spec.source == HookSource::Managed
    }

    async fn request(
        &self,
        event: &str,
        payload: Value,
        deadline: Duration,
    ) -> Result<Value, EndpointError> {
        if self.spec.background && event != "before_agent_start" {
            self.start_background(event, &payload);
            return Ok(Value::Null);
        }
        match event {
            "tool_call" => self.pre_tool_use(payload, deadline).await,
            "tool_result" => self.post_tool_use(payload, deadline).await,
            "input" => self.prompt_submit(payload, deadline).await,
            "before_agent_start" => Ok(self.deliver_context()),
            "session_start" => self.session_start(payload, deadline).await,
            "session_shutdown" => self.session_end(payload, deadline).await,
            "agent_before_settle" => self.stop(deadline).await,
            "session_before_compact" => self.pre_compact(payload, deadline).await,
            _ => Ok(Value::Null),
        }
    }

    async fn blocked(&self, payload: &Value) -> Vec<String> {
        self.after_block(payload).await
    }

    fn at(&self, moment: Moment) -> bool {
        ClaudeHook::moment_event(moment) == self.spec.event
    }

    async fn moment(
        &self,
        moment: Moment,
        payload: &Value,
    ) -> Result<Option<String>, EndpointError> {
        if !self.at(moment) {
            return Ok(None);
        }
        self.at_moment(payload).await
    }

    fn notify(&self, event: &str, payload: Value) {
        if event == "agent_settled" && self.spec.event == ClaudeEvent::Stop {
            self.shared.stop_blocks.store(0, Ordering::SeqCst);
            return;
        }
        if self.spec.event != ClaudeEvent::Notification {
            return;
        }
        // Whatever happens next ends the wait for an idle notification.
        let epoch = self.idle_epoch.fetch_add(1, Ordering::SeqCst) + 1;
        let Some(stdin) = self.notification(event, &payload) else {
            return;
        };
        let me = self.clone();
        let event = event.to_string();
        if event == "agent_settled" {
            // `idle_prompt` comes after the idle time (Claude Code's 60 s,
            // `messageIdleNotifThresholdMs`), unless a run starts first or pi is closing.
            tokio::spawn(async move {
                tokio::time::sleep(me.shared.idle_after()).await;
                if me.idle_epoch.load(Ordering::SeqCst) != epoch || me.shared.is_closing() {
                    return;
                }
                let shared = me.shared.clone();
                let task = tokio::spawn(async move {
                    if let Err(e) = me.execute(&stdin, me.spec.timeout).await {
                        me.report(&event, &e.kind, &e.message);
                    }
                });
                shared.keep_background(task);
            });
            return;
        }
        let task = tokio::spawn(async move {
            if let Err(e) = me.execute(&stdin, me.spec.timeout).await {
                me.report(&event, &e.kind, &e.message);
            }
        });
        self.shared.keep_background(task);
    }
}
