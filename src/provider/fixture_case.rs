//! What the recorded 1.6 cases (`fixtures/providers/*_cases.json`) give every API's replay
//! test alike: the conversation and the tools of a case, in pi's types.

use std::sync::Arc;

use serde_json::Value;

use crate::message::Message;
use crate::provider::ToolSpec;

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
