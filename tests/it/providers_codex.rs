//! The ChatGPT-subscription API (`openai-codex-responses`) end to end: a ChatGPT login stored
//! in `auth.json` as pi 1.6 stores it, the catalog's `openai-codex` provider pointed at the
//! mock server's `/backend-api/codex/responses`. The token as the bearer and its account as
//! `chatgpt-account-id`, Codex's body (tools declared in the conversation, the thinking level
//! in a `configuration_update`), a tool round trip whose reasoning and message ids go back, the
//! same transcript as through the Responses API, and the token kept out of hooks and logs.

use base64::Engine as _;
use serde_json::{json, Value};

use crate::common::hooks::{record_file, run_pi, scripted};
use crate::common::{write_json, MockModel, TestAgent, Turn};
use crate::providers_responses::{transcript, two_tool_turns};

const SOL: &str = "openai-codex/gpt-6.2-sol";

/// A ChatGPT access token: a JWT naming the account; the signature ends in `-LEAK` so
/// "nothing leaked" is one search.
fn token() -> String {
    let part = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    format!(
        "{}.{}.sig-LEAK",
        part(json!({"alg": "RS256"})),
        part(json!({"https://api.openai.com/auth": {"chatgpt_account_id": "acct_e2e"}}))
    )
}

fn agent_for(mock: &MockModel) -> TestAgent {
    let agent = TestAgent::new();
    let mut models = mock.models_json();
    models["providers"]["openai-codex"] = json!({"baseUrl": format!("{}/backend-api", mock.uri())});
    agent.write_models(&models);
    write_json(
        &agent.agent_dir.join("auth.json"),
        &json!({"openai-codex": {"type": "oauth", "access": token(), "refresh": "refresh-LEAK",
            "expires": 4_102_444_800_000i64, "accountId": "acct_e2e"}}),
    );
    agent
}

#[tokio::test]
async fn a_chatgpt_login_runs_tools_through_codex_with_its_account() {
    let mock = MockModel::start(two_tool_turns()).await;
    let agent = agent_for(&mock);
    agent.write_file("notes.txt", "the notes say pineapple\n");
    let out = agent
        .run(&["--model", SOL, "--thinking", "high", "-p", "run the tools"])
        .await;
    out.assert_ok();
    assert_eq!(out.stdout, "All done.\n");

    let reqs = mock.requests();
    assert_eq!(reqs.len(), 2, "{out}");
    for r in &reqs {
        assert_eq!(r.path, "/backend-api/codex/responses");
        assert_eq!(r.headers["authorization"], format!("Bearer {}", token()));
        assert_eq!(r.headers["chatgpt-account-id"], "acct_e2e");
        assert_eq!(r.headers["originator"], "pi");
        assert_eq!(r.headers["openai-beta"], "responses=experimental");
    }
    let body = &reqs[0].body;
    let keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "model",
            "store",
            "stream",
            "input",
            "text",
            "include",
            "prompt_cache_key",
            "tool_choice",
            "parallel_tool_calls",
            "max_output_tokens",
            "reasoning"
        ],
        "{body:#}"
    );
    assert_eq!(
        body["reasoning"],
        json!({"effort": "medium", "summary": "auto"})
    );
    // The session keys the prompt cache, in the body and the headers, as 1.6 sends it.
    let header: Value = std::fs::read_to_string(&crate::sessions::session_files(&agent)[0])
        .ok()
        .and_then(|t| t.lines().next().and_then(|l| serde_json::from_str(l).ok()))
        .expect("the session's header");
    let session = header["id"].as_str().expect("the session's id");
    assert_eq!(body["prompt_cache_key"], session);
    assert_eq!(reqs[0].headers["session-id"], session);
    assert_eq!(reqs[0].headers["x-client-request-id"], session);
    let input = body["input"].as_array().unwrap();
    // The tools are declared in the conversation, ahead of the prompt, as gpt-6.2 takes them.
    assert_eq!(input[0]["type"], "additional_tools");
    let tools: Vec<&str> = input[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        tools.contains(&"bash") && tools.contains(&"read"),
        "{tools:?}"
    );
    assert_eq!(input[1]["role"], "developer");
    assert_eq!(
        input.last().unwrap(),
        &json!({"type": "configuration_update", "reasoning": {"effort": "high"}})
    );
    // The second turn replays the first: the level it was made at, its calls and their outputs.
    let second = reqs[1].body["input"].as_array().unwrap();
    let types: Vec<&str> = second.iter().filter_map(|i| i["type"].as_str()).collect();
    let first_update = types.iter().position(|t| *t == "configuration_update");
    let first_call = types.iter().position(|t| *t == "function_call");
    assert!(first_update < first_call, "{types:?}");
    let outputs: Vec<&Value> = second
        .iter()
        .filter(|i| i["type"] == "function_call_output")
        .collect();
    assert_eq!(outputs.len(), 2, "{second:#?}");
    assert!(outputs[1]["output"].as_str().unwrap().contains("pineapple"));
}

#[tokio::test]
async fn one_session_through_responses_and_codex_gives_one_transcript() {
    let mut seen = Vec::new();
    for model in ["mock-responses/mock-gpt", SOL] {
        let mock = MockModel::start(two_tool_turns()).await;
        let agent = agent_for(&mock);
        let mut models = mock.models_json();
        models["providers"]["openai-codex"] =
            json!({"baseUrl": format!("{}/backend-api", mock.uri())});
        models["providers"]["mock-responses"] = json!({"baseUrl": format!("{}/v1", mock.uri()),
            "api": "openai-responses", "apiKey": "test-key",
            "models": [{"id": "mock-gpt", "reasoning": true, "input": ["text", "image"]}]});
        agent.write_models(&models);
        agent.write_file("notes.txt", "the notes say pineapple\n");
        let out = agent.run(&["--model", model, "-p", "run the tools"]).await;
        out.assert_ok();
        seen.push(
            transcript(&agent)
                .into_iter()
                .map(|mut m| {
                    // Which API and model made a turn is the one difference wanted.
                    if let Some(o) = m.as_object_mut() {
                        o.remove("api");
                        o.remove("provider");
                        o.remove("model");
                    }
                    m
                })
                .collect::<Vec<_>>(),
        );
    }
    assert_eq!(seen[0].len(), 6, "{:#?}", seen[0]);
    assert_eq!(seen[0], seen[1]);
}

#[tokio::test]
async fn the_chatgpt_token_reaches_the_server_but_never_hooks_or_logs() {
    let mock = MockModel::start(vec![Turn::text("kept")]).await;
    let agent = agent_for(&mock);
    let watch = scripted(
        &agent,
        "watch",
        json!({"subscriptions": [{"event": "before_provider_headers"},
            {"event": "before_provider_request"}, {"event": "tool_call"}],
            "on": {"before_provider_headers": {"reply": {}}, "before_provider_request": {"reply": {}}}}),
    );
    agent.write_settings(&json!({"hooks": [watch], "retry": {"enabled": false}}));
    let out = run_pi(&agent, &["--model", SOL, "--verbose", "-p", "hi"]).await;
    out.assert_ok();
    let record = std::fs::read_to_string(record_file(&agent, "watch")).expect("record");
    assert!(record.contains("before_provider_headers"), "{record}");
    assert!(
        !record.contains("LEAK"),
        "the token reached a hook: {record}"
    );
    assert!(
        !out.stderr.contains("LEAK"),
        "the token reached the log: {out}"
    );
    assert!(!out.stdout.contains("LEAK"), "{out}");
    for f in crate::sessions::session_files(&agent) {
        let text = std::fs::read_to_string(f).expect("session");
        assert!(!text.contains("LEAK"), "the token reached the session");
    }
}

/// What the Codex endpoint says in a failure is the server's text: it reaches the terminal
/// through the one sanitiser, its control sequences made harmless, and the token stays out.
#[tokio::test]
async fn a_codex_failure_with_escape_sequences_reaches_the_terminal_defused() {
    use wiremock::matchers::method;
    use wiremock::{Mock, MockServer, ResponseTemplate};

    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({"error": {
            "message": "bad \u{1b}]0;pwned\u{7}\u{1b}[2J request", "code": "invalid"}})))
        .mount(&server)
        .await;
    let agent = TestAgent::new();
    agent.write_models(&json!({"providers": {"openai-codex": {
        "baseUrl": format!("{}/backend-api", server.uri())}}}));
    write_json(
        &agent.agent_dir.join("auth.json"),
        &json!({"openai-codex": {"type": "oauth", "access": token(), "refresh": "refresh-LEAK",
            "expires": 4_102_444_800_000i64, "accountId": "acct_e2e"}}),
    );
    let out = agent.run(&["--model", SOL, "-p", "hi"]).await;
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(all.contains("bad"), "the server's words are shown: {out}");
    assert!(!all.contains('\u{1b}') && !all.contains('\u{7}'), "{all:?}");
    assert!(!all.contains("LEAK"), "{out}");
}
