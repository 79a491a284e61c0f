//! Cost: every assistant message's `usage.cost` is priced from the model's models.json `cost`
//! rates (dollars per million tokens, cache reads and writes at their own rates) when the
//! message ends, and JSON mode and the session file carry it as the TypeScript pi writes it.
//!
//! The reference is pi 1.6.0 (`tests/ts-pi`): when it is installed, the same conversation is
//! run through it against the same mock model (for OpenAI, `prompt_tokens_details` with
//! `cached_tokens` and `cache_write_tokens`, which 1.6 counts apart) and both programs' usage
//! objects must agree. Without it, the expected objects below (pi's `calculateCost` evaluated
//! by node for the same usage and rates) still hold each run to pi's numbers and layout.

use serde_json::{json, Value};

use crate::common::ts_pi::TsPi;
use crate::common::{of_type, MockModel, MockUsage, Output, TestAgent, Turn};
use crate::sessions::only_session_file;

/// Sonnet-like prices, one per token kind, so a wrong rate shows in the total.
fn rates() -> Value {
    json!({"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75})
}

/// Small enough that some parts cost under $0.00001, where JavaScript and serde_json lay
/// numbers out differently (`0.000003` against `3e-6`).
const USAGE: MockUsage = MockUsage {
    input: 1,
    output: 7,
    cache_read: 1000,
    cache_write: 2,
};

/// pi 0.73.1's `usage` for [`USAGE`] at [`rates`], as `JSON.stringify` writes it (node ran
/// pi's `calculateCost` on them).
const PIS_USAGE: &str = r#"{"input":1,"output":7,"cacheRead":1000,"cacheWrite":2,"totalTokens":1010,"cost":{"input":0.000003,"output":0.000105,"cacheRead":0.0003,"cacheWrite":0.0000075,"total":0.0004155}}"#;

/// The mock's models.json with [`rates`] on both of its models.
fn priced_models(mock: &MockModel) -> Value {
    let mut models = mock.models_json();
    for provider in ["mock", "mock-anthropic"] {
        models["providers"][provider]["models"][0]["cost"] = rates();
    }
    models
}

/// What one priced run left behind: the assistant `message_end` event and the assistant's
/// session line, each as parsed JSON and as the text that was written.
struct Priced {
    event: Value,
    event_line: String,
    session_line: String,
}

impl Priced {
    fn usage(&self) -> &Value {
        &self.event["message"]["usage"]
    }
}

/// The assistant `message_end` line of a JSON-mode run and the assistant line of its session.
#[track_caller]
fn priced(out: &Output, agent: &TestAgent) -> Priced {
    out.assert_ok();
    let ends: Vec<(&str, Value)> = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok().map(|v| (l, v)))
        .filter(|(_, v)| v["type"] == "message_end" && v["message"]["role"] == "assistant")
        .collect();
    assert_eq!(ends.len(), 1, "one assistant message_end\n{out}");
    let (event_line, event) = ends.into_iter().next().unwrap_or_default();
    let session = std::fs::read_to_string(only_session_file(agent)).expect("read session");
    let assistant: Vec<&str> = session
        .lines()
        .filter(|l| {
            serde_json::from_str::<Value>(l)
                .is_ok_and(|v| v["type"] == "message" && v["message"]["role"] == "assistant")
        })
        .collect();
    assert_eq!(assistant.len(), 1, "one assistant line\n{session}");
    Priced {
        event_line: event_line.to_string(),
        event,
        session_line: assistant[0].to_string(),
    }
}

/// One prompt in JSON mode with `model` against a fresh mock that reports [`USAGE`], run by
/// the TypeScript pi when `ts` is given and by ours otherwise.
async fn run_priced(model: &str, ts: Option<&TsPi>) -> Priced {
    let mock = MockModel::start(vec![Turn::text("priced")]).await;
    mock.set_usage(USAGE);
    let agent = TestAgent::new();
    agent.write_models(&priced_models(&mock));
    let args = ["--model", model, "--mode", "json", "-p", "price this"];
    let out = match ts {
        Some(ts) => ts.run(&agent, &args).await,
        None => agent.run(&args).await,
    };
    priced(&out, &agent)
}

/// Asserts that two usage objects hold the same numbers, costs to floating-point tolerance.
#[track_caller]
fn assert_same_usage(ours: &Value, theirs: &Value) {
    for k in ["input", "output", "cacheRead", "cacheWrite", "totalTokens"] {
        assert_eq!(
            ours[k], theirs[k],
            "usage.{k}: ours {ours}, theirs {theirs}"
        );
    }
    for k in ["input", "output", "cacheRead", "cacheWrite", "total"] {
        let (a, b) = (ours["cost"][k].as_f64(), theirs["cost"][k].as_f64());
        let (Some(a), Some(b)) = (a, b) else {
            panic!("usage.cost.{k} is not a number: ours {ours}, theirs {theirs}");
        };
        assert!(
            (a - b).abs() <= 1e-12 * a.abs().max(b.abs()),
            "usage.cost.{k}: ours {a}, theirs {b}"
        );
    }
}

/// `line` without the usage fields pi 1.6 added (`reasoning`, `cacheWrite1h`,
/// `cost.totalFromProvider`): the expected text is the older pi's, which lacks them; the
/// numbers and their layout must still be the same.
fn without_1_6_fields(line: &str) -> String {
    let re = regex::Regex::new(
        r#""reasoning":\d+,|,"cacheWrite1h":\d+|,"totalFromProvider":(true|false)"#,
    )
    .expect("pattern");
    re.replace_all(line, "").into_owned()
}

/// Ours must write pi's usage object in the event and in the session, to the byte; with the
/// TypeScript pi installed, its run must agree with ours.
async fn check_against_pi(model: &str) {
    let ours = run_priced(model, None).await;
    let expected: Value = serde_json::from_str(PIS_USAGE).expect("expected usage");
    assert_same_usage(ours.usage(), &expected);
    let written = format!("\"usage\":{PIS_USAGE}");
    assert!(
        without_1_6_fields(&ours.event_line).contains(&written),
        "message_end does not carry pi's usage text {PIS_USAGE}:\n{}",
        ours.event_line
    );
    assert!(
        without_1_6_fields(&ours.session_line).contains(&written),
        "the session line does not carry pi's usage text {PIS_USAGE}:\n{}",
        ours.session_line
    );

    // pi 1.6, the program to match: the same numbers and the same text (its 1.6 fields
    // aside, which `PIS_USAGE` lacks).
    let Some(ts) = TsPi::find_v1_6() else { return };
    let theirs = run_priced(model, Some(&ts)).await;
    assert_same_usage(ours.usage(), theirs.usage());
    assert!(
        without_1_6_fields(&theirs.session_line).contains(&written),
        "pi 1.6 wrote another usage than the one this test expects:\n{}",
        theirs.session_line
    );
    for k in ["reasoning", "cacheWrite1h"] {
        assert_eq!(ours.usage()[k], theirs.usage()[k], "usage.{k}");
    }
}

#[tokio::test]
async fn openai_completions_usage_is_priced_as_pi_prices_it_in_events_and_session() {
    check_against_pi("mock/mock-model").await;
}

#[tokio::test]
async fn anthropic_messages_usage_is_priced_as_pi_prices_it_in_events_and_session() {
    check_against_pi("mock-anthropic/mock-claude").await;
}

#[tokio::test]
async fn faux_messages_are_priced_at_the_rates_of_a_model_override() {
    let agent = TestAgent::new();
    agent.write_models(&json!({"providers": {"faux": {"modelOverrides": {
        "faux-1": {"cost": {"input": 2, "output": 8}}}}}}));
    let steps = json!(["a reply long enough to be several faux tokens"]);
    let out = agent
        .run_faux(steps, &["--mode", "json", "price this"])
        .await;
    out.assert_ok();
    let events = out.events();
    let ends = of_type(&events, "message_end");
    let end = ends
        .iter()
        .find(|e| e["message"]["role"] == "assistant")
        .expect("assistant message_end");
    let usage = &end["message"]["usage"];
    let tokens = |k: &str| usage[k].as_u64().expect("token count") as f64;
    let (input, output) = (tokens("input"), tokens("output"));
    assert!(input > 0.0 && output > 0.0, "{usage}");
    let cost = &usage["cost"];
    assert_eq!(cost["input"].as_f64(), Some(2.0 / 1e6 * input), "{usage}");
    assert_eq!(cost["output"].as_f64(), Some(8.0 / 1e6 * output), "{usage}");
    assert_eq!(cost["cacheRead"], 0, "{usage}");
    assert_eq!(
        cost["total"].as_f64(),
        Some(2.0 / 1e6 * input + 8.0 / 1e6 * output),
        "{usage}"
    );
}

#[tokio::test]
async fn unusable_rates_warn_naming_model_and_key_and_the_model_runs_free() {
    let mock = MockModel::start(vec![Turn::text("free")]).await;
    mock.set_usage(USAGE);
    let agent = TestAgent::new();
    let mut models = priced_models(&mock);
    models["providers"]["mock"]["models"][0]["cost"]["cacheWrite"] = json!("3.75");
    agent.write_models(&models);
    let out = agent
        .run(&["--model", "mock/mock-model", "--mode", "json", "-p", "hi"])
        .await;
    let run = priced(&out, &agent);
    assert!(
        out.stderr.contains("models.json")
            && out.stderr.contains("\"mock-model\"")
            && out.stderr.contains("cost.cacheWrite")
            && out.stderr.contains("cost 0"),
        "no warning naming the model and the key\n{out}"
    );
    assert_eq!(
        run.usage()["cost"],
        json!({"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0,
            "totalFromProvider": false}),
        "{}",
        run.event_line
    );
    assert_eq!(run.usage()["totalTokens"], 1010, "tokens are still counted");
}
