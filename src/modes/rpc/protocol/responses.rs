//! The response envelope, `{id?, type:"response", command, success, data?, error?}`, and the
//! typed data of each command's success.
//!
//! On the wire `command` names the data's type, which is exactly serde's adjacent tagging
//! (`tag = "command", content = "data"`): a success is `ResponseData` with the envelope's other
//! keys around it. Commands without data have no `data` key; `cycle_model` and
//! `cycle_thinking_level` send `"data": null` when there is nothing to cycle.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::controller::types::*;

/// A successful command's data, tagged by its command: the controller's result types.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", content = "data", rename_all = "snake_case")]
pub enum ResponseData {
    Prompt(PromptOutcome),
    Steer(PromptOutcome),
    FollowUp(PromptOutcome),
    Abort,
    ClearQueue(QueuedMessages),
    NewSession(SwitchOutcome),
    GetState(StateSnapshot),
    SetModel(ModelInfo),
    CycleModel(Option<CycledModel>),
    GetAvailableModels(ModelList),
    SetThinkingLevel,
    CycleThinkingLevel(Option<ThinkingLevelOutcome>),
    GetAvailableThinkingLevels(ThinkingLevels),
    SetSteeringMode,
    SetFollowUpMode,
    Compact(CompactOutcome),
    SetAutoCompaction,
    SetAutoRetry,
    AbortRetry,
    Bash(BashOutcome),
    AbortBash,
    GetSessionStats(SessionStats),
    ExportHtml(ExportPath),
    SwitchSession(SwitchOutcome),
    Fork(ForkOutcome),
    Clone(SwitchOutcome),
    GetForkMessages(ForkMessages),
    GetEntries(EntriesPage),
    GetTree(TreeView),
    GetLastAssistantText(LastAssistantText),
    SetSessionName,
    GetMessages(Messages),
    GetCommands(Commands),
    Login(AuthOutcome),
    Logout(AuthOutcome),
}

/// One response: exactly one per command line (none for `extension_ui_response`).
#[derive(Debug, Clone, PartialEq)]
pub enum Response {
    Success {
        id: Option<Value>,
        /// Boxed: some data (a whole session state) is far larger than a failure.
        data: Box<ResponseData>,
    },
    Failure {
        id: Option<Value>,
        /// The command's `type`; `parse` for a line that is not JSON; absent only when the line
        /// had no string `type` (TypeScript pi 1.6 omits it then too).
        command: Option<String>,
        error: String,
    },
}

impl Response {
    pub fn success(id: Option<Value>, data: ResponseData) -> Response {
        Response::Success {
            id,
            data: Box::new(data),
        }
    }

    pub fn failure(id: Option<Value>, command: &str, error: impl Into<String>) -> Response {
        Response::Failure {
            id,
            command: Some(command.to_string()),
            error: error.into(),
        }
    }

    pub fn id(&self) -> Option<&Value> {
        match self {
            Response::Success { id, .. } | Response::Failure { id, .. } => id.as_ref(),
        }
    }

    /// The wire object, keys in TypeScript pi's order: id, type, command, success, data/error.
    pub fn to_value(&self) -> Result<Value, serde_json::Error> {
        let mut out = Map::new();
        if let Some(id) = self.id() {
            out.insert("id".into(), id.clone());
        }
        out.insert("type".into(), "response".into());
        match self {
            Response::Success { data, .. } => {
                let Value::Object(tagged) = serde_json::to_value(data)? else {
                    return Err(serde_json::Error::custom("response data is not an object"));
                };
                let mut tagged = tagged;
                if let Some(command) = tagged.remove("command") {
                    out.insert("command".into(), command);
                }
                out.insert("success".into(), true.into());
                if let Some(data) = tagged.remove("data") {
                    out.insert("data".into(), data);
                }
            }
            Response::Failure { command, error, .. } => {
                if let Some(command) = command {
                    out.insert("command".into(), command.clone().into());
                }
                out.insert("success".into(), false.into());
                out.insert("error".into(), error.clone().into());
            }
        }
        Ok(Value::Object(out))
    }

    /// Reads a wire object back. A success's `command` and `data` must fit [`ResponseData`].
    pub fn from_value(value: Value) -> Result<Response, serde_json::Error> {
        let Value::Object(mut map) = value else {
            return Err(serde_json::Error::custom(
                "a response must be a JSON object",
            ));
        };
        if map.get("type").and_then(Value::as_str) != Some("response") {
            return Err(serde_json::Error::custom(
                "a response must have \"type\": \"response\"",
            ));
        }
        let id = map.remove("id");
        let success = map
            .get("success")
            .and_then(Value::as_bool)
            .ok_or_else(|| serde_json::Error::custom("\"success\" must be a boolean"))?;
        if success {
            let mut tagged = Map::new();
            for key in ["command", "data"] {
                if let Some(v) = map.remove(key) {
                    tagged.insert(key.into(), v);
                }
            }
            let data = serde_json::from_value(Value::Object(tagged))?;
            return Ok(Response::success(id, data));
        }
        let command = match map.remove("command") {
            None => None,
            Some(Value::String(c)) => Some(c),
            Some(_) => return Err(serde_json::Error::custom("\"command\" must be a string")),
        };
        let error = match map.remove("error") {
            Some(Value::String(e)) => e,
            _ => {
                return Err(serde_json::Error::custom(
                    "a failure needs a string \"error\"",
                ))
            }
        };
        Ok(Response::Failure { id, command, error })
    }
}

impl Response {
    /// The wire object as JSON text, keys in TypeScript pi's order, without building a
    /// `Value` (a response is on every command's round trip). The data is serialised once,
    /// adjacently tagged — `{"command":"<name>"` then `,"data":…}` or `}` — and the envelope's
    /// other keys are put around its parts.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        let Response::Success { id, data } = self else {
            return serde_json::to_string(&self.to_value()?);
        };
        let tagged = serde_json::to_string(data)?;
        const TAG: &str = "{\"command\":\"";
        // Command names are snake_case words: the tag's value ends at the next quote.
        let name_end = tagged
            .strip_prefix(TAG)
            .and_then(|rest| rest.find('"'))
            .map(|i| TAG.len() + i + 1)
            .ok_or_else(|| serde_json::Error::custom("response data without its command"))?;
        let mut out = String::with_capacity(tagged.len() + 64);
        out.push('{');
        if let Some(id) = id {
            out.push_str("\"id\":");
            out.push_str(&serde_json::to_string(id)?);
            out.push(',');
        }
        out.push_str("\"type\":\"response\",");
        out.push_str(&tagged[1..name_end]);
        out.push_str(",\"success\":true");
        out.push_str(&tagged[name_end..]);
        Ok(out)
    }
}

impl Serialize for Response {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let json = self.to_json().map_err(serde::ser::Error::custom)?;
        serde_json::value::RawValue::from_string(json)
            .map_err(serde::ser::Error::custom)?
            .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Response {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Response::from_value(Value::deserialize(d)?).map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn data_less_and_null_data_responses_keep_their_shapes() {
        let abort = Response::success(Some(json!("a")), ResponseData::Abort);
        assert_eq!(
            serde_json::to_value(&abort).unwrap(),
            json!({"id": "a", "type": "response", "command": "abort", "success": true})
        );
        let cycle = Response::success(None, ResponseData::CycleThinkingLevel(None));
        let v = serde_json::to_value(&cycle).unwrap();
        assert_eq!(
            v,
            json!({"type": "response", "command": "cycle_thinking_level", "success": true,
                "data": null})
        );
        assert_eq!(serde_json::from_value::<Response>(v).unwrap(), cycle);
    }

    #[test]
    fn the_json_text_is_the_wire_object_with_pis_key_order() {
        let state = Response::success(
            Some(json!(7)),
            ResponseData::GetLastAssistantText(crate::controller::LastAssistantText {
                text: Some("hi \"there\"".into()),
            }),
        );
        assert_eq!(
            state.to_json().unwrap(),
            r#"{"id":7,"type":"response","command":"get_last_assistant_text","success":true,"data":{"text":"hi \"there\""}}"#
        );
        let abort = Response::success(None, ResponseData::Abort);
        assert_eq!(
            abort.to_json().unwrap(),
            r#"{"type":"response","command":"abort","success":true}"#
        );
        for r in [state, abort] {
            let v = serde_json::to_value(&r).unwrap();
            assert_eq!(v, r.to_value().unwrap());
            assert_eq!(serde_json::from_value::<Response>(v).unwrap(), r);
        }
    }

    #[test]
    fn a_success_whose_data_does_not_fit_its_command_is_refused() {
        let bad = json!({"type": "response", "command": "prompt", "success": true,
            "data": {"disposition": "exploded"}});
        assert!(serde_json::from_value::<Response>(bad).is_err());
        let unknown = json!({"type": "response", "command": "nope", "success": true});
        assert!(serde_json::from_value::<Response>(unknown).is_err());
    }
}
