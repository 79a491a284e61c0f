//! The controller's events applied to what the person sees: streaming text and thinking,
//! tool calls from the model's first argument byte to their result, policy decisions, queue
//! changes, retries and compaction, the `!` command's output.

use super::app::App;
use super::tool_view::{ToolCallView, ToolStatus};
use super::transcript::{Item, TextItem, Transcript};
use crate::agent::events::{AgentEvent, AssistantDelta};
use crate::message::{AssistantMessage, Content, Message, StopReason};

pub fn apply(app: &mut App, ev: AgentEvent) {
    match ev {
        AgentEvent::AgentStart if app.busy_since.is_none() => {
            app.busy_since = Some(std::time::Instant::now());
        }
        AgentEvent::AgentSettled { .. } => {
            app.busy_since = None;
            app.transcript.close_open();
            // Tools may have created or removed files: `@` completion walks again.
            app.editor.invalidate_files();
            app.refresh_footer();
        }
        AgentEvent::MessageStart { message } => {
            if let Message::User(u) = message.as_ref() {
                app.transcript.push(Item::User(u.content.as_text()));
            }
        }
        AgentEvent::MessageUpdate {
            assistant_message_event: d,
            ..
        } => streamed(&mut app.transcript, d),
        AgentEvent::MessageEnd { message } => {
            if let Message::Assistant(m) = message.as_ref() {
                message_end(app, m);
            }
        }
        ev @ (AgentEvent::ToolExecutionStart { .. }
        | AgentEvent::ToolExecutionUpdate { .. }
        | AgentEvent::ToolExecutionEnd { .. }) => tool_event(&mut app.transcript, ev),
        ev @ (AgentEvent::HookDecision(_)
        | AgentEvent::McpServer { .. }
        | AgentEvent::HookError { .. }
        | AgentEvent::HookState { .. }) => hook_notice(app, ev),
        ev => notice(app, ev),
    }
}

/// One streaming delta of the assistant message: text and thinking grow, tool calls appear
/// from their first byte.
fn streamed(t: &mut Transcript, d: AssistantDelta) {
    match d {
        AssistantDelta::TextStart { .. } => t.push(Item::Text(TextItem::new())),
        AssistantDelta::TextDelta { delta, .. } => match t.last_text_mut() {
            Some(item) => item.push(&delta),
            None => {
                let mut item = TextItem::new();
                item.push(&delta);
                t.push(Item::Text(item));
            }
        },
        AssistantDelta::TextEnd { .. } => {
            if let Some(item) = t.last_text_mut() {
                item.done = true;
            }
        }
        AssistantDelta::ThinkingStart { .. } => t.push(Item::Thinking {
            text: String::new(),
            done: false,
        }),
        AssistantDelta::ThinkingDelta { delta, .. } => {
            if let Some(Item::Thinking { text, done: false }) = t.items.last_mut() {
                text.push_str(&delta);
            } else {
                t.push(Item::Thinking {
                    text: delta,
                    done: false,
                });
            }
        }
        AssistantDelta::ThinkingEnd { .. } => {
            if let Some(Item::Thinking { done, .. }) = t.items.last_mut() {
                *done = true;
            }
        }
        AssistantDelta::ToolCallStart { id, tool_name, .. } => {
            t.push(Item::Tool(ToolCallView::new(
                id,
                tool_name,
                serde_json::Value::Null,
            )));
        }
        AssistantDelta::ToolCallEnd { tool_call, .. } => {
            if let Some(v) = t.tool_mut(&tool_call.id) {
                v.args = tool_call.arguments;
            }
        }
        _ => {}
    }
}

/// The assistant message is complete: open items close, an error or abort is said.
fn message_end(app: &mut App, m: &AssistantMessage) {
    let theme = app.theme.clone();
    let t = &mut app.transcript;
    t.close_open();
    // Calls the model made that never ran (the run ended first) are not left spinning.
    for c in m.tool_calls() {
        if let Some(v) = t.tool_mut(&c.id) {
            v.args = c.arguments.clone();
        }
    }
    match m.stop_reason {
        StopReason::Error => t.notice(
            format!(
                "Error: {}",
                m.error_message.as_deref().unwrap_or("the request failed")
            ),
            theme.error,
        ),
        StopReason::Aborted => {
            for c in m.tool_calls() {
                if let Some(v) = t.tool_mut(&c.id) {
                    if !v.finished() {
                        v.status = ToolStatus::Failed;
                        v.output = "aborted".into();
                    }
                }
            }
            t.notice("Aborted", theme.warning)
        }
        _ => {}
    }
    app.refresh_footer();
}

/// A tool call runs, streams its output, ends.
fn tool_event(t: &mut Transcript, ev: AgentEvent) {
    let t_expanded = t.expanded;
    match ev {
        AgentEvent::ToolExecutionStart {
            tool_call_id,
            tool_name,
            args,
            ..
        } => match t.tool_mut(&tool_call_id) {
            Some(v) => {
                v.args = args;
                v.status = ToolStatus::Running;
                v.started = Some(std::time::Instant::now());
            }
            None => {
                let mut v = ToolCallView::new(tool_call_id, tool_name, args);
                v.status = ToolStatus::Running;
                v.started = Some(std::time::Instant::now());
                t.push(Item::Tool(v));
            }
        },
        AgentEvent::ToolExecutionUpdate {
            tool_call_id,
            partial_result,
            ..
        } => {
            if let Some(v) = t.tool_mut(&tool_call_id) {
                v.output = text_of(&partial_result.content);
            }
        }
        AgentEvent::ToolExecutionEnd {
            tool_call_id,
            result,
            is_error,
            duration_ms,
            ..
        } => {
            if let Some(v) = t.tool_mut(&tool_call_id) {
                v.output = text_of(&result.content);
                v.details = result.details;
                v.duration = duration_ms
                    .map(std::time::Duration::from_millis)
                    .or_else(|| v.started.map(|s| s.elapsed()));
                if t_expanded {
                    v.full_output = super::tool_output::read_full_output(v.details.as_ref());
                }
                if !matches!(v.status, ToolStatus::Blocked(_)) {
                    v.status = if is_error {
                        ToolStatus::Failed
                    } else {
                        ToolStatus::Done
                    };
                }
            }
        }
        _ => {}
    }
}

/// What hooks and MCP servers did that the person should know: a call a policy blocked, a
/// server's state, a hook's failure or restart.
fn hook_notice(app: &mut App, ev: AgentEvent) {
    let theme = app.theme.clone();
    let t = &mut app.transcript;
    match ev {
        AgentEvent::HookDecision(d) if d.outcome == "block" => {
            let reason = d.reason.clone().unwrap_or_else(|| "no reason given".into());
            match d.tool_call_id.as_deref().and_then(|id| t.tool_mut(id)) {
                Some(v) => v.status = ToolStatus::Blocked(reason),
                None => t.notice(
                    format!("blocked by policy ({}): {reason}", d.event),
                    theme.error,
                ),
            }
        }
        AgentEvent::McpServer {
            server,
            state,
            tools,
            error,
        } => match (state.as_str(), error) {
            ("failed", Some(e)) => {
                app.notify(format!("MCP server {server} failed: {e}"), theme.warning)
            }
            ("unavailable", Some(e)) => app.notify(
                format!("MCP server {server} is not available ({e}); going on without its tools"),
                theme.warning,
            ),
            ("connected", _) => app.notify(
                format!("MCP server {server} connected ({tools} tools)"),
                theme.muted,
            ),
            _ => {}
        },
        AgentEvent::HookError {
            hook,
            event,
            message,
            ..
        } => {
            app.notify(
                format!("hook {hook} failed on {event}: {message}"),
                theme.warning,
            );
        }
        AgentEvent::HookState {
            hook,
            state,
            detail,
        } if state != "running" => {
            let d = detail.map(|d| format!(": {d}")).unwrap_or_default();
            app.notify(format!("hook {hook} {state}{d}"), theme.warning);
        }
        _ => {}
    }
}

/// What is said beside the conversation about the run: queues, retries, compaction, the `!`
/// command's output, the footer.
fn notice(app: &mut App, ev: AgentEvent) {
    let theme = app.theme.clone();
    let t = &mut app.transcript;
    match ev {
        AgentEvent::QueueUpdate {
            steering,
            follow_up,
        } => app.queue = (steering, follow_up),
        AgentEvent::AutoRetryStart {
            attempt,
            max_attempts,
            delay_ms,
            error_message,
        } => {
            t.notice(
                format!(
                    "Retrying ({attempt}/{max_attempts}) in {:.1}s: {error_message}",
                    delay_ms as f64 / 1000.0
                ),
                theme.warning,
            );
        }
        AgentEvent::AutoRetryEnd {
            success: false,
            final_error,
            ..
        } => {
            t.notice(
                format!("Retry failed: {}", final_error.unwrap_or_default()),
                theme.error,
            );
        }
        AgentEvent::CompactionStart { reason } => {
            app.notify(format!("Compacting ({reason})…"), theme.muted)
        }
        AgentEvent::CompactionEnd {
            reason,
            result,
            aborted,
            error_message,
            ..
        } => {
            // A manual compaction's failure is reported by `/compact` itself.
            if let Some(e) = error_message.filter(|_| reason != "manual") {
                // The event's text says which compaction failed, as pi 1.6 words it.
                t.notice(e, theme.error);
            } else if aborted {
                t.notice("Compaction cancelled", theme.warning);
            } else if let Some(r) = result {
                let before = r.get("tokensBefore").and_then(|v| v.as_u64()).unwrap_or(0);
                let summary = r.get("summary").and_then(|v| v.as_str()).unwrap_or("");
                t.push(super::history::compaction_item(before, summary));
            }
            app.refresh_footer();
        }
        AgentEvent::BashExecutionUpdate { delta, .. } => {
            if let Some(b) = t.bash_mut() {
                b.output.push_str(&delta);
            }
        }
        AgentEvent::ThinkingLevelChanged { .. } | AgentEvent::SessionInfoChanged { .. } => {
            app.refresh_footer()
        }
        _ => {}
    }
}

fn text_of(content: &[Content]) -> String {
    crate::message::text_of(content)
}
