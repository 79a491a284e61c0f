//! The session operations hooks ask for through host calls (`session.compact`,
//! `session.navigate_tree`, `session.fork`, `session.clone`, `session.new`,
//! `session.switch`), answered with the protocol's snake_case results. They are the
//! controller's own operations; the calling hook is named so that, when the operation replaces
//! the session, that hook is answered before it is replaced. `commands.list` is answered here
//! too, from the gathering RPC `get_commands` uses.

use async_trait::async_trait;
use serde_json::{json, Value};

use super::compact::{Compacted, Reason};
use super::{Core, ForkOutcome, SwitchOutcome};
use crate::hooks::calls::{SessionControl, SessionOp};
use crate::hooks::message_calls::Delivery;
use crate::hooks::protocol::CallError;

fn switched(out: SwitchOutcome) -> Value {
    if out.cancelled {
        return json!({"cancelled": true});
    }
    json!({
        "cancelled": false,
        "session_file": out.session_file,
        "session_id": out.session_id,
    })
}

fn forked(out: ForkOutcome) -> Value {
    if out.cancelled {
        return json!({"cancelled": true});
    }
    json!({
        "cancelled": false,
        "session_file": out.session_file,
        "session_id": out.session_id,
        "text": out.text,
    })
}

#[async_trait]
impl SessionControl for Core {
    async fn complete(
        &self,
        hook: &str,
        request: crate::hooks::complete_calls::CompleteRequest,
        progress: crate::hooks::instance::ProgressSink,
        cancel: tokio_util::sync::CancellationToken,
    ) -> Result<Value, CallError> {
        self.hook_complete(hook, request, progress, cancel).await
    }

    async fn send_custom(
        &self,
        message: crate::message::CustomMessage,
        deliver_as: Option<Delivery>,
        trigger_turn: Option<bool>,
    ) -> &'static str {
        Core::send_custom(self, message, deliver_as, trigger_turn)
            .await
            .as_str()
    }

    async fn send_user(
        &self,
        text: String,
        deliver_as: Option<Delivery>,
    ) -> Result<&'static str, CallError> {
        let disposition = Core::send_user(self, text, deliver_as)
            .await
            .map_err(|e| match e {
                super::ControllerError::Busy => {
                    crate::hooks::calls::call_error("busy", e.to_string())
                }
                e => crate::hooks::calls::call_error("invalid_params", e.to_string()),
            })?;
        Ok(match disposition {
            super::Disposition::Started => "started",
            super::Disposition::Queued => "queued",
            super::Disposition::Handled => "handled",
        })
    }

    async fn run(&self, caller: &str, op: SessionOp) -> Result<Value, CallError> {
        let _agent = self.exclusive().await;
        let caller = Some(caller);
        Ok(match op {
            SessionOp::Compact {
                custom_instructions,
            } => match self
                .compact_now(Reason::Manual, custom_instructions, false)
                .await?
            {
                Some(Compacted::Stored(c)) => json!({
                    "cancelled": false,
                    "summary": c.summary,
                    "first_kept_entry_id": c.first_kept_entry_id,
                    "tokens_before": c.tokens_before,
                    "details": c.details,
                }),
                Some(Compacted::Cancelled(_)) | None => json!({"cancelled": true}),
            },
            SessionOp::NavigateTree {
                entry_id,
                summarize,
                custom_instructions,
                label,
            } => {
                let n = self
                    .navigate(&entry_id, summarize, custom_instructions, label)
                    .await?;
                if n.cancelled {
                    json!({"cancelled": true})
                } else {
                    json!({
                        "cancelled": false,
                        "leaf_id": n.leaf_id,
                        "editor_text": n.editor_text,
                        "summary_entry_id": n.summary_entry_id,
                    })
                }
            }
            SessionOp::Fork { entry_id, position } => {
                forked(self.fork(&entry_id, position, caller).await?)
            }
            SessionOp::Clone => forked(self.clone_session(caller).await?),
            SessionOp::New { parent_session } => {
                switched(self.switch(None, parent_session, caller, None).await?)
            }
            SessionOp::Switch { session_file } => {
                switched(self.switch(Some(&session_file), None, caller, None).await?)
            }
        })
    }

    fn tools_changed(&self) {
        self.refresh_system_prompt();
    }

    /// `commands.list`: `get_commands`' list in the protocol's snake_case, each hook command
    /// naming its hook.
    fn commands(&self) -> Value {
        let list: Vec<Value> = self
            .command_list()
            .into_iter()
            .map(|(c, hook)| {
                let i = &c.source_info;
                let mut v = json!({
                    "name": c.name,
                    "source": c.source,
                    "source_info": {"path": i.path, "source": i.source, "scope": i.scope,
                                    "origin": i.origin},
                });
                if let Some(d) = &c.description {
                    v["description"] = json!(d);
                }
                if let Some(dir) = &i.base_dir {
                    v["source_info"]["base_dir"] = json!(dir);
                }
                if let Some(h) = hook {
                    v["hook"] = json!(h);
                }
                v
            })
            .collect();
        json!({ "commands": list })
    }
}
