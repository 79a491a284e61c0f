//! What the recorded 1.6 cases (`fixtures/providers/*_cases.json`) give every API's replay
//! test alike: the conversation and the tools of a case, in pi's types.

use std::sync::Arc;

use serde_json::Value;

use crate::delta::AssistantDelta;
use crate::message::Message;
use crate::provider::stream::test_support::model;
use crate::provider::{thinking_map, Request, ThinkingLevel, ToolSpec};

/// The recorded cases of a fixture file's text.
pub fn all(text: &str) -> Vec<Value> {
    serde_json::from_str(text).expect("a fixture file of recorded cases")
}

/// The case named `name` among `text`'s.
pub fn named(text: &str, name: &str) -> Value {
    all(text)
        .into_iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no case {name}"))
}

/// A case's model (as 1.6's catalog has it), conversation, tools and thinking level as a
/// request to `api` for `provider`, with the case's `token` as the key (else `k`) and its
/// `env`.
pub fn request(case: &Value, api: &str, provider: &str) -> Request {
    let spec = &case["model"];
    let mut m = model(api, spec["baseUrl"].as_str().expect("a base URL"));
    m.id = spec["id"].as_str().expect("an id").into();
    m.provider = provider.into();
    m.reasoning = spec["reasoning"].as_bool().expect("reasoning");
    m.input = serde_json::from_value(spec["input"].clone()).expect("input kinds");
    m.context_window = spec["contextWindow"].as_u64().expect("a window");
    m.max_tokens = spec["maxTokens"].as_u64().expect("max tokens");
    m.cost = serde_json::from_value(spec["cost"].clone()).expect("costs");
    m.compat = spec["compat"].clone();
    m.thinking_level_map = thinking_map::parse(Some(&spec["thinkingLevelMap"]));
    // The provider's `env` (as `PI_CACHE_RETENTION=long`), where the case set one.
    for (k, v) in case["env"].as_object().into_iter().flatten() {
        m.auth
            .env
            .insert(k.clone(), v.as_str().expect("an env value").into());
    }
    Request {
        model: m,
        api_key: Some(case["token"].as_str().unwrap_or("k").into()),
        system_prompt: "sys".into(),
        messages: messages(case),
        tools: tools(case).into(),
        thinking: ThinkingLevel::parse(case["thinking"].as_str().expect("a level"))
            .expect("a known level"),
        session_id: None,
    }
}

/// A case's `messages`, as a request holds them.
pub fn messages(case: &Value) -> Vec<Arc<Message>> {
    let messages: Vec<Message> =
        serde_json::from_value(case["messages"].clone()).expect("the case's messages");
    messages.into_iter().map(Arc::new).collect()
}

/// A case's `tools`.
pub fn tools(case: &Value) -> Vec<ToolSpec> {
    case["tools"]
        .as_array()
        .expect("the case's tools")
        .iter()
        .map(|t| ToolSpec {
            name: t["name"].as_str().expect("a tool name").into(),
            description: t["description"].as_str().expect("a description").into(),
            parameters: t["parameters"].clone(),
            constrained_sampling: t.get("constrainedSampling").cloned(),
        })
        .collect()
}

/// A delta as 1.6 writes the event, without what 1.6 keeps only in its partial message (a
/// call's id and name at its start) and with the call at its end as its fields.
pub fn event(d: &AssistantDelta) -> Value {
    let mut v = serde_json::to_value(d).expect("a delta as JSON");
    if let Some(o) = v.as_object_mut() {
        o.remove("id");
        o.remove("toolName");
        if let Some(call) = o.get_mut("toolCall").and_then(Value::as_object_mut) {
            call.remove("type");
            call.remove("thoughtSignature");
        }
    }
    v
}

/// The events 1.6 emitted for a case, but its `error` (the agent's error ends the turn),
/// with the calls as [`event`] writes them.
pub fn recorded_events(case: &Value) -> Vec<Value> {
    case["events"]
        .as_array()
        .expect("the case's events")
        .iter()
        .filter(|e| e["type"] != "error")
        .map(|e| {
            let mut e = e.clone();
            if let Some(call) = e.get_mut("toolCall").and_then(Value::as_object_mut) {
                call.remove("type");
            }
            e
        })
        .collect()
}
