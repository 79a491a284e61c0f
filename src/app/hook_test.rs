//! `pi hook test`: start one hook as the host would and exercise one thing it registered — an
//! event (any kind: the raw reply and the decision the host derives from it), a tool (arguments
//! checked against its schema, progress as it arrives, optionally cancelled) or a command (its
//! reply and the text the user would see). Output is for a person; the exit status says
//! whether the hook answered in a way the host accepts.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::hook_cmds::{start_one, TestArgs};
use crate::hooks::describe::describe;
use crate::hooks::events::{kind_of, Kind};
use crate::hooks::instance::{HookInstance, RequestError};
use crate::hooks::sample_payloads;
use crate::hooks::sources;
use crate::hooks::spec::HookSource;

/// JSON text, or `@file` relative to the working directory.
fn json_arg(raw: &str, what: &str, cwd: &Path) -> anyhow::Result<Value> {
    let text = match raw.strip_prefix('@') {
        Some(path) => std::fs::read_to_string(cwd.join(path))
            .map_err(|e| anyhow::anyhow!("cannot read {what} file {path}: {e}"))?,
        None => raw.to_string(),
    };
    serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{what} is not valid JSON: {e}"))
}

pub async fn hook_test(args: &TestArgs, cwd: &Path) -> anyhow::Result<i32> {
    // Bad input is refused before anything starts.
    enum What {
        Event(String, Value),
        Tool(String, Value),
        Command(String, String),
    }
    let what = if let Some(event) = &args.event {
        kind_of(event).ok_or_else(|| anyhow::anyhow!("unknown event {event:?}"))?;
        let payload = match &args.payload {
            Some(p) => json_arg(p, "--payload", cwd)?,
            None => sample_payloads::for_event(event, &cwd.display().to_string()),
        };
        What::Event(event.clone(), payload)
    } else if let Some(tool) = &args.tool {
        let a = match &args.tool_args {
            Some(a) => json_arg(a, "--args", cwd)?,
            None => Value::Object(Default::default()),
        };
        What::Tool(tool.clone(), a)
    } else if let Some(c) = &args.command_call {
        let name = c.first().cloned().unwrap_or_default();
        let name = name.strip_prefix('/').unwrap_or(&name).to_string();
        What::Command(name, c.get(1).cloned().unwrap_or_default())
    } else {
        anyhow::bail!("say what to test: --event NAME, --tool NAME or --command NAME");
    };
    let spec = sources::from_command(&args.command, cwd, HookSource::Cli)?;
    let (h, _notices, started, _) = match start_one(spec, cwd).await {
        Ok(x) => x,
        Err(e) => {
            term_eprintln!("Error: {e}");
            return Ok(1);
        }
    };
    let reg = h.registration();
    term_println!(
        "hook {} registered in {} ms (protocol v{})",
        h.name(),
        started.as_millis(),
        reg.protocol_version
    );
    let deadline = |h: &HookInstance, event: Option<&str>| {
        args.deadline_ms
            .map(Duration::from_millis)
            .or_else(|| event.and_then(|e| h.subscriptions().wants(e, None)))
            .unwrap_or(h.spec().event_timeout)
    };
    let code = match what {
        What::Event(event, payload) => {
            let d = deadline(&h, Some(&event));
            test_event(&h, &event, payload, d).await
        }
        What::Tool(tool, a) => test_tool(&h, &tool, a, args.cancel_after).await,
        What::Command(name, a) => test_command(&h, &name, &a, deadline(&h, None)).await,
    };
    h.shutdown("pi hook test finished").await;
    Ok(code)
}

async fn test_event(h: &HookInstance, event: &str, payload: Value, deadline: Duration) -> i32 {
    if !h
        .registration()
        .subscriptions
        .iter()
        .any(|s| s.event == event)
    {
        term_println!("note: the hook did not subscribe to {event}; the host would never send it");
    }
    if kind_of(event) == Some(Kind::Notify) {
        h.notify(event, payload);
        term_println!("sent {event} (notify: no reply expected)");
        return 0;
    }
    let t0 = Instant::now();
    let r = h.request(event, payload, deadline).await;
    let us = t0.elapsed().as_micros();
    match r {
        Ok(v) => {
            term_println!("reply ({us} µs): {}", crate::term::json::line(&v));
            match describe(event, &v) {
                Ok(d) => {
                    term_println!("decision: {d}");
                    0
                }
                Err(e) => {
                    term_println!("decision: failure — {e} (a gate would fail closed)");
                    1
                }
            }
        }
        Err(e) => {
            term_println!("failed after {us} µs: {e}");
            1
        }
    }
}

/// Text blocks joined, or the JSON when there are none.
fn shown(content: &[Value]) -> String {
    let texts: Vec<&str> = content
        .iter()
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .collect();
    if texts.is_empty() {
        Value::Array(content.to_vec()).to_string()
    } else {
        texts.join("\n")
    }
}

async fn test_tool(h: &HookInstance, tool: &str, args: Value, cancel_after: Option<u64>) -> i32 {
    let reg = h.registration();
    let Some(decl) = reg.tools.iter().find(|t| t.name == tool) else {
        let names: Vec<&str> = reg.tools.iter().map(|t| t.name.as_str()).collect();
        term_println!(
            "error: the hook registered no tool {tool:?} (it registers: {})",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        );
        return 1;
    };
    // As the host does before the gates: arguments that break the schema never reach the hook.
    match crate::tools::compile_schema(&decl.parameters) {
        Ok(v) => {
            let problems: Vec<String> = v.iter_errors(&args).map(|e| e.to_string()).collect();
            if !problems.is_empty() {
                term_println!(
                    "error: the arguments do not match {tool}'s parameters (the host would not run it): {}",
                    problems.join("; ")
                );
                return 1;
            }
        }
        Err(e) => term_println!(
            "note: {tool}'s parameters are not a valid JSON Schema ({e}); arguments not checked"
        ),
    }
    let (tx, mut rx) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    if let Some(ms) = cancel_after {
        let c = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            c.cancel();
        });
    }
    let t0 = Instant::now();
    let run = h.execute_tool(tool, "test_call_1", args, cancel, tx);
    tokio::pin!(run);
    let result = loop {
        tokio::select! {
            r = &mut run => break r,
            Some(p) = rx.recv() => {
                term_println!("progress ({} ms): {}", t0.elapsed().as_millis(), shown(&p.content));
            }
        }
    };
    while let Ok(p) = rx.try_recv() {
        term_println!(
            "progress ({} ms): {}",
            t0.elapsed().as_millis(),
            shown(&p.content)
        );
    }
    let us = t0.elapsed().as_micros();
    match result {
        Ok(v) => {
            term_println!("result ({us} µs): {}", crate::term::json::line(&v));
            let content = v.get("content").and_then(Value::as_array);
            let Some(content) = content else {
                term_println!("error: a tool result needs `content`, a list of content blocks");
                return 1;
            };
            let is_error = v.get("is_error").and_then(Value::as_bool).unwrap_or(false);
            term_println!(
                "{}: {}",
                if is_error { "error result" } else { "output" },
                shown(content)
            );
            0
        }
        Err(RequestError::Cancelled { .. }) => {
            term_println!(
                "cancelled after {} ms: the hook was sent `cancel` and its reply is no longer awaited",
                us / 1000
            );
            i32::from(cancel_after.is_none())
        }
        Err(e) => {
            term_println!("failed after {us} µs: {e}");
            1
        }
    }
}

async fn test_command(h: &HookInstance, name: &str, args: &str, deadline: Duration) -> i32 {
    let reg = h.registration();
    if !reg.commands.iter().any(|c| c.name == name) {
        let names: Vec<String> = reg
            .commands
            .iter()
            .map(|c| format!("/{}", c.name))
            .collect();
        term_println!(
            "error: the hook registered no command /{name} (it registers: {})",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        );
        return 1;
    }
    let t0 = Instant::now();
    let r = h.command(name, args, deadline).await;
    let us = t0.elapsed().as_micros();
    match r {
        Ok(v) => {
            term_println!("reply ({us} µs): {}", crate::term::json::line(&v));
            match v.get("text") {
                None | Some(Value::Null) => term_println!("text: (none)"),
                Some(Value::String(t)) => term_println!("text: {t}"),
                Some(other) => {
                    term_println!("error: `text` must be a string, not {other}");
                    return 1;
                }
            }
            0
        }
        Err(e) => {
            term_println!("failed after {us} µs: {e}");
            1
        }
    }
}
