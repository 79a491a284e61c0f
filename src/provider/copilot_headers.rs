//! What GitHub Copilot's endpoint needs on every model request besides the catalog's static
//! headers (VS Code's Copilot Chat user agent, editor and integration ids, which the models
//! carry): pi 1.6's dynamic ones, whichever API the model speaks. `X-Initiator` says whether
//! the user or the agent asked (a request after a tool result is the agent's, which Copilot
//! bills differently), `Openai-Intent` the kind of work, and `Copilot-Vision-Request` that
//! the conversation holds an image, without which Copilot refuses images.

use std::sync::Arc;

use super::stream::HttpRequest;
use super::{Model, Request};
use crate::message::{Content, Message, UserContent};

/// Copilot's provider id.
pub const PROVIDER: &str = "github-copilot";

/// Whether `model` is served by GitHub Copilot.
pub fn is_copilot(model: &Model) -> bool {
    model.provider == PROVIDER
}

/// Copilot's dynamic headers on `http`, when `req` goes to Copilot.
pub fn apply(http: &mut HttpRequest, req: &Request) {
    if !is_copilot(&req.model) {
        return;
    }
    for (name, value) in dynamic_headers(&req.messages) {
        http.header(name, value);
    }
}

/// 1.6's `buildCopilotDynamicHeaders` for a conversation.
pub fn dynamic_headers(messages: &[Arc<Message>]) -> Vec<(&'static str, &'static str)> {
    let mut headers = vec![
        ("X-Initiator", initiator(messages)),
        ("Openai-Intent", "conversation-edits"),
    ];
    if has_vision_input(messages) {
        headers.push(("Copilot-Vision-Request", "true"));
    }
    headers
}

/// `user` when the last message is the user's (custom messages reach the model as the
/// user's), else `agent`.
fn initiator(messages: &[Arc<Message>]) -> &'static str {
    match messages.last().map(|m| m.user_content().is_some()) {
        Some(false) => "agent",
        _ => "user",
    }
}

/// Whether a user turn or a tool result carries an image.
fn has_vision_input(messages: &[Arc<Message>]) -> bool {
    let has_image = |blocks: &[Content]| blocks.iter().any(|c| matches!(c, Content::Image { .. }));
    messages.iter().any(|m| match (m.user_content(), &**m) {
        (Some(UserContent::Blocks(blocks)), _) => has_image(blocks),
        (_, Message::ToolResult(r)) => has_image(&r.content),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn message(v: serde_json::Value) -> Arc<Message> {
        Arc::new(serde_json::from_value(v).unwrap())
    }

    fn image() -> serde_json::Value {
        json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"})
    }

    #[test]
    fn the_user_or_the_agent_initiates_and_images_ask_for_vision() {
        let user = message(json!({"role": "user", "content": "hi", "timestamp": 1}));
        assert_eq!(
            dynamic_headers(std::slice::from_ref(&user)),
            [
                ("X-Initiator", "user"),
                ("Openai-Intent", "conversation-edits")
            ]
        );
        let assistant = message(json!({"role": "assistant", "content": [], "api": "x",
            "provider": "github-copilot", "model": "m", "stopReason": "toolUse", "timestamp": 1,
            "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}}));
        let result = message(
            json!({"role": "toolResult", "toolCallId": "c", "toolName": "read",
            "content": [image()], "isError": false, "timestamp": 1}),
        );
        assert_eq!(
            dynamic_headers(&[user.clone(), assistant, result]),
            [
                ("X-Initiator", "agent"),
                ("Openai-Intent", "conversation-edits"),
                ("Copilot-Vision-Request", "true")
            ]
        );
        let look = message(json!({"role": "user", "content": [image()], "timestamp": 1}));
        let headers = dynamic_headers(&[look, user]);
        assert_eq!(headers[0], ("X-Initiator", "user"));
        assert_eq!(headers.get(2), Some(&("Copilot-Vision-Request", "true")));
    }
}
