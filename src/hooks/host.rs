//! The loaded set of hooks for one run: starting them in load order, adapting each process to
//! the runner's [`Endpoint`], turning registered tools into [`Tool`]s, forwarding the
//! processes' notices into the event stream, and stopping them all.

use std::sync::{Arc, Weak};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use tokio::sync::mpsc;

use super::calls::{methods, HostCalls};
use super::instance::{
    CallHandler, HookErrorKind, HookInstance, HookState, HostContext, Notice, StartError,
};
use super::protocol::{CallError, FailPolicy, HostCapabilities, ToolDecl};
use super::runner::{Endpoint, EndpointError};
use super::spec::{HookMode, HookSource, HookSpec, RequiredHookFailure};
use super::ui::{HeadlessUi, HookUi};
use crate::agent::events::AgentEvent;
use crate::message::Content;
use crate::tools::{Tool, ToolContext, ToolError, ToolOutput};

#[async_trait]
impl CallHandler for HostCalls {
    async fn call(&self, hook: &str, method: &str, params: Value) -> Result<Value, CallError> {
        self.handle(hook, method, params).await
    }
}

/// What the host offers hooks in a given mode: print and json mode have no UI but stderr;
/// the other modes serve every `ui.*` call (RPC through its client), but for `ui.set_theme`
/// in RPC mode, where the client draws.
pub fn capabilities(mode: &str) -> HostCapabilities {
    if matches!(mode, "print" | "json") {
        capabilities_for(HeadlessUi::new(mode).as_ref())
    } else {
        HostCapabilities {
            ui: super::protocol::UiCapabilities {
                set_theme: mode != "rpc",
                ..super::ui::serves_all()
            },
            methods: methods().map(str::to_string).collect(),
        }
    }
}

/// What the host offers hooks whose `ui.*` calls `ui` serves.
pub fn capabilities_for(ui: &dyn HookUi) -> HostCapabilities {
    HostCapabilities {
        ui: ui.served(),
        methods: methods().map(str::to_string).collect(),
    }
}

/// "policy degraded: managed hook X is not running: WHY": the one sentence users see whenever a
/// required hook is down, at start-up and on every refused tool call.
pub fn policy_degraded(spec: &HookSpec, name: &str, why: &str) -> String {
    let class = if spec.source == HookSource::Managed {
        "managed"
    } else {
        "required"
    };
    format!("policy degraded: {class} hook {name} is not running: {why}")
}

/// One running hook as the runner's endpoint.
pub struct InstanceEndpoint(pub Arc<HookInstance>);

#[async_trait]
impl Endpoint for InstanceEndpoint {
    fn name(&self) -> String {
        self.0.name()
    }

    fn wants(&self, event: &str, tool: Option<&str>) -> Option<Duration> {
        // Compiled (and capped) when the hook registered; see `hooks::registration`.
        self.0.subscriptions().wants(event, tool)
    }

    fn fail_policy(&self) -> FailPolicy {
        let spec = self.0.spec();
        if spec.required {
            // A required hook's outage is never "open", whatever its entry or register says.
            return FailPolicy::Closed;
        }
        spec.fail.or(self.0.registration().fail).unwrap_or_default()
    }

    fn mode(&self) -> HookMode {
        self.0.spec().mode
    }

    fn required(&self) -> bool {
        self.0.spec().required
    }

    fn required_down(&self) -> Option<String> {
        let spec = self.0.spec();
        if !spec.required {
            return None;
        }
        let state = self.0.state();
        if state == HookState::Running {
            return None;
        }
        let why = match self.0.last_error() {
            Some(e) => format!("{e} ({state})"),
            None => state.to_string(),
        };
        Some(policy_degraded(spec, &self.0.name(), &why))
    }

    fn start_failed(&self) -> Option<String> {
        let closed = self.fail_policy() == FailPolicy::Closed;
        if self.0.spec().required || !self.0.never_started() || !closed {
            return None;
        }
        Some(
            self.0
                .last_error()
                .unwrap_or_else(|| "it did not start".to_string()),
        )
    }

    async fn request(
        &self,
        event: &str,
        payload: Value,
        deadline: Duration,
    ) -> Result<Value, EndpointError> {
        self.0
            .request(event, payload, deadline)
            .await
            .map_err(|e| EndpointError {
                kind: e.kind_str().to_string(),
                message: e.to_string(),
            })
    }

    fn notify(&self, event: &str, payload: Value) {
        self.0.notify(event, payload);
    }
}

/// A tool a hook registered; calls become `tool_execute` requests to that hook.
///
/// It holds the hook weakly: the hook's call handler holds the tool registry, so a strong
/// reference here would be a cycle that keeps every hook (and the event stream) alive forever.
pub struct HookTool {
    decl: ToolDecl,
    hook: Weak<HookInstance>,
    /// The output schema's validator, compiled on the first result that needs it.
    output: std::sync::OnceLock<Option<Arc<jsonschema::Validator>>>,
}

impl HookTool {
    pub fn new(decl: ToolDecl, hook: &Arc<HookInstance>) -> Self {
        HookTool {
            decl,
            hook: Arc::downgrade(hook),
            output: std::sync::OnceLock::new(),
        }
    }

    /// Whether `structured` fits the declared output schema; the error says where it does not.
    fn check_structured(&self, structured: &Value) -> Result<(), String> {
        let Some(schema) = &self.decl.output_schema else {
            return Ok(());
        };
        let v = self
            .output
            .get_or_init(|| crate::tools::compile_schema(schema).ok().map(Arc::new));
        let Some(v) = v else {
            return Ok(());
        };
        let problems: Vec<String> = v
            .iter_errors(structured)
            .map(|e| {
                let path = e.instance_path().to_string();
                format!("{}: {e}", if path.is_empty() { "root" } else { &path })
            })
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }

    /// The `tool_execute` reply's result as the tool's output.
    fn output_of(&self, hook: &str, v: &Value) -> Result<(ToolOutput, bool), ToolError> {
        let structured = v
            .get("structured_content")
            .filter(|s| !s.is_null())
            .cloned();
        if let Some(s) = &structured {
            self.check_structured(s).map_err(|why| {
                ToolError::Failed(format!(
                    "hook {hook}'s tool {} returned structured_content that does not match its \
                     output_schema: {why}",
                    self.decl.name
                ))
            })?;
        }
        let usage = match v.get("usage").filter(|u| !u.is_null()) {
            Some(u) => Some(serde_json::from_value(u.clone()).map_err(|e| {
                ToolError::Failed(format!(
                    "hook {hook}'s tool {} returned a usage that is not pi's usage shape: {e}",
                    self.decl.name
                ))
            })?),
            None => None,
        };
        let out = ToolOutput {
            content: content_of(v.get("content").unwrap_or(&Value::Null)),
            details: v.get("details").filter(|d| !d.is_null()).cloned(),
            structured_content: structured,
            usage,
            terminate: v.get("terminate").and_then(Value::as_bool).unwrap_or(false),
        };
        Ok((
            out,
            v.get("is_error").and_then(Value::as_bool).unwrap_or(false),
        ))
    }
}

fn progress_output(p: super::protocol::Progress) -> ToolOutput {
    ToolOutput {
        content: p
            .content
            .iter()
            .filter_map(|c| serde_json::from_value(c.clone()).ok())
            .collect(),
        details: p.details,
        ..Default::default()
    }
}

fn content_of(v: &Value) -> Vec<Content> {
    v.as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| serde_json::from_value::<Content>(i.clone()).ok())
                .collect()
        })
        .unwrap_or_default()
}

#[async_trait]
impl Tool for HookTool {
    fn name(&self) -> &str {
        &self.decl.name
    }
    fn description(&self) -> &str {
        &self.decl.description
    }
    fn parameters(&self) -> Value {
        self.decl.parameters.clone()
    }
    fn prompt_snippet(&self) -> Option<String> {
        self.decl.prompt_snippet.clone()
    }
    fn prompt_guidelines(&self) -> Vec<String> {
        self.decl.prompt_guidelines.clone()
    }
    fn sequential(&self) -> bool {
        self.decl.sequential
    }
    fn exposure(&self) -> crate::tools::Exposure {
        crate::tools::Exposure::declared(self.decl.exposure.as_deref())
    }
    fn output_schema(&self) -> Option<Value> {
        self.decl.output_schema.clone()
    }

    async fn execute(
        &self,
        call_id: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let Some(hook) = self.hook.upgrade() else {
            return Err(ToolError::Failed(format!(
                "the hook that provides {} has stopped",
                self.decl.name
            )));
        };
        let (tx, mut rx) = mpsc::unbounded_channel();
        let run = hook.execute_tool(&self.decl.name, call_id, args, ctx.cancel.clone(), tx);
        tokio::pin!(run);
        let result = loop {
            tokio::select! {
                r = &mut run => break r,
                Some(p) = rx.recv() => ctx.send_update(progress_output(p)),
            }
        };
        // Progress sent just before the reply is still owed to the user.
        while let Ok(p) = rx.try_recv() {
            ctx.send_update(progress_output(p));
        }
        match result {
            Ok(v) => match self.output_of(&hook.name(), &v)? {
                (out, true) => Err(ToolError::FailedWithOutput(Box::new(out))),
                (out, false) => Ok(out),
            },
            Err(super::instance::RequestError::Cancelled { .. }) => Err(ToolError::Aborted),
            Err(e) => Err(ToolError::Failed(e.to_string())),
        }
    }
}

/// Forward process notices into the event stream (and logs).
pub fn forward_notices(
    mut rx: mpsc::UnboundedReceiver<Notice>,
    events: mpsc::UnboundedSender<AgentEvent>,
) {
    tokio::spawn(async move {
        while let Some(n) = rx.recv().await {
            let ev = match n {
                Notice::Error {
                    hook,
                    kind,
                    message,
                } => AgentEvent::HookError {
                    hook,
                    event: "process".into(),
                    kind: kind.as_str().to_string(),
                    message,
                },
                Notice::State { hook, state } => {
                    // Starting/Running on a normal start-up are noise; the interesting states are
                    // restarts, quarantine ("policy degraded") and unexpected stops.
                    if matches!(
                        state,
                        HookState::Starting | HookState::Running | HookState::Stopped
                    ) {
                        tracing::debug!(hook = %hook, state = %state, "hook state");
                        continue;
                    }
                    let detail = (state == HookState::Quarantined).then(|| {
                        "policy degraded: it will not be restarted in this session (see the error before); its gates fail closed".to_string()
                    });
                    AgentEvent::HookState {
                        hook,
                        state: state.as_str().into(),
                        detail,
                    }
                }
                // Already written to the log where the frame was read (rate-limited there);
                // logging it again here printed every line twice.
                Notice::Log { .. } => continue,
            };
            if events.send(ev).is_err() {
                break;
            }
        }
    });
}

/// Start every hook, in load order. Start-ups run concurrently; the order of the result is the
/// order of `specs`. Which hook that cannot start stops pi follows the seeds: only one the
/// user named just now (`--hook`) and a required hook under `requiredHookFailure: "exit"`
/// (a [`StartError::Required`]) are errors. Otherwise the failure is reported (a warning and
/// a `hook_error`) and the rest load:
/// - a required hook under `"block-tools"` joins the result as a quarantined instance (so
///   every tool call is refused while it is listed);
/// - an ordinary hook whose policy fails closed joins it the same way: it never registered
///   what it would gate, so its gates are every tool call, refused while pi runs;
/// - an ordinary hook whose policy is open is skipped.
///
/// On error every hook that did start is stopped again.
pub async fn start_all(
    specs: Vec<HookSpec>,
    ctx: HostContext,
    calls: Arc<HostCalls>,
    notices: mpsc::UnboundedSender<Notice>,
) -> Result<(Vec<Arc<HookInstance>>, Vec<String>), StartError> {
    let starts = specs.into_iter().map(|spec| {
        let ctx = ctx.clone();
        let calls: Arc<dyn CallHandler> = calls.clone();
        let notices = notices.clone();
        async move {
            // The spec is kept to describe a failure; cloning it costs nothing next to a spawn.
            let e = match HookInstance::start(
                spec.clone(),
                ctx.clone(),
                calls.clone(),
                notices.clone(),
            )
            .await
            {
                Ok(h) => return Ok((Some(h), None)),
                Err(e) => e,
            };
            if spec.required {
                let reason = policy_degraded(&spec, &spec.name, &e.to_string());
                if spec.on_required_failure == RequiredHookFailure::Exit {
                    return Err(StartError::Required {
                        reason,
                        source: Box::new(e),
                    });
                }
                let warning = format!("{reason}; every tool call will be refused");
                let failed = HookInstance::failed(spec, ctx, calls, notices, &e);
                Ok((Some(failed), Some(warning)))
            } else if spec.source == HookSource::Cli {
                Err(e)
            } else {
                let _ = notices.send(Notice::Error {
                    hook: spec.name.clone(),
                    kind: HookErrorKind::StartFailed,
                    message: e.to_string(),
                });
                if spec.fail == Some(FailPolicy::Open) {
                    let warning = format!("{e} (skipped: its entry says fail: \"open\")");
                    Ok((None, Some(warning)))
                } else {
                    let warning = format!(
                        "{e}; the other hooks run, but its policy fails closed, so every tool \
                         call is refused while pi runs (fail: \"open\" in its entry lets them run)"
                    );
                    let failed = HookInstance::failed(spec, ctx, calls, notices, &e);
                    Ok((Some(failed), Some(warning)))
                }
            }
        }
    });
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    let mut failure = None;
    for r in futures_util::future::join_all(starts).await {
        match r {
            Ok((h, w)) => {
                out.extend(h);
                warnings.extend(w);
            }
            Err(e) => {
                failure.get_or_insert(e);
            }
        }
    }
    if let Some(e) = failure {
        shutdown_all(&out, "startup failed").await;
        return Err(e);
    }
    Ok((out, warnings))
}

/// Stop every hook (in reverse load order, concurrently).
pub async fn shutdown_all(hooks: &[Arc<HookInstance>], reason: &str) {
    futures_util::future::join_all(hooks.iter().rev().map(|h| h.shutdown(reason))).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headless_modes_offer_no_dialogs() {
        let c = capabilities("print");
        assert!(c.ui.notify && !c.ui.confirm && !c.ui.input && !c.ui.editor);
        assert!(!c.ui.set_status && !c.ui.set_widget && !c.ui.set_title);
        assert!(c.methods.iter().any(|m| m == "tools.execute"));
    }

    #[test]
    fn rpc_mode_offers_every_ui_call() {
        let c = capabilities("rpc");
        let all_but_theme = crate::hooks::protocol::UiCapabilities {
            set_theme: false,
            ..crate::hooks::ui::serves_all()
        };
        assert_eq!(c.ui, all_but_theme);
        assert!(capabilities("interactive").ui.set_theme);
        for m in crate::hooks::ui::UI_METHODS {
            assert!(c.methods.iter().any(|x| x == m), "{m}");
        }
    }
}
