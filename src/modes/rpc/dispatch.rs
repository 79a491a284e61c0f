//! One command, one controller call, one response. Each command maps to the controller
//! operation of the same name; its result is the response's data as it is (the controller's
//! types are RPC's vocabulary), and a refusal is `success: false` with the controller's
//! message. Nothing here waits for a run: `prompt` answers as soon as the controller has
//! accepted, queued or refused it, and what happens after arrives as events.

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::protocol::commands::{Command, DeliveryMode, ImageContent, StreamingBehavior};
use super::protocol::{Outgoing, Response, ResponseData};
use crate::agent::QueueMode;
use crate::controller::{
    self, BashRequest, ControllerError, Disposition, ImageInput, PromptOutcome, PromptRequest,
    SessionController, SwitchOutcome,
};

fn images(list: Option<Vec<ImageContent>>) -> Vec<ImageInput> {
    list.unwrap_or_default()
        .into_iter()
        .map(|i| ImageInput {
            data: i.data,
            mime_type: i.mime_type,
        })
        .collect()
}

fn behavior(b: StreamingBehavior) -> controller::StreamingBehavior {
    match b {
        StreamingBehavior::Steer => controller::StreamingBehavior::Steer,
        StreamingBehavior::FollowUp => controller::StreamingBehavior::FollowUp,
    }
}

fn queue_mode(m: DeliveryMode) -> QueueMode {
    match m {
        DeliveryMode::All => QueueMode::All,
        DeliveryMode::OneAtATime => QueueMode::OneAtATime,
    }
}

/// The tag `bash_execution_update` events carry: the command's id, as text.
fn bash_tag(id: &Option<Value>) -> Option<String> {
    match id {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => Some(other.to_string()),
    }
}

/// Records whose sender waits until the writer has written them (and every event queued
/// before them).
pub type Written = mpsc::UnboundedSender<(Outgoing, oneshot::Sender<()>)>;

/// Runs `command` on the controller and builds its one response; `None` when the response
/// was already written through `out` (a prompt that started a run is answered before the
/// run's first event).
pub async fn dispatch(
    controller: SessionController,
    id: Option<Value>,
    command: Command,
    out: Written,
) -> Option<Response> {
    let name = command.name();
    match run(&controller, &id, command, &out).await {
        Ok(Some(data)) => Some(Response::success(id, data)),
        Ok(None) => None,
        Err(e) => Some(Response::failure(id, name, e.to_string())),
    }
}

/// `prompt`: a run that starts is answered before its first event (and nothing more is
/// answered after it); one that does not start is answered with what became of it.
async fn prompt(
    c: &SessionController,
    id: &Option<Value>,
    req: PromptRequest,
    out: &Written,
) -> Result<Option<ResponseData>, ControllerError> {
    let answer = Response::success(
        id.clone(),
        ResponseData::Prompt(PromptOutcome {
            disposition: Disposition::Started,
            command_text: None,
        }),
    );
    let outcome = c
        .prompt_with(req, || async {
            // Written before the run starts, so before its `agent_start`.
            let (written, done) = oneshot::channel();
            if out.send((Outgoing::Response(answer), written)).is_ok() {
                let _ = done.await;
            }
        })
        .await?;
    if outcome.disposition == Disposition::Started {
        return Ok(None);
    }
    Ok(Some(ResponseData::Prompt(outcome)))
}

async fn run(
    c: &SessionController,
    id: &Option<Value>,
    command: Command,
    out: &Written,
) -> Result<Option<ResponseData>, ControllerError> {
    use ResponseData as D;
    Ok(Some(match command {
        Command::Prompt {
            message,
            images: imgs,
            streaming_behavior,
        } => {
            let req = PromptRequest {
                message,
                images: images(imgs),
                streaming_behavior: streaming_behavior.map(behavior),
            };
            return prompt(c, id, req, out).await;
        }
        Command::Steer {
            message,
            images: imgs,
        } => D::Steer(
            c.queue_message(controller::StreamingBehavior::Steer, message, images(imgs))
                .await?,
        ),
        Command::FollowUp {
            message,
            images: imgs,
        } => D::FollowUp(
            c.queue_message(
                controller::StreamingBehavior::FollowUp,
                message,
                images(imgs),
            )
            .await?,
        ),
        Command::Abort => {
            c.abort().await;
            D::Abort
        }
        Command::ClearQueue => D::ClearQueue(c.clear_queue()),
        Command::NewSession { parent_session } => {
            D::NewSession(c.new_session(parent_session).await?)
        }
        Command::GetState => D::GetState(c.get_state()),
        Command::SetModel { provider, model_id } => D::SetModel(c.set_model(&provider, &model_id)?),
        Command::CycleModel => D::CycleModel(c.cycle_model()?),
        Command::GetAvailableModels => D::GetAvailableModels(c.get_available_models()),
        Command::SetThinkingLevel { level } => {
            c.set_thinking_level(level);
            D::SetThinkingLevel
        }
        Command::CycleThinkingLevel => D::CycleThinkingLevel(c.cycle_thinking_level()),
        Command::GetAvailableThinkingLevels => {
            D::GetAvailableThinkingLevels(c.get_available_thinking_levels())
        }
        Command::SetSteeringMode { mode } => {
            c.set_steering_mode(queue_mode(mode));
            D::SetSteeringMode
        }
        Command::SetFollowUpMode { mode } => {
            c.set_follow_up_mode(queue_mode(mode));
            D::SetFollowUpMode
        }
        Command::Compact {
            custom_instructions,
        } => D::Compact(c.compact(custom_instructions).await?),
        Command::SetAutoCompaction { enabled } => {
            c.set_auto_compaction(enabled);
            D::SetAutoCompaction
        }
        Command::SetAutoRetry { enabled } => {
            c.set_auto_retry(enabled);
            D::SetAutoRetry
        }
        Command::AbortRetry => {
            c.abort_retry();
            D::AbortRetry
        }
        Command::Bash {
            command,
            exclude_from_context,
        } => D::Bash(
            c.bash(BashRequest {
                command,
                exclude_from_context: exclude_from_context.unwrap_or(false),
                id: bash_tag(id),
            })
            .await?,
        ),
        Command::AbortBash => {
            c.abort_bash();
            D::AbortBash
        }
        Command::GetSessionStats => D::GetSessionStats(c.get_session_stats()),
        Command::ExportHtml { output_path } => {
            let theme = c.settings_theme();
            D::ExportHtml(c.export_html(output_path.as_deref(), theme.as_deref())?)
        }
        Command::SwitchSession { session_path } => {
            D::SwitchSession(c.switch_session(&session_path).await?)
        }
        Command::Fork { entry_id } => D::Fork(c.fork(&entry_id).await?),
        Command::Clone => {
            let forked = c.clone_session().await?;
            D::Clone(SwitchOutcome {
                cancelled: forked.cancelled,
                session_file: forked.session_file,
                session_id: forked.session_id,
            })
        }
        Command::GetForkMessages => D::GetForkMessages(c.get_fork_messages()),
        Command::GetEntries { since } => D::GetEntries(c.get_entries(since.as_deref())?),
        Command::GetTree => D::GetTree(c.get_tree()?),
        Command::GetLastAssistantText => D::GetLastAssistantText(c.get_last_assistant_text()),
        Command::SetSessionName { name } => {
            c.set_session_name(&name)?;
            D::SetSessionName
        }
        Command::GetMessages => D::GetMessages(c.get_messages()),
        Command::GetCommands => D::GetCommands(c.get_commands()),
        Command::Login { provider } => D::Login(c.login(provider.as_deref(), false).await?),
        Command::Logout { provider } => D::Logout(c.logout(provider.as_deref()).await?),
    }))
}
