//! The headers that route a session's requests to the same backend (and its prompt cache),
//! as pi 1.6 sends them per API: OpenRouter's `x-session-id`, OpenAI's `session-id` and
//! `x-client-request-id`, a gateway's `x-session-affinity`. Each carries the session's id,
//! which is no secret; a model's configured headers still override them.

use serde_json::Value;

use super::stream::HttpRequest;
use super::Request;

/// The API whose rules apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// `anthropic-messages`: only where `compat.sendSessionAffinityHeaders` (on for
    /// OpenRouter) says so.
    Anthropic,
    /// `openai-responses`: whenever there is a session.
    Responses,
    /// `openai-completions`: as Anthropic, with OpenAI's names besides.
    Completions,
}

fn openrouter(req: &Request) -> bool {
    req.model.provider == "openrouter" || req.model.base_url.contains("openrouter.ai")
}

/// `compat.sessionAffinityFormat`, else `openrouter` for OpenRouter and the API's default.
fn format<'a>(req: &'a Request, default: &'a str) -> &'a str {
    match req
        .model
        .compat
        .get("sessionAffinityFormat")
        .and_then(Value::as_str)
    {
        Some(f) => f,
        None if openrouter(req) => "openrouter",
        None => default,
    }
}

/// The headers `req` routes its session by (none outside a session).
pub fn headers(req: &Request, api: Api) -> Vec<(&'static str, &str)> {
    let Some(session) = req.session_id.as_deref() else {
        return Vec::new();
    };
    let send = match req.model.compat.get("sendSessionAffinityHeaders") {
        Some(Value::Bool(b)) => *b,
        _ => openrouter(req),
    };
    let mut out = Vec::new();
    match api {
        Api::Anthropic if send => out.push(match format(req, "") {
            "openrouter" => ("x-session-id", session),
            _ => ("x-session-affinity", session),
        }),
        Api::Responses => match format(req, "openai") {
            "openrouter" => out.push(("x-session-id", session)),
            f => {
                if f == "openai" {
                    out.push(("session-id", session));
                }
                out.push(("x-client-request-id", session));
            }
        },
        Api::Completions if send => match format(req, "openai") {
            "openrouter" => out.push(("x-session-id", session)),
            f => {
                if f == "openai" {
                    out.push(("session_id", session));
                }
                out.push(("x-client-request-id", session));
                out.push(("x-session-affinity", session));
            }
        },
        _ => {}
    }
    out
}

/// Adds `req`'s routing headers to `http`.
pub fn apply(http: &mut HttpRequest, req: &Request, api: Api) {
    for (name, value) in headers(req, api) {
        http.header(name, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::stream::body_support::every_kind;

    fn names(provider: &str, url: &str, compat: Value, api: Api) -> Vec<&'static str> {
        let mut req = every_kind("openai-completions");
        req.model.provider = provider.into();
        req.model.base_url = url.into();
        req.model.compat = compat;
        req.session_id = Some("s".into());
        headers(&req, api).into_iter().map(|(n, _)| n).collect()
    }

    /// As pi 1.6.0's `createClient` of each API sets them.
    #[test]
    fn each_api_routes_sessions_with_pi_1_6s_headers() {
        let none = Value::Null;
        let or = "https://openrouter.ai/api/v1";
        let oa = "https://api.openai.com/v1";
        assert_eq!(
            names("openrouter", or, none.clone(), Api::Anthropic),
            ["x-session-id"]
        );
        assert!(names(
            "anthropic",
            "https://api.anthropic.com",
            none.clone(),
            Api::Anthropic
        )
        .is_empty());
        let on = serde_json::json!({"sendSessionAffinityHeaders": true});
        assert_eq!(
            names("gw", "https://gw", on.clone(), Api::Anthropic),
            ["x-session-affinity"]
        );
        assert_eq!(
            names("openai", oa, none.clone(), Api::Responses),
            ["session-id", "x-client-request-id"]
        );
        assert_eq!(
            names("openrouter", or, none.clone(), Api::Responses),
            ["x-session-id"]
        );
        assert!(names("openai", oa, none.clone(), Api::Completions).is_empty());
        assert_eq!(
            names("openrouter", or, none, Api::Completions),
            ["x-session-id"]
        );
        assert_eq!(
            names("gw", "https://gw", on, Api::Completions),
            ["session_id", "x-client-request-id", "x-session-affinity"]
        );
    }
}
