//! The `tools.*` host calls: which tools the model is offered (`tools.list_active`,
//! `tools.set_active`), tools a hook adds or drops while pi runs (`tools.register`,
//! `tools.unregister`: the shared dynamic layer, live from the next model request), nested
//! calls (`tools.execute`, through the very pipeline the model's calls take, reported with
//! `parentToolCallId`), and the file locks hooks share with the built-in `edit` and `write`
//! (`tools.with_file_lock`, `tools.release_file_lock`).
//!
//! Who may reach a tool follows its exposure (`tools::Exposure`): a nested call may run a
//! `direct` tool while the model is offered it and a `deferred` one always, never a
//! `model-only` or `hidden` one.
//!
//! A file lock never outlives its purpose: it is released by `tools.release_file_lock`, when
//! its `timeout_ms` passes (at most [`MAX_LOCK`]), or when the hook's process ends, whichever
//! comes first. While a hook holds a file, the tools it runs through `tools.execute` re-enter
//! that lock instead of waiting on their own caller; any other `edit` or `write` waiting on it
//! (the model's, or another hook's nested one) stops waiting the moment its run is aborted.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};

use super::bridge::HookBridge;
use super::budget::{self, json_size, TooLarge};
use super::calls::{err, str_param, HostCalls, MAX_NESTING};
use super::host::HookTool;
use super::instance::{call_scope, nesting_depth};
use super::protocol::{CallError, ToolDecl};
use crate::agent::events::AgentEvent;
use crate::agent::hooks::AgentHooks;
use crate::agent::tool_run::{Refused, ToolRun};
use crate::message::ToolCall;
use crate::tools::dynamic::hook_group;
use crate::tools::{Exposure, ToolContext};

/// A file lock's hold when the hook names none.
pub const DEFAULT_LOCK: Duration = Duration::from_secs(60);
/// The longest a hook may hold a file: the host's cap on a tool run.
pub const MAX_LOCK: Duration = Duration::from_secs(600);

fn too_large(e: TooLarge) -> CallError {
    err(TooLarge::CODE, e.to_string())
}

/// `tools.register`'s `tools` and the size of each as JSON. Each is measured before it is
/// read, so a definition past the size limit is refused without ever being copied.
fn tool_decls(params: &Value) -> Result<(Vec<ToolDecl>, Vec<usize>), CallError> {
    let shape = || {
        err(
            "invalid_params",
            "`tools` (a list of tools shaped as in `register`) is required",
        )
    };
    let list = params
        .get("tools")
        .and_then(Value::as_array)
        .ok_or_else(shape)?;
    let mut decls = Vec::with_capacity(list.len());
    let mut sizes = Vec::with_capacity(list.len());
    for v in list {
        let size = json_size(v);
        let name = v.get("name").and_then(Value::as_str).unwrap_or_default();
        budget::check_tool(name, size).map_err(too_large)?;
        decls.push(ToolDecl::deserialize(v).map_err(|_| shape())?);
        sizes.push(size);
    }
    Ok((decls, sizes))
}

fn names_param(params: &Value) -> Result<Vec<String>, CallError> {
    params
        .get("names")
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .ok_or_else(|| {
            err(
                "invalid_params",
                "`names` (a list of tool names) is required",
            )
        })
}

impl HostCalls {
    /// `tools.list_active`: what the model is offered now, and every tool it could be.
    pub(super) fn list_active(&self) -> Result<Value, CallError> {
        let agent = self.agent()?;
        let tools = agent.tools();
        let active = tools.offered_names(agent.active_tools().as_deref());
        let all: Vec<Value> = tools
            .all_names()
            .iter()
            .filter_map(|n| Some((tools.get(n)?, tools.exposure(n)?)))
            .map(|(t, e)| {
                json!({"name": t.name(), "description": t.description(), "exposure": e.as_str()})
            })
            .collect();
        Ok(json!({"active": active, "all": all}))
    }

    /// `tools.set_active {names}`: exactly these tools are offered from the next request on (a
    /// deferred one is activated by naming it); the prompt's tool section and skills block
    /// follow. Unknown and hidden names are dropped, as pi's `setActiveTools` drops them (seed
    /// A §9.3); the answer's `active` says what is offered.
    pub(super) fn set_active(&self, params: &Value) -> Result<Value, CallError> {
        let agent = self.agent()?;
        let tools = agent.tools();
        let names: Vec<String> = names_param(params)?
            .into_iter()
            .filter(|n| tools.exposure(n).is_some_and(|e| e != Exposure::Hidden))
            .collect();
        agent.set_active_tools(Some(names.clone()));
        self.tools_changed();
        Ok(json!({"active": tools.offered_names(Some(&names))}))
    }

    fn tools_changed(&self) {
        if let Ok(control) = self.control() {
            control.tools_changed();
        }
    }

    /// `tools.register {tools}`: tools declared as in `register`, joining while pi runs. A
    /// name the hook registered this way before is replaced; any other tool's name is taken.
    /// Each definition, and the hook's tools together, must stay within the size limits of
    /// `budget`.
    pub(super) fn register_tools(&self, hook: &str, params: &Value) -> Result<Value, CallError> {
        let (decls, sizes) = tool_decls(params)?;
        let agent = self.agent()?;
        let tools = agent.tools();
        let dynamic = tools
            .dynamic()
            .cloned()
            .ok_or_else(|| err("unavailable", "tools are off in this run (--no-tools)"))?;
        let instance = self
            .instance(hook)
            .ok_or_else(|| err("unavailable", format!("hook {hook} is not running")))?;
        let group = hook_group(hook);
        let mut seen: Vec<&str> = Vec::new();
        for d in &decls {
            if !super::registration::valid_name(&d.name) || seen.contains(&d.name.as_str()) {
                let why = super::registration::RegisterError::BadName {
                    what: "tool",
                    name: d.name.clone(),
                };
                return Err(err("invalid_params", why.to_string()));
            }
            seen.push(&d.name);
            super::registration::check_tool(d).map_err(|e| err("invalid_params", e.to_string()))?;
            if !d.parameters.is_object() {
                return Err(err(
                    "invalid_params",
                    format!(
                        "tool {:?}: `parameters` must be a JSON Schema object",
                        d.name
                    ),
                ));
            }
            let owner = dynamic.group_of(&d.name);
            let taken = owner.as_deref().is_some_and(|g| g != group)
                || (owner.is_none() && tools.exposure(&d.name).is_some());
            if taken {
                return Err(err(
                    "failed",
                    format!("tool {:?} is already registered; pick another name", d.name),
                ));
            }
            if !tools.admits(&d.name) {
                return Err(err(
                    "failed",
                    format!(
                        "tool {:?} is left out by the user's --tools / --exclude-tools",
                        d.name
                    ),
                ));
            }
        }
        let mut kept: Vec<(Arc<dyn crate::tools::Tool>, Exposure)> = Vec::new();
        for n in dynamic.group_tools(&group) {
            if decls.iter().all(|d| d.name != n) {
                if let Some(t) = tools.get(&n) {
                    let e = tools.exposure(&n).unwrap_or(Exposure::Direct);
                    kept.push((t, e));
                }
            }
        }
        let names: Vec<String> = decls.iter().map(|d| d.name.clone()).collect();
        let kept_names: Vec<String> = kept.iter().map(|(t, _)| t.name().to_string()).collect();
        let added: Vec<(String, usize)> = names.iter().cloned().zip(sizes).collect();
        self.tool_ledger
            .admit(hook, instance.registered_tool_bytes(), &kept_names, &added)
            .map_err(too_large)?;
        let starting: Vec<String> = decls
            .iter()
            .filter(|d| {
                crate::tools::Exposure::declared(d.exposure.as_deref()).offered_by_default()
            })
            .map(|d| d.name.clone())
            .collect();
        for d in decls {
            let e = crate::tools::Exposure::declared(d.exposure.as_deref());
            kept.push((Arc::new(HookTool::new(d, &instance)), e));
        }
        dynamic.set_group(&group, kept);
        agent.extend_active_tools(&starting);
        self.forget_with_process(hook);
        self.tools_changed();
        tracing::info!(hook, tools = ?names, "tools registered");
        Ok(json!({"registered": names}))
    }

    /// Drops the hook's registered tools when the process that registered them ends: a
    /// restarted hook registers again what it still offers.
    fn forget_with_process(&self, hook: &str) {
        let Some(scope) = call_scope() else {
            return;
        };
        let (Ok(agent), false) = (self.agent(), self.watched(hook, &scope.process_ended)) else {
            return;
        };
        let agent = agent.clone();
        let group = hook_group(hook);
        let ended = scope.process_ended.clone();
        tokio::spawn(async move {
            ended.cancelled().await;
            if let Some(d) = agent.tools().dynamic() {
                d.remove_group(&group);
            }
        });
    }

    /// `tools.unregister {names}`: drops tools the hook registered with `tools.register`.
    pub(super) fn unregister_tools(&self, hook: &str, params: &Value) -> Result<Value, CallError> {
        let names = names_param(params)?;
        let agent = self.agent()?;
        let tools = agent.tools();
        let Some(dynamic) = tools.dynamic().cloned() else {
            return Err(err("unavailable", "tools are off in this run (--no-tools)"));
        };
        let group = hook_group(hook);
        let mine = dynamic.group_tools(&group);
        if let Some(n) = names.iter().find(|n| !mine.contains(n)) {
            return Err(err(
                "not_found",
                format!("hook {hook} did not register tool {n:?} with tools.register"),
            ));
        }
        let kept: Vec<(Arc<dyn crate::tools::Tool>, Exposure)> = mine
            .iter()
            .filter(|n| !names.contains(n))
            .filter_map(|n| Some((tools.get(n)?, tools.exposure(n)?)))
            .collect();
        if kept.is_empty() {
            dynamic.remove_group(&group);
        } else {
            dynamic.set_group(&group, kept);
        }
        self.tools_changed();
        Ok(json!({"unregistered": names}))
    }

    /// `tools.execute`: a nested call — validated, gated by every hook, executed, and passed
    /// through the `tool_result` chain exactly like a call from the model, with events naming
    /// the call it serves — unless it would run deeper than [`MAX_NESTING`], which is an error
    /// result naming the limit.
    pub(super) async fn execute(&self, hook: &str, params: Value) -> Result<Value, CallError> {
        let name = str_param(&params, "tool")?.to_string();
        let depth = nesting_depth();
        if depth > MAX_NESTING {
            tracing::warn!(hook, tool = %name, depth, "nested tool call refused");
            let text = format!(
                "tools.execute of {name} refused: nested tool calls have a nesting limit of \
                 {MAX_NESTING}, and hook {hook} asked for depth {depth}"
            );
            return Ok(
                json!({"content": [{"type": "text", "text": text}], "details": null,
                             "is_error": true}),
            );
        }
        let agent = self.agent()?.clone();
        let tools = agent.tools();
        hooks_may_run(&tools, &name, agent.active_tools().as_deref())?;
        let runner = self
            .runner()
            .ok_or_else(|| err("unavailable", "hooks are shutting down"))?;
        let parent = parent_call(&params);
        let n = self.nested.fetch_add(1, Ordering::Relaxed);
        let call = ToolCall {
            thought_signature: None,
            id: format!("hook_{hook}_{n}"),
            name: name.clone(),
            arguments: params
                .get("arguments")
                .cloned()
                .unwrap_or_else(|| json!({})),
        };
        tracing::info!(hook, tool = %name, parent = ?parent, call = %call.id, "nested tool call");
        let bridge = HookBridge::new(runner.clone());
        let emit = |e: AgentEvent| {
            bridge.event(&e);
            runner.emit_event(e);
        };
        let run = ToolRun {
            tools: &tools,
            hooks: &bridge,
            emit: &emit,
            parent,
        };
        let cancel = agent.cancel_token();
        let started = run.start(&call);
        let cleared = match run.preflight(&call, &cancel).await {
            Ok(c) => c,
            Err(refused) => {
                let message = refused.message();
                let msg = crate::agent::tool_run::result_message(
                    &call,
                    crate::tools::ToolOutput::text(message.clone()),
                    true,
                );
                let msg = run.end(&call, msg, None);
                return match refused {
                    Refused::Unknown(m) | Refused::Invalid(m) => Err(err("invalid_params", m)),
                    Refused::BadPatch(m) => Err(err("failed", m)),
                    Refused::Blocked { .. } | Refused::Aborted => {
                        Ok(json!({"content": msg.content, "is_error": true}))
                    }
                };
            }
        };
        let ctx = ToolContext {
            cwd: self.cwd().to_path_buf(),
            cancel: cancel.child_token(),
            updates: None,
            mutations: agent.mutations(),
            lock_owner: Some(hook.to_string()),
            env: agent.config().tool_env(),
        };
        let (out, is_error) = run.execute(&cleared, ctx).await;
        let r = run.finish(&cleared.call, out, is_error, started).await;
        let mut v = json!({"content": r.content, "details": r.details, "is_error": r.is_error});
        if let Some(s) = r.structured_content {
            v["structured_content"] = s;
        }
        if let Some(u) = r.usage {
            v["usage"] = json!(u);
        }
        Ok(v)
    }

    /// `tools.with_file_lock {path, timeout_ms?}`: waits for the file's mutation lock — the
    /// one `edit` and `write` take — and holds it for the hook until released (see the module
    /// comment for what releases it).
    pub(super) async fn with_file_lock(
        &self,
        hook: &str,
        params: &Value,
    ) -> Result<Value, CallError> {
        let raw = str_param(params, "path")?;
        let hold = match params.get("timeout_ms") {
            None | Some(Value::Null) => DEFAULT_LOCK,
            Some(v) => match v.as_u64() {
                Some(ms) if ms > 0 => Duration::from_millis(ms).min(MAX_LOCK),
                _ => {
                    return Err(err(
                        "invalid_params",
                        "`timeout_ms` must be a positive number of milliseconds",
                    ))
                }
            },
        };
        let agent = self.agent()?.clone();
        let path = crate::tools::path::resolve(self.cwd(), raw);
        let process_ended = call_scope().map(|s| s.process_ended).unwrap_or_default();
        let guard = agent.mutations().lock_as(&path, Some(hook)).await;
        let id = self.next_lock.fetch_add(1, Ordering::Relaxed);
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        self.file_locks().insert(id, (hook.to_string(), release));
        let locks = self.lock_table();
        let who = hook.to_string();
        tokio::spawn(async move {
            tokio::select! {
                _ = released => {}
                _ = tokio::time::sleep(hold) => {
                    tracing::warn!(hook = %who, lock = id, "file lock released: its timeout passed");
                }
                _ = process_ended.cancelled() => {}
            }
            drop(guard);
            locks.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
        });
        let shown = crate::tools::mutation::lock_key(&path);
        Ok(json!({"lock_id": id, "path": shown.display().to_string(),
                  "timeout_ms": hold.as_millis() as u64}))
    }

    /// `tools.release_file_lock {lock_id}`: only the hook that took a lock releases it.
    pub(super) fn release_file_lock(&self, hook: &str, params: &Value) -> Result<Value, CallError> {
        let id = params
            .get("lock_id")
            .and_then(Value::as_u64)
            .ok_or_else(|| err("invalid_params", "`lock_id` (a number) is required"))?;
        let mut locks = self.file_locks();
        let mine = locks.get(&id).is_some_and(|(owner, _)| owner == hook);
        match mine.then(|| locks.remove(&id)).flatten() {
            Some((_, release)) => {
                let _ = release.send(());
                Ok(json!({}))
            }
            None => Err(err(
                "not_found",
                format!("file lock {id} is not held (released, expired, or never taken)"),
            )),
        }
    }
}

/// Whether a hook may run tool `name` through `tools.execute`: it must exist, be offered to
/// hooks, and (when offered directly) be active.
fn hooks_may_run(
    tools: &crate::tools::ToolRegistry,
    name: &str,
    active: Option<&[String]>,
) -> Result<(), CallError> {
    let refused = match tools.exposure(name) {
        None => format!("Tool {name} not found"),
        Some(Exposure::ModelOnly) => {
            format!("tool {name} is model-only: only the model can call it")
        }
        Some(Exposure::Hidden) => format!("tool {name} is hidden: nothing can call it"),
        Some(Exposure::Direct) if !tools.offers(name, active) => {
            format!("tool {name} is not active (tools.set_active offers it again)")
        }
        Some(_) => return Ok(()),
    };
    Err(err("invalid_params", refused))
}

/// The call a nested call serves: the one the hook names, else the one tool call it is
/// running.
fn parent_call(params: &Value) -> Option<String> {
    params
        .get("parent_call_id")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            let serving = call_scope()?.serving;
            (serving.len() == 1).then(|| serving[0].clone())
        })
}
