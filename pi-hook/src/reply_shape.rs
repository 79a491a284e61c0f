//! The shape rules of hook replies, in one place: a `reply` has a `result` that is an object
//! or `null`, or an `error` that is a string, never both; and a reply type is parsed only from
//! an object, all the way down.
//!
//! Why a module of its own: serde's derives are lenient in two ways that matter here. It reads
//! a struct from a JSON array positionally, so `"result": []` used to pass as a gate's "allow",
//! and an `Option<String>` reads `null` as absent, so `"error": null` used to pass as success.
//! `protocol::Reply` is deserialized through [`RawReply`], and the runner and the bridge parse
//! results with [`parse_result`], so both holes are closed for every event, `tool_execute` and
//! `command`. Plain serde, no I/O.

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::protocol::Reply;

/// A `reply` as written, before its shape is checked. `error` keeps an explicit `null` (a
/// plain `Option` would read it as absent, and `{"error": null}` as a success).
#[derive(Deserialize)]
pub(super) struct RawReply {
    id: u64,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    error: Option<Value>,
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl TryFrom<RawReply> for Reply {
    type Error = ShapeError;

    fn try_from(raw: RawReply) -> Result<Reply, ShapeError> {
        let error = match raw.error {
            None => None,
            Some(Value::String(s)) => Some(s),
            Some(other) => return Err(ShapeError::ErrorNotString(json_kind(&other))),
        };
        if let Some(result) = &raw.result {
            check_result(result)?;
            if error.is_some() {
                return Err(ShapeError::ResultAndError);
            }
        }
        Ok(Reply {
            id: raw.id,
            result: raw.result,
            error,
        })
    }
}

/// Why a reply, or the `result` in it, does not have the protocol's shape.
#[derive(Debug, thiserror::Error)]
pub enum ShapeError {
    #[error("`result` must be an object or null, not {0}")]
    ResultNotObject(&'static str),
    #[error("`error` must be a string (the failure message), not {0}")]
    ErrorNotString(&'static str),
    #[error("a reply has `result` or `error`, not both")]
    ResultAndError,
    /// The object does not fit the event's reply type (an unknown field, a wrong type).
    #[error(transparent)]
    Fields(#[from] serde_json::Error),
}

/// "an array", "a string", … for messages about a value of the wrong kind.
pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The one rule for every reply `result` (events, `tool_execute`, `command`): an object, or
/// `null` for "no opinion". Anything else is a wrong shape — in particular an array, which
/// serde would otherwise read into a reply struct positionally (`[]` as "allow").
pub fn check_result(v: &Value) -> Result<(), ShapeError> {
    match v {
        Value::Object(_) | Value::Null => Ok(()),
        other => Err(ShapeError::ResultNotObject(json_kind(other))),
    }
}

/// Parses a reply `result` into an event's reply type: `null` is the type's defaults, an
/// object is parsed strictly, anything else fails [`check_result`].
pub fn parse_result<T: DeserializeOwned + Default>(v: Value) -> Result<T, ShapeError> {
    check_result(&v)?;
    if v.is_null() {
        return Ok(T::default());
    }
    Ok(serde_json::from_value(v)?)
}

/// For struct fields inside a reply: only a JSON object is accepted (serde would read a struct
/// from an array positionally); `null` is "none".
pub(super) fn opt_object<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    match Value::deserialize(d)? {
        Value::Null => Ok(None),
        v @ Value::Object(_) => serde_json::from_value(v)
            .map(Some)
            .map_err(D::Error::custom),
        other => Err(D::Error::custom(format!(
            "expected an object, not {}",
            json_kind(&other)
        ))),
    }
}

/// [`opt_object`] for a list of structs.
pub(super) fn objects<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let items = Vec::<Value>::deserialize(d)?;
    items
        .into_iter()
        .map(|v| match v {
            v @ Value::Object(_) => serde_json::from_value(v).map_err(D::Error::custom),
            other => Err(D::Error::custom(format!(
                "expected an object, not {}",
                json_kind(&other)
            ))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{
        BeforeAgentStartReply, BoundaryReply, GateReply, HookMessage, UserBashReply,
    };

    fn reply(text: &str) -> Result<Reply, String> {
        match serde_json::from_str::<HookMessage>(text) {
            Ok(HookMessage::Reply(r)) => Ok(r),
            Ok(other) => Err(format!("not a reply: {other:?}")),
            Err(e) => Err(e.to_string()),
        }
    }

    #[test]
    fn a_reply_is_a_result_object_or_null_or_a_string_error() {
        let r = reply(r#"{"type":"reply","id":1,"result":{"block":true}}"#).unwrap();
        assert_eq!(r.result, Some(serde_json::json!({"block": true})));
        for ok in [
            r#"{"type":"reply","id":1}"#,
            r#"{"type":"reply","id":1,"result":null}"#,
            r#"{"type":"reply","id":1,"error":"no","result":null}"#,
            r#"{"type":"reply","id":1,"result":{},"extra":1}"#,
        ] {
            assert!(reply(ok).is_ok(), "{ok}");
        }
        for (bad, why) in [
            (
                r#"{"type":"reply","id":1,"result":[]}"#,
                "`result` must be an object or null, not an array",
            ),
            (r#"{"type":"reply","id":1,"result":"yes"}"#, "not a string"),
            (r#"{"type":"reply","id":1,"result":0}"#, "not a number"),
            (
                r#"{"type":"reply","id":1,"error":null}"#,
                "`error` must be a string (the failure message), not null",
            ),
            (
                r#"{"type":"reply","id":1,"error":{"m":1}}"#,
                "not an object",
            ),
            (
                r#"{"type":"reply","id":1,"error":"x","result":{}}"#,
                "not both",
            ),
        ] {
            let e = reply(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn reply_results_are_objects_all_the_way_down() {
        // serde reads structs from arrays positionally; the reply types do not.
        assert!(parse_result::<GateReply>(serde_json::json!([])).is_err());
        assert!(parse_result::<GateReply>(Value::Null).is_ok_and(|g| !g.block));
        let positional = serde_json::json!({"message": ["t", "text"]});
        assert!(parse_result::<BeforeAgentStartReply>(positional).is_err());
        let positional = serde_json::json!({"result": ["out", 0]});
        assert!(parse_result::<UserBashReply>(positional).is_err());
        let positional = serde_json::json!({"messages": [["t", "text"]]});
        assert!(parse_result::<BoundaryReply>(positional).is_err());
        let fine = serde_json::json!({"messages": [{"custom_type": "t", "content": "c"}]});
        assert_eq!(
            parse_result::<BoundaryReply>(fine).unwrap().messages.len(),
            1
        );
        let ran = serde_json::json!({"result": {"output": "o", "exit_code": 0}});
        assert!(parse_result::<UserBashReply>(ran).is_ok_and(|r| r.result.is_some()));
    }
}
