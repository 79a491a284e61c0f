//! RPC mode's messages: plain serde types with no I/O, field for field as TypeScript pi 1.6.0
//! (`@earendil-works/pi-coding-agent`) puts them on the wire, so a client written against it
//! works against us. `commands` is stdin (and the decoding of one line), `responses` the
//! envelope and each command's data (`data` the data types), `events` the session events, and
//! `ui` the extension UI sub-protocol, which runs both ways.
//!
//! The fixtures in `fixtures/rpc/ts-pi-1.6/` were recorded from the real program; every line of
//! them must parse into these types and serialise back to the same JSON
//! (`tests/it/rpc_reference.rs`), so the types cannot drift from it.

pub mod commands;
pub mod data;
pub mod events;
pub mod responses;
pub mod ui;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

pub use commands::{decode_line, Command, CommandEnvelope, DecodeError, Incoming};
pub use events::{AssistantMessageEvent, RpcEvent};
pub use responses::{Response, ResponseData};
pub use ui::{ExtensionUiRequest, ExtensionUiResponse, UiAnswer, UiMethod};

/// One record on stdout.
#[derive(Debug, Clone, PartialEq)]
pub enum Outgoing {
    Response(Response),
    UiRequest(ExtensionUiRequest),
    Event(RpcEvent),
}

impl Serialize for Outgoing {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Outgoing::Response(r) => r.serialize(s),
            Outgoing::UiRequest(r) => r.serialize(s),
            Outgoing::Event(e) => e.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Outgoing {
    /// Dispatches on `type`, so an error names the record's own type rather than "no variant
    /// matched".
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let value = Value::deserialize(d)?;
        match value.get("type").and_then(Value::as_str) {
            Some("response") => Response::from_value(value)
                .map(Outgoing::Response)
                .map_err(D::Error::custom),
            Some("extension_ui_request") => serde_json::from_value(value)
                .map(Outgoing::UiRequest)
                .map_err(D::Error::custom),
            Some(_) => serde_json::from_value(value)
                .map(Outgoing::Event)
                .map_err(D::Error::custom),
            None => Err(D::Error::custom("a record needs a string \"type\"")),
        }
    }
}
