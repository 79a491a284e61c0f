//! Property tests of the hook reply parser (issue 8): arbitrary JSON as a reply's `result` (or
//! `error`) goes through the same path as a hook's frame — `framing::parse_frame`, the strict
//! `Reply`, `protocol::parse_result` into every event's reply type, and for `tool_call` the
//! runner's gate — and must never panic, and must never let a gated tool run unless the reply
//! is `null` or an object with only the gate's known keys. Bounded: a fixed number of cases of
//! bounded size, so it runs in CI in well under a second.

use std::time::Duration;

use async_trait::async_trait;
use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{json, Map, Value};

use super::framing::{parse_frame, Incoming};
use super::protocol::{
    parse_result, BeforeAgentStartReply, BoundaryReply, CancelableReply, ContextReply,
    DiscoverReply, FailPolicy, GateReply, HeadersReply, HookMessage, InputReply, MessageEndReply,
    ProviderRequestReply, ToolResultReply, TrustReply, UserBashReply,
};
use super::runner::{Endpoint, EndpointError, GateVerdict, Runner};
use super::spec::HookMode;

/// Keys of every reply type (so generated objects often look almost right) and a few others.
const KEYS: &[&str] = &[
    "block",
    "reason",
    "patch",
    "action",
    "text",
    "content",
    "details",
    "is_error",
    "system_prompt",
    "message",
    "messages",
    "payload",
    "headers",
    "trusted",
    "remember",
    "result",
    "cancel",
    "skill_paths",
    "prompt_paths",
    "theme_paths",
    "continue",
    "custom_type",
    "output",
    "exit_code",
    "blok",
    "type",
    "id",
    "error",
];

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(KEYS).prop_map(str::to_string),
        1 => "[a-z_]{0,6}",
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-1.0e9f64..1.0e9).prop_map(|f| json!(f)),
        prop_oneof![
            prop::sample::select(&["yes", "no", "transform", "handled", "allow", ""][..])
                .prop_map(str::to_string),
            ".{0,8}",
        ]
        .prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..5)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// What the runner is handed for a frame `{"type":"reply","id":1,<field>:<v>}`, as the
/// instance would hand it: the `result` (`null` when absent), or a failure of the request.
fn through_the_frame_parser(field: &str, v: &Value) -> Result<Value, EndpointError> {
    let frame = json!({"type": "reply", "id": 1, field: v}).to_string();
    let bad = |detail: String| EndpointError {
        kind: "bad_reply".into(),
        message: detail,
    };
    match parse_frame(frame.as_bytes()) {
        Ok(Incoming::Message(HookMessage::Reply(r))) => match r.error {
            Some(e) => Err(EndpointError {
                kind: "error_reply".into(),
                message: e,
            }),
            None => Ok(r.result.unwrap_or(Value::Null)),
        },
        Ok(Incoming::Message(other)) => Err(bad(format!("not a reply: {other:?}"))),
        Ok(Incoming::Unrecognized { reason, .. }) => Err(bad(reason)),
        Err(e) => Err(bad(e.to_string())),
    }
}

/// Whether a gate reply is one that may let a tool run: `null`, or an object with only the
/// gate's keys and no `block: true`.
fn may_allow(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Object(m) => {
            m.keys()
                .all(|k| matches!(k.as_str(), "block" | "reason" | "patch"))
                && m.get("block").is_none_or(|b| *b == Value::Bool(false))
        }
        _ => false,
    }
}

/// One gate hook answering with a fixed outcome.
struct Gate(Result<Value, EndpointError>);

#[async_trait]
impl Endpoint for Gate {
    fn name(&self) -> String {
        "prop".into()
    }
    fn wants(&self, event: &str, _tool: Option<&str>) -> Option<Duration> {
        (event == "tool_call").then_some(Duration::from_secs(1))
    }
    fn fail_policy(&self) -> FailPolicy {
        FailPolicy::Closed
    }
    fn mode(&self) -> HookMode {
        HookMode::Enforce
    }
    async fn request(&self, _: &str, _: Value, _: Duration) -> Result<Value, EndpointError> {
        self.0.clone()
    }
    fn notify(&self, _: &str, _: Value) {}
}

fn gate_allows(reply: Result<Value, EndpointError>) -> bool {
    let runner = Runner::new(vec![std::sync::Arc::new(Gate(reply))], None);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let ok = |_: &Value| Ok(());
    let verdict = rt.block_on(runner.gate("c1", "bash", json!({"command": "ls"}), &ok));
    matches!(verdict, GateVerdict::Allow { .. })
}

fn config() -> Config {
    Config {
        cases: 512,
        failure_persistence: None,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_result_parses_or_fails_without_panicking_for_every_reply_type(v in json_value()) {
        let host = through_the_frame_parser("result", &v);
        // Only null and objects pass the envelope; everything else fails the request.
        prop_assert_eq!(host.is_ok(), v.is_null() || v.is_object());
        let v = host.unwrap_or(v);
        let _ = parse_result::<GateReply>(v.clone());
        let _ = parse_result::<InputReply>(v.clone());
        let _ = parse_result::<ToolResultReply>(v.clone());
        let _ = parse_result::<BeforeAgentStartReply>(v.clone());
        let _ = parse_result::<ContextReply>(v.clone());
        let _ = parse_result::<ProviderRequestReply>(v.clone());
        let _ = parse_result::<HeadersReply>(v.clone());
        let _ = parse_result::<MessageEndReply>(v.clone());
        let _ = parse_result::<TrustReply>(v.clone());
        let _ = parse_result::<UserBashReply>(v.clone());
        let _ = parse_result::<CancelableReply>(v.clone());
        let _ = parse_result::<DiscoverReply>(v.clone());
        let _ = parse_result::<BoundaryReply>(v.clone());
        if !(v.is_null() || v.is_object()) {
            prop_assert!(parse_result::<CancelableReply>(v).is_err());
        }
    }

    #[test]
    fn a_gate_reply_that_is_not_null_or_a_known_object_never_allows(v in json_value()) {
        if gate_allows(through_the_frame_parser("result", &v)) {
            prop_assert!(may_allow(&v), "allowed by {}", v);
        }
    }

    #[test]
    fn a_gate_reply_whose_error_is_not_a_string_never_allows(v in json_value()) {
        prop_assert!(!gate_allows(through_the_frame_parser("error", &v)), "allowed by error {}", v);
    }
}

#[test]
fn the_known_bad_shapes_fail_closed() {
    for v in [
        json!([]),
        json!([false]),
        json!("allow"),
        json!(0),
        json!(true),
    ] {
        assert!(!gate_allows(through_the_frame_parser("result", &v)), "{v}");
    }
    assert!(!gate_allows(through_the_frame_parser(
        "error",
        &Value::Null
    )));
    assert!(gate_allows(through_the_frame_parser(
        "result",
        &Value::Null
    )));
    assert!(gate_allows(through_the_frame_parser(
        "result",
        &json!({"block": false})
    )));
}
