//! `pi hook check`: the conformance run of one hook. Each step below checks one thing a hook
//! promises (its registration, its replies, cancel, clean stdout, exiting) and adds rows to a
//! PASS/FAIL table; `hook_check` runs them in the order the table shows them.

use std::path::Path;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use crate::hooks::describe::describe;
use crate::hooks::events::{is_tool_event, kind_of, Kind};
use crate::hooks::instance::{HookErrorKind, HookInstance, Notice};
use crate::hooks::protocol::Register;
use crate::hooks::provider_calls::HookProviders;
use crate::hooks::registration;
use crate::hooks::sample_payloads;
use crate::hooks::sources;
use crate::hooks::spec::{HookSource, HookSpec};

use super::hook_cmds::start_one;
use super::hook_probe::{exit_probe, tool_execute_probe, ExitCue};

struct Table {
    rows: Vec<(bool, String, String)>,
}

impl Table {
    fn row(&mut self, ok: bool, check: impl Into<String>, detail: impl Into<String>) {
        self.rows.push((ok, check.into(), detail.into()));
    }
    fn print(&self) -> bool {
        let width = self.rows.iter().map(|r| r.1.len()).max().unwrap_or(10);
        for (ok, check, detail) in &self.rows {
            term_println!(
                "{}  {check:<width$}  {detail}",
                if *ok { "PASS" } else { "FAIL" }
            );
        }
        self.rows.iter().all(|r| r.0)
    }
}

pub async fn hook_check(command: &str, cwd: &Path) -> anyhow::Result<i32> {
    let mut t = Table { rows: Vec::new() };
    let spec = sources::from_command(command, cwd, HookSource::Cli)?;
    let (h, mut notices, started, providers) = match start_one(spec.clone(), cwd).await {
        Ok(x) => x,
        Err(e) => {
            t.row(false, "starts and registers", e.to_string());
            t.print();
            return Ok(1);
        }
    };
    let reg = h.registration();
    t.row(
        true,
        "starts and registers",
        format!(
            "{} ms, protocol v{}",
            started.as_millis(),
            reg.protocol_version
        ),
    );
    check_subscriptions(&mut t, &reg);
    check_providers(&mut t, providers)?;
    check_commands(&mut t, &reg);
    check_tools(&mut t, &reg);
    let cwd_s = cwd.display().to_string();
    let reply_event = ask_events(&mut t, &h, &reg, &spec, &cwd_s).await;
    let (ok, detail) = tool_execute_probe(&h, &reg, spec.event_timeout).await;
    t.row(ok, "answers tool_execute", detail);
    check_cancel(&mut t, &h, reply_event.as_deref(), &spec, &cwd_s).await;
    check_notices(&mut t, &h, &reg, &mut notices);
    h.shutdown("pi hook check finished").await;
    let (ok, detail) = exit_probe(&spec, cwd, ExitCue::Shutdown).await;
    t.row(ok, "exits on shutdown", detail);
    let (ok, detail) = exit_probe(&spec, cwd, ExitCue::Eof).await;
    t.row(ok, "exits on stdin EOF", detail);
    Ok(if t.print() { 0 } else { 1 })
}

/// Each subscription names a known event, and a tool filter sits only on a tool event; what
/// each filter matches among the built-in tools.
fn check_subscriptions(t: &mut Table, reg: &Register) {
    for s in &reg.subscriptions {
        match kind_of(&s.event) {
            None => t.row(false, format!("subscription {}", s.event), "unknown event"),
            Some(_) if s.tools.is_some() && !is_tool_event(&s.event) => t.row(
                false,
                format!("subscription {}", s.event),
                "tool filter on an event that is not about a tool",
            ),
            Some(_) => {}
        }
        if !is_tool_event(&s.event) {
            continue;
        }
        if s.tools.is_none() {
            t.row(
                true,
                format!("{} filter (none)", s.event),
                "matches every tool",
            );
        }
        for f in s.tools.iter().flatten() {
            let check = format!("{} filter {f}", s.event);
            match registration::builtins_matched(&s.event, f) {
                Ok(found) => t.row(true, check, filter_matches(found)),
                Err(e) => t.row(false, check, e.to_string()),
            }
        }
    }
}

/// What a filter matches among the built-in tools, for `pi hook check`. Matching nothing
/// built in is fine (hook and MCP tools have other names); matching only when case is
/// ignored is probably a mistake, so it is pointed out.
fn filter_matches((hits, near): (Vec<&str>, Vec<&str>)) -> String {
    if !hits.is_empty() {
        return format!("matches {}", hits.join(", "));
    }
    let mut s = "matches none of the built-ins (it may match hook or MCP tools)".to_string();
    if !near.is_empty() {
        s.push_str(&format!(
            "; filters are case-sensitive, so it does not match {}",
            near.join(", ")
        ));
    }
    s
}

/// Providers from `provider.register` before `register`, applied as pi applies them.
fn check_providers(t: &mut Table, providers: HookProviders) -> anyhow::Result<()> {
    let (mut models, _) = crate::config::ModelRegistry::load(
        Path::new("/nonexistent-agent-dir"),
        &crate::config::MapEnv::new(),
    )?;
    for r in providers.close() {
        let check = format!("provider {}", r.name);
        match models.add_provider("provider.register", &r.name, &r.entry, &r.env) {
            Ok(_) => {
                let ids: Vec<String> = models
                    .provider(&r.name)
                    .map(|p| p.models.iter().map(|m| m.id.clone()).collect())
                    .unwrap_or_default();
                t.row(true, check, format!("models: {}", ids.join(", ")))
            }
            Err(e) => t.row(false, check, e.to_string()),
        }
    }
    Ok(())
}

/// A command named like one of the interactive mode's own is never reached there.
fn check_commands(t: &mut Table, reg: &Register) {
    for c in &reg.commands {
        let check = format!("command /{}", c.name);
        if crate::modes::interactive::commands::is_builtin(&c.name) {
            t.row(
                false,
                check,
                "reserved: the interactive mode's own /".to_string()
                    + &c.name
                    + " runs instead, so this command is never reached there; rename it",
            );
        } else {
            t.row(true, check, "free name");
        }
    }
}

/// Each tool's schema compiles, and who may see and run it.
fn check_tools(t: &mut Table, reg: &Register) {
    for tool in &reg.tools {
        match crate::tools::compile_schema(&tool.parameters) {
            Ok(_) => t.row(true, format!("tool {} schema", tool.name), "compiles"),
            Err(e) => t.row(false, format!("tool {} schema", tool.name), e.to_string()),
        }
        let exposure = crate::tools::Exposure::declared(tool.exposure.as_deref());
        let reach = match exposure {
            crate::tools::Exposure::Direct => "offered to the model; hooks may run it",
            crate::tools::Exposure::ModelOnly => "offered to the model; hooks may not run it",
            crate::tools::Exposure::Deferred => "offered once activated; hooks may run it",
            crate::tools::Exposure::Hidden => "never offered; nothing may run it",
        };
        t.row(
            true,
            format!("tool {} exposure", tool.name),
            format!("{} ({reach})", exposure.as_str()),
        );
        if tool.output_schema.is_some() {
            t.row(
                true,
                format!("tool {} output_schema", tool.name),
                "compiles",
            );
        }
    }
}

/// Sends a sample of every subscribed event; events the hook subscribes to while it is asked
/// (`subscribe`) are asked too, once. Returns the first event that expects a reply, for the
/// cancel check.
async fn ask_events(
    t: &mut Table,
    h: &HookInstance,
    reg: &Register,
    spec: &HookSpec,
    cwd_s: &str,
) -> Option<String> {
    let mut reply_event = None;
    let mut asked: Vec<String> = Vec::new();
    let mut todo: Vec<String> = reg.subscriptions.iter().map(|s| s.event.clone()).collect();
    while !todo.is_empty() {
        for event in std::mem::take(&mut todo) {
            if asked.contains(&event) {
                continue;
            }
            asked.push(event.clone());
            let Some(kind) = kind_of(&event) else {
                continue;
            };
            let payload = sample_payloads::for_event(&event, cwd_s);
            if kind == Kind::Notify {
                h.notify(&event, payload);
                continue;
            }
            reply_event.get_or_insert(event.clone());
            ask_one(t, h, spec, &event, payload).await;
        }
        todo = h
            .subscriptions()
            .iter()
            .map(|s| s.event.clone())
            .filter(|e| !asked.contains(e))
            .collect();
    }
    reply_event
}

/// One event that expects a reply: the reply must come and describe a decision.
async fn ask_one(
    t: &mut Table,
    h: &HookInstance,
    spec: &HookSpec,
    event: &str,
    payload: serde_json::Value,
) {
    let deadline = h
        .subscriptions()
        .wants(event, None)
        .unwrap_or(spec.event_timeout);
    let t0 = Instant::now();
    match h.request(event, payload, deadline).await {
        Ok(v) => match describe(event, &v) {
            Ok(d) => t.row(
                true,
                format!("replies to {event}"),
                format!("{} µs: {d}", t0.elapsed().as_micros()),
            ),
            Err(e) => t.row(false, format!("replies to {event}"), e.to_string()),
        },
        Err(e) => t.row(false, format!("replies to {event}"), e.to_string()),
    }
}

/// Cancel: a request the host gives up on at once must leave the hook healthy.
async fn check_cancel(
    t: &mut Table,
    h: &HookInstance,
    reply_event: Option<&str>,
    spec: &HookSpec,
    cwd_s: &str,
) {
    let Some(ev) = reply_event else {
        t.row(true, "honours cancel", "n/a (no event expects a reply)");
        return;
    };
    let payload = sample_payloads::for_event(ev, cwd_s);
    let _ = h
        .request(ev, payload.clone(), Duration::from_millis(0))
        .await;
    match h.request(ev, payload, spec.event_timeout).await {
        Ok(_) => t.row(
            true,
            "honours cancel",
            "still answers after a cancelled request",
        ),
        Err(e) => t.row(
            false,
            "honours cancel",
            format!("after a cancelled request: {e}"),
        ),
    }
}

/// Anything the hook wrote that was not a well-formed frame, and any crash, shows up in its
/// notices; so do the subscription changes the host refused.
fn check_notices(
    t: &mut Table,
    h: &HookInstance,
    reg: &Register,
    notices: &mut mpsc::UnboundedReceiver<Notice>,
) {
    let mut stdout_problems = Vec::new();
    let mut refused_changes = Vec::new();
    while let Ok(n) = notices.try_recv() {
        match n {
            Notice::Error {
                kind: HookErrorKind::BadSubscription,
                message,
                ..
            } => refused_changes.push(message),
            Notice::Error { kind, message, .. } => {
                stdout_problems.push(format!("{kind:?}: {message}"))
            }
            _ => {}
        }
    }
    // The same handler may run for several sample events: say each refusal once.
    let mut seen = std::collections::BTreeSet::new();
    refused_changes.retain(|m| seen.insert(m.clone()));
    check_subscription_changes(t, h, reg, &refused_changes);
    if h.restarts() > 0 {
        stdout_problems.push(format!("restarted {} time(s)", h.restarts()));
    }
    t.row(
        stdout_problems.is_empty(),
        "writes only frames to stdout",
        if stdout_problems.is_empty() {
            "clean".to_string()
        } else {
            stdout_problems.join("; ")
        },
    );
}

/// `subscribe` / `unsubscribe` sent while the hook was asked: the set it ends with, or the
/// changes the host refused.
fn check_subscription_changes(
    t: &mut Table,
    h: &HookInstance,
    reg: &Register,
    refused_changes: &[String],
) {
    let now: Vec<String> = h
        .subscriptions()
        .iter()
        .map(|s| match &s.filter {
            Some(f) => format!("{} [{}]", s.event, f.patterns().join(", ")),
            None => s.event.clone(),
        })
        .collect();
    let registered: Vec<&str> = reg.subscriptions.iter().map(|s| s.event.as_str()).collect();
    let changed = now.len() != registered.len()
        || h.subscriptions()
            .iter()
            .any(|s| !registered.contains(&s.event.as_str()));
    if !changed && refused_changes.is_empty() {
        return;
    }
    let detail = if !refused_changes.is_empty() {
        refused_changes.join("; ")
    } else if now.is_empty() {
        "none".to_string()
    } else {
        now.join(", ")
    };
    t.row(
        refused_changes.is_empty(),
        "subscriptions after subscribe/unsubscribe",
        detail,
    );
}
