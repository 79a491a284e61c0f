//! Signing in and out while pi runs: RPC `login`/`logout`, whose flow asks its questions as
//! extension UI requests an embedding client answers, and the terminal's `/login` and
//! `/logout`. What a sign-in stores is used by the next request without a restart, what a
//! sign-out removes is gone from the models offered, and the tokens never reach the client.

use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

use crate::common::rpc::RpcProcess;
use crate::common::{write_json, MockModel, TestAgent, Turn};

const ACCESS: &str = "sk-ant-oat01-live-LEAK";

/// Anthropic's token endpoint, granting `ACCESS` for the code `the-code`.
async fn token_server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/oauth/token"))
        .respond_with(|req: &Request| {
            let grant: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
            if grant["grant_type"] == "authorization_code" && grant["code"] == "the-code" {
                ResponseTemplate::new(200).set_body_json(json!({"access_token": ACCESS,
                    "refresh_token": "refresh-LEAK", "expires_in": 28800}))
            } else {
                ResponseTemplate::new(400).set_body_json(json!({"error": "invalid_grant"}))
            }
        })
        .mount(&server)
        .await;
    server
}

fn ui_request(method: &'static str) -> impl Fn(&Value) -> bool {
    move |v: &Value| v["type"] == "extension_ui_request" && v["method"] == method
}

async fn answer(rpc: &mut RpcProcess, req: &Value, value: &str) {
    rpc.send(json!({"type": "extension_ui_response", "id": req["id"], "value": value}))
        .await;
}

fn auth(agent: &TestAgent) -> Value {
    std::fs::read_to_string(agent.agent_dir.join("auth.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null)
}

fn providers_offered(models: &Value) -> Vec<String> {
    let mut names: Vec<String> = models["data"]["models"]
        .as_array()
        .map(|ms| {
            ms.iter()
                .filter_map(|m| m["provider"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    names.dedup();
    names
}

#[tokio::test]
async fn an_rpc_client_signs_its_user_in_and_out_through_extension_ui_requests() {
    let mock = MockModel::start(vec![Turn::text("Signed-in answer.")]).await;
    let tokens = token_server().await;
    let mut agent = TestAgent::new();
    let mut models = mock.models_json();
    models["providers"]["anthropic"] = json!({"baseUrl": mock.uri()});
    agent.write_models(&models);
    agent.env(
        "PI_OAUTH_ANTHROPIC_TOKEN_URL",
        &format!("{}/v1/oauth/token", tokens.uri()),
    );
    let mut rpc = agent.rpc(&["--model", "mock/mock-model"]);
    let before = rpc
        .request(json!({"id": "m0", "type": "get_available_models"}))
        .await;
    assert!(!providers_offered(&before).contains(&"anthropic".to_string()));

    rpc.send(json!({"id": "in", "type": "login", "provider": "anthropic"}))
        .await;
    // Anthropic has a login and a key, so 1.6 asks which first.
    let how = rpc.until(ui_request("select")).await;
    assert_eq!(how["title"], "Select authentication method for Anthropic:");
    assert_eq!(
        how["options"],
        json!(["Sign in with an account", "Sign in with an API key"])
    );
    answer(&mut rpc, &how, "Sign in with an account").await;
    let method_pick = rpc.until(ui_request("select")).await;
    assert_eq!(method_pick["title"], "Select Anthropic login method:");
    assert_eq!(
        method_pick["options"],
        json!(["Browser login (default)", "Copy code login (headless)"])
    );
    answer(&mut rpc, &method_pick, "Copy code login (headless)").await;
    let shown = rpc.until(ui_request("notify")).await;
    let text = shown["message"].as_str().unwrap_or_default().to_string();
    let url = text
        .lines()
        .find(|l| l.starts_with("https://"))
        .unwrap_or_else(|| panic!("no sign-in URL in {shown}"));
    let url = reqwest::Url::parse(url).expect("the sign-in URL parses");
    let state = url
        .query_pairs()
        .find(|(k, _)| k == "state")
        .map(|(_, v)| v.into_owned())
        .expect("a state");
    let paste = rpc.until(ui_request("input")).await;
    assert_eq!(
        paste["title"],
        "Paste the code Anthropic shows after you sign in:"
    );
    answer(&mut rpc, &paste, &format!("the-code#{state}")).await;
    let done = rpc.response(&json!("in")).await;
    assert_eq!(done["success"], true, "{done}");
    assert_eq!(done["data"]["provider"], "anthropic");
    let message = done["data"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("Logged in to Anthropic (Claude Pro/Max). Credentials saved to "),
        "{done}"
    );
    assert!(
        !done.to_string().contains("LEAK"),
        "a token reached the client"
    );
    assert_eq!(auth(&agent)["anthropic"]["access"], ACCESS);

    // The new login serves the next request, without a restart.
    let after = rpc
        .request(json!({"id": "m1", "type": "get_available_models"}))
        .await;
    assert!(providers_offered(&after).contains(&"anthropic".to_string()));
    let set = rpc
        .request(
            json!({"id": "s", "type": "set_model", "provider": "anthropic",
            "modelId": "claude-opus-5"}),
        )
        .await;
    assert_eq!(set["success"], true, "{set}");
    rpc.send(json!({"id": "p", "type": "prompt", "message": "hi"}))
        .await;
    rpc.event("agent_end").await;
    let sent = &mock.requests()[0];
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.headers["authorization"], format!("Bearer {ACCESS}"));

    let out = rpc
        .request(json!({"id": "out", "type": "logout", "provider": "anthropic"}))
        .await;
    assert_eq!(
        out["data"]["message"], "Logged out of Anthropic (Claude Pro/Max)",
        "{out}"
    );
    assert!(auth(&agent).get("anthropic").is_none());
    let gone = rpc
        .request(json!({"id": "m2", "type": "get_available_models"}))
        .await;
    assert!(!providers_offered(&gone).contains(&"anthropic".to_string()));
    assert_eq!(rpc.close().await, Some(0));
}

#[tokio::test]
async fn a_cancelled_login_stores_nothing_and_says_so() {
    let agent = TestAgent::new();
    let mut rpc = agent.rpc(&agent.faux_args(json!(["ok"])));
    rpc.send(json!({"id": "in", "type": "login"})).await;
    let method = rpc.until(ui_request("select")).await;
    assert_eq!(method["title"], "Select authentication method:");
    assert_eq!(
        method["options"],
        json!([
            "Sign in with an account",
            "Sign in with an API key",
            "Sign in with Radius • not configured"
        ])
    );
    answer(&mut rpc, &method, "Sign in with an account").await;
    let pick = rpc.until(ui_request("select")).await;
    assert_eq!(pick["title"], "Select provider to configure:");
    assert!(
        pick["options"]
            .as_array()
            .is_some_and(|o| o.contains(&json!("Anthropic • not configured"))),
        "{pick}"
    );
    rpc.send(json!({"type": "extension_ui_response", "id": pick["id"], "cancelled": true}))
        .await;
    let done = rpc.response(&json!("in")).await;
    assert_eq!(
        done["data"],
        json!({"message": "Login cancelled.", "cancelled": true})
    );
    assert!(!agent.agent_dir.join("auth.json").exists());
    let out = rpc.request(json!({"id": "out", "type": "logout"})).await;
    assert_eq!(out["data"]["cancelled"], true);
    assert!(
        out["data"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("No stored credentials to remove.")),
        "{out}"
    );
    assert_eq!(rpc.close().await, Some(0));
}

#[test]
fn slash_logout_picks_a_stored_key_and_removes_it_in_1_6s_words() {
    let agent = TestAgent::new();
    write_json(
        &agent.agent_dir.join("auth.json"),
        &json!({"groq": {"type": "api_key", "key": "gsk-stored-LEAK"}}),
    );
    let mut pi = agent.pty(&agent.faux_args(json!(["ok"])), 120, 40);
    pi.wait_text("faux");
    pi.type_text("/logout");
    pi.enter();
    pi.wait_text("Select provider to logout:");
    pi.enter();
    pi.wait_text(
        "Removed stored API key for Groq. Environment variables and models.json config are \
         unchanged.",
    );
    assert!(auth(&agent).get("groq").is_none());
    pi.type_text("/logout");
    pi.enter();
    pi.wait_text("No stored credentials to remove.");
}

/// The browser launcher is handed the sign-in URL as its one argument, from `/`, with only
/// a desktop's variables: none of the keys in pi's environment.
#[tokio::test]
async fn the_browser_gets_the_sign_in_url_alone_and_none_of_the_keys() {
    use std::os::unix::fs::PermissionsExt as _;

    let mut agent = TestAgent::new();
    let bin = agent.tmp.join("bin");
    std::fs::create_dir_all(&bin).expect("bin dir");
    let record = agent.tmp.join("opened.txt");
    let launcher = bin.join("xdg-open");
    std::fs::write(
        &launcher,
        format!(
            "#!/bin/sh\n{{ pwd; echo \"$#\"; echo \"$1\"; env; }} > '{0}.part' && mv '{0}.part' '{0}'\n",
            record.display()
        ),
    )
    .expect("launcher");
    std::fs::set_permissions(&launcher, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into())
    );
    agent.env("PATH", &path);
    agent.env("ANTHROPIC_API_KEY", "sk-ant-api-LEAK");
    agent.env("OPENAI_API_KEY", "sk-openai-LEAK");
    agent.env("GITHUB_TOKEN", "ghp-LEAK");
    agent.env("PI_OAUTH_ANTHROPIC_TOKEN_URL", "http://127.0.0.1:9/token");
    let login = crate::oauth::start_provider_login(&agent, "anthropic", &[]).await;
    assert!(
        crate::common::wait_until(std::time::Duration::from_secs(20), || record.exists()),
        "the launcher was never started"
    );
    let seen = std::fs::read_to_string(&record).expect("the launcher's record");
    let mut lines = seen.lines();
    assert_eq!(lines.next(), Some("/"), "started from /: {seen}");
    assert_eq!(lines.next(), Some("1"), "one argument: {seen}");
    let opened = lines.next().and_then(|u| reqwest::Url::parse(u).ok());
    assert_eq!(opened.as_ref(), Some(&login.url), "{seen}");
    assert!(!seen.contains("LEAK"), "a key reached the browser: {seen}");
    assert!(!seen.contains("PI_CODING_AGENT_DIR"), "{seen}");
    let (code, _) = login.finish().await;
    assert_eq!(code, Some(1), "no answer: the login is cancelled");
}

/// 1.6's `/login` question order for an API key: the method, the provider by name, the key.
#[tokio::test]
async fn an_api_key_saved_through_login_opens_that_providers_models_at_once() {
    let agent = TestAgent::new();
    let mut rpc = agent.rpc(&agent.faux_args(json!(["ok"])));
    rpc.send(json!({"id": "in", "type": "login"})).await;
    let method = rpc.until(ui_request("select")).await;
    answer(&mut rpc, &method, "Sign in with an API key").await;
    let pick = rpc.until(ui_request("select")).await;
    assert!(
        pick["options"]
            .as_array()
            .is_some_and(|o| o.contains(&json!("Groq • not configured"))
                && o.contains(&json!("Anthropic • not configured"))),
        "{pick}"
    );
    answer(&mut rpc, &pick, "Groq • not configured").await;
    let key = rpc.until(ui_request("input")).await;
    assert_eq!(key["title"], "Enter Groq API key:");
    answer(&mut rpc, &key, "gsk-typed-LEAK").await;
    let done = rpc.response(&json!("in")).await;
    let message = done["data"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("Saved API key for Groq. Credentials saved to "),
        "{done}"
    );
    assert!(!done.to_string().contains("LEAK"));
    assert_eq!(
        auth(&agent)["groq"],
        json!({"type": "api_key", "key": "gsk-typed-LEAK"})
    );
    let models = rpc
        .request(json!({"id": "m", "type": "get_available_models"}))
        .await;
    assert!(
        providers_offered(&models).contains(&"groq".to_string()),
        "{models}"
    );
    assert_eq!(rpc.close().await, Some(0));
}

/// `/login` as 1.6 shows it: Radius offered at the top, each provider's row marked with how
/// it is configured, partners first, and `/login NAME` finding the provider by id or name.
#[test]
fn slash_login_lists_providers_with_their_status_as_1_6_does() {
    let mut agent = TestAgent::new();
    write_json(
        &agent.agent_dir.join("auth.json"),
        &json!({
            "anthropic": {"type": "oauth", "access": "a-LEAK", "refresh": "r-LEAK",
                "expires": 4_000_000_000_000_i64},
            "openai": {"type": "api_key", "key": "sk-stored-LEAK"}
        }),
    );
    agent.env("GEMINI_API_KEY", "g-LEAK");
    let mut pi = agent.pty(&agent.faux_args(json!(["ok"])), 120, 40);
    pi.wait_text("faux");
    pi.type_text("/login");
    pi.enter();
    pi.wait_text("Sign in with Radius • not configured");
    pi.enter();
    let screen = pi.wait_text("Anthropic ✓ stored");
    let at = |needle: &str| screen.iter().position(|l| l.contains(needle));
    let (radius, openrouter, anthropic) = (
        at("Radius ✦ • not configured"),
        at("OpenRouter ✦ • not configured"),
        at("Anthropic ✓ stored"),
    );
    assert!(
        radius.is_some() && radius < openrouter && openrouter < anthropic,
        "partners first: {screen:#?}"
    );
    assert!(at("OpenAI • API key configured").is_some(), "{screen:#?}");
    close(&mut pi);

    // The API key rows: Google's key comes from the environment.
    pi.type_text("/login");
    pi.enter();
    pi.wait_text("Sign in with Radius");
    pi.send(b"\x1b[B");
    pi.enter();
    pi.wait_text("Select provider to configure:");
    pi.type_text("google");
    pi.wait_text("Google ✓ env: GEMINI_API_KEY");
    close(&mut pi);

    // A provider with a login and a key: asked which, in the login's own words.
    pi.type_text("/login OpenAI");
    pi.enter();
    pi.wait_text("Select authentication method for OpenAI:");
    pi.wait_text("Sign in with ChatGPT");
    close(&mut pi);
    // No provider of that name: the whole list, each row saying its kind.
    pi.type_text("/login nothing-by-that-name");
    pi.enter();
    pi.wait_text("Anthropic [subscription] ✓ stored");
    pi.wait_text("Anthropic [API key] • subscription configured");
    let shown = pi.transcript().join("\n");
    assert!(!shown.contains("LEAK"), "a credential reached the screen");
}

/// Dismisses the open dialog and waits until it is gone (so the next keys are not read as
/// part of an escape sequence).
fn close(pi: &mut crate::common::pty::PtyPi) {
    pi.esc();
    pi.wait_screen("the dialog closed", |s| {
        !s.iter().any(|l| l.starts_with("Select "))
    });
}
