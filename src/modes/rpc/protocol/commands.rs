//! What a client sends on stdin: the commands (TypeScript pi 1.6.0's `RpcCommand` union, names
//! and fields as on its wire) and the decoding of one input line into a command, an extension UI
//! answer, or the error response that line must get.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::responses::Response;
use super::ui::ExtensionUiResponse;
use crate::provider::ThinkingLevel;

/// One command with its optional correlation id. The id is echoed verbatim in the response;
/// TypeScript pi documents a string but echoes any JSON value, so this keeps whatever came.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandEnvelope {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Value>,
    #[serde(flatten)]
    pub command: Command,
}

/// An image attached to a prompt, steer or follow-up (`ImageContent`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "image")]
pub struct ImageContent {
    /// Base64 of the image bytes.
    pub data: String,
    #[serde(rename = "mimeType")]
    pub mime_type: String,
}

/// How a prompt sent while the agent streams is queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StreamingBehavior {
    #[serde(rename = "steer")]
    Steer,
    #[serde(rename = "followUp")]
    FollowUp,
}

/// How queued steering or follow-up messages are delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DeliveryMode {
    #[serde(rename = "all")]
    All,
    #[serde(rename = "one-at-a-time")]
    OneAtATime,
}

/// Every command TypeScript pi 1.6.0 accepts. Unknown fields are ignored, as there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Command {
    Prompt {
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        images: Option<Vec<ImageContent>>,
        #[serde(
            rename = "streamingBehavior",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        streaming_behavior: Option<StreamingBehavior>,
    },
    Steer {
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        images: Option<Vec<ImageContent>>,
    },
    FollowUp {
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        images: Option<Vec<ImageContent>>,
    },
    Abort,
    ClearQueue,
    NewSession {
        #[serde(
            rename = "parentSession",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        parent_session: Option<String>,
    },
    GetState,
    SetModel {
        provider: String,
        #[serde(rename = "modelId")]
        model_id: String,
    },
    CycleModel,
    GetAvailableModels,
    SetThinkingLevel {
        level: ThinkingLevel,
    },
    CycleThinkingLevel,
    GetAvailableThinkingLevels,
    SetSteeringMode {
        mode: DeliveryMode,
    },
    SetFollowUpMode {
        mode: DeliveryMode,
    },
    Compact {
        #[serde(
            rename = "customInstructions",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        custom_instructions: Option<String>,
    },
    SetAutoCompaction {
        enabled: bool,
    },
    SetAutoRetry {
        enabled: bool,
    },
    AbortRetry,
    Bash {
        command: String,
        #[serde(
            rename = "excludeFromContext",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        exclude_from_context: Option<bool>,
    },
    AbortBash,
    GetSessionStats,
    ExportHtml {
        #[serde(
            rename = "outputPath",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        output_path: Option<String>,
    },
    SwitchSession {
        #[serde(rename = "sessionPath")]
        session_path: String,
    },
    Fork {
        #[serde(rename = "entryId")]
        entry_id: String,
    },
    Clone,
    GetForkMessages,
    GetEntries {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        since: Option<String>,
    },
    GetTree,
    GetLastAssistantText,
    SetSessionName {
        name: String,
    },
    GetMessages,
    GetCommands,
    /// pi's own: sign in to `provider` (asked for when absent), the flow's questions sent as
    /// extension UI requests.
    Login {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider: Option<String>,
    },
    /// pi's own: remove a stored credential (asked for when absent).
    Logout {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider: Option<String>,
    },
}

impl Command {
    /// The command's `type` (a failure's `command`).
    pub fn name(&self) -> &'static str {
        match self {
            Command::Prompt { .. } => "prompt",
            Command::Steer { .. } => "steer",
            Command::FollowUp { .. } => "follow_up",
            Command::Abort => "abort",
            Command::ClearQueue => "clear_queue",
            Command::NewSession { .. } => "new_session",
            Command::GetState => "get_state",
            Command::SetModel { .. } => "set_model",
            Command::CycleModel => "cycle_model",
            Command::GetAvailableModels => "get_available_models",
            Command::SetThinkingLevel { .. } => "set_thinking_level",
            Command::CycleThinkingLevel => "cycle_thinking_level",
            Command::GetAvailableThinkingLevels => "get_available_thinking_levels",
            Command::SetSteeringMode { .. } => "set_steering_mode",
            Command::SetFollowUpMode { .. } => "set_follow_up_mode",
            Command::Compact { .. } => "compact",
            Command::SetAutoCompaction { .. } => "set_auto_compaction",
            Command::SetAutoRetry { .. } => "set_auto_retry",
            Command::AbortRetry => "abort_retry",
            Command::Bash { .. } => "bash",
            Command::AbortBash => "abort_bash",
            Command::GetSessionStats => "get_session_stats",
            Command::ExportHtml { .. } => "export_html",
            Command::SwitchSession { .. } => "switch_session",
            Command::Fork { .. } => "fork",
            Command::Clone => "clone",
            Command::GetForkMessages => "get_fork_messages",
            Command::GetEntries { .. } => "get_entries",
            Command::GetTree => "get_tree",
            Command::GetLastAssistantText => "get_last_assistant_text",
            Command::SetSessionName { .. } => "set_session_name",
            Command::GetMessages => "get_messages",
            Command::GetCommands => "get_commands",
            Command::Login { .. } => "login",
            Command::Logout { .. } => "logout",
        }
    }

    /// Every command's `type`, to tell an unknown command from a known one with bad fields.
    pub const NAMES: [&'static str; 36] = [
        "prompt",
        "steer",
        "follow_up",
        "abort",
        "clear_queue",
        "new_session",
        "get_state",
        "set_model",
        "cycle_model",
        "get_available_models",
        "set_thinking_level",
        "cycle_thinking_level",
        "get_available_thinking_levels",
        "set_steering_mode",
        "set_follow_up_mode",
        "compact",
        "set_auto_compaction",
        "set_auto_retry",
        "abort_retry",
        "bash",
        "abort_bash",
        "get_session_stats",
        "export_html",
        "switch_session",
        "fork",
        "clone",
        "get_fork_messages",
        "get_entries",
        "get_tree",
        "get_last_assistant_text",
        "set_session_name",
        "get_messages",
        "get_commands",
        "login",
        "logout",
        // Not a command (it answers a dialog and gets no response), but a known input type.
        "extension_ui_response",
    ];
}

/// A decoded input line.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    Command(CommandEnvelope),
    UiResponse(ExtensionUiResponse),
}

/// Why an input line is not a command. Every case but [`DecodeError::BadUiResponse`] is
/// answered with exactly one error response ([`DecodeError::response`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DecodeError {
    /// Not JSON (or not UTF-8): answered as `command: "parse"`, no id.
    #[error("Failed to parse command: {0}")]
    Parse(String),
    /// A line over the framing limit, discarded unread: also a `parse` error.
    #[error("Failed to parse command: the line is {len} bytes, over the {max}-byte limit")]
    TooLong { len: usize, max: usize },
    /// JSON, but not an object, or an object without a string `type`. TypeScript pi answers
    /// these without a `command` field (its `command.type` is undefined); so do we.
    #[error("Failed to parse command: {what}")]
    NoType { id: Option<Value>, what: String },
    /// A `type` no command has.
    #[error("Unknown command: {ty}")]
    Unknown { id: Option<Value>, ty: String },
    /// A known command whose fields do not fit it (a missing `message`, a bad `level`, …).
    #[error("Invalid {ty} command: {reason}")]
    Invalid {
        id: Option<Value>,
        ty: String,
        reason: String,
    },
    /// An `extension_ui_response` that does not fit its shape. Never answered (a UI answer gets
    /// no response); the mode logs it.
    #[error("Invalid extension_ui_response: {0}")]
    BadUiResponse(String),
}

impl DecodeError {
    /// The one response this line gets, or `None` for a bad UI answer.
    pub fn response(&self) -> Option<Response> {
        let error = self.to_string();
        let (id, command) = match self {
            DecodeError::Parse(_) | DecodeError::TooLong { .. } => (None, Some("parse".into())),
            DecodeError::NoType { id, .. } => (id.clone(), None),
            DecodeError::Unknown { id, ty } | DecodeError::Invalid { id, ty, .. } => {
                (id.clone(), Some(ty.clone()))
            }
            DecodeError::BadUiResponse(_) => return None,
        };
        Some(Response::Failure { id, command, error })
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Decodes one input line (already split by the framing, CR stripped).
pub fn decode_line(line: &[u8]) -> Result<Incoming, DecodeError> {
    let value: Value =
        serde_json::from_slice(line).map_err(|e| DecodeError::Parse(e.to_string()))?;
    let Value::Object(map) = &value else {
        return Err(DecodeError::NoType {
            id: None,
            what: format!("expected a JSON object, got {}", kind_of(&value)),
        });
    };
    let id = map.get("id").filter(|v| !v.is_null()).cloned();
    let ty = match map.get("type") {
        Some(Value::String(ty)) => ty.clone(),
        other => {
            let got = other.map_or("nothing", kind_of);
            return Err(DecodeError::NoType {
                id,
                what: format!("\"type\" must be a string naming the command, got {got}"),
            });
        }
    };
    if ty == "extension_ui_response" {
        return serde_json::from_value(value)
            .map(Incoming::UiResponse)
            .map_err(|e| DecodeError::BadUiResponse(e.to_string()));
    }
    if !Command::NAMES.contains(&ty.as_str()) {
        return Err(DecodeError::Unknown { id, ty });
    }
    serde_json::from_value(value)
        .map(Incoming::Command)
        .map_err(|e| DecodeError::Invalid {
            id,
            ty,
            reason: e.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn decode(v: &str) -> Result<Incoming, DecodeError> {
        decode_line(v.as_bytes())
    }

    #[test]
    fn a_command_keeps_its_id_whatever_its_json_type() {
        let Ok(Incoming::Command(c)) = decode(r#"{"id":5,"type":"get_state"}"#) else {
            panic!("not a command");
        };
        assert_eq!(c.id, Some(json!(5)));
        assert_eq!(c.command, Command::GetState);
    }

    #[test]
    fn each_kind_of_bad_line_gets_the_response_ts_pi_gives_it() {
        let r = |s: &str| serde_json::to_value(decode(s).unwrap_err().response()).unwrap();
        assert_eq!(r("{not json")["command"], "parse");
        assert!(r("{not json")["error"]
            .as_str()
            .unwrap()
            .starts_with("Failed to parse command: "));
        assert_eq!(
            r(r#"{"id":"x","type":"frobnicate"}"#),
            json!({"id": "x", "type": "response", "command": "frobnicate", "success": false,
                "error": "Unknown command: frobnicate"})
        );
        let no_type = r(r#"{"id":"y"}"#);
        assert_eq!(no_type["id"], "y");
        assert!(no_type.get("command").is_none(), "{no_type}");
        let invalid = r(r#"{"id":"z","type":"set_thinking_level","level":"bogus"}"#);
        assert_eq!(invalid["command"], "set_thinking_level");
        assert!(
            invalid["error"].as_str().unwrap().contains("bogus"),
            "{invalid}"
        );
        assert_eq!(r("null")["success"], false);
    }

    #[test]
    fn every_known_name_is_a_command_that_decodes() {
        for name in Command::NAMES {
            let line = json!({"type": name}).to_string();
            // A name missing from the enum would fail as an unknown variant; a known command
            // without its required fields fails on those fields instead.
            match decode(&line) {
                Ok(Incoming::Command(c)) => assert_eq!(c.command.name(), name),
                Ok(_) | Err(DecodeError::BadUiResponse(_)) => {}
                Err(DecodeError::Invalid { reason, .. }) if !reason.contains("unknown variant") => {
                }
                Err(e) => panic!("{name}: {e}"),
            }
        }
    }
}
