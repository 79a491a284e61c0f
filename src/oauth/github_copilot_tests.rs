//! Tests of GitHub Copilot's login: the domain asked for, the endpoint a token names, the
//! exchange and the device login's answers against a local server, and what a stored login
//! offers.

use serde_json::{json, Map};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::*;

fn urls(server: &MockServer) -> Urls {
    let uri = server.uri();
    Urls {
        device_code: format!("{uri}/login/device/code"),
        access_token: format!("{uri}/login/oauth/access_token"),
        copilot_token: format!("{uri}/copilot_internal/v2/token"),
    }
}

fn tokens(access: &str, extra: serde_json::Value) -> Tokens {
    Tokens {
        access: access.into(),
        refresh: "gho_github".into(),
        expires: 0,
        extra: extra.as_object().cloned().unwrap_or_else(Map::new),
    }
}

#[test]
fn the_enterprise_answer_is_a_host_and_blank_is_github_com() {
    assert_eq!(normalize_domain("  "), None);
    assert_eq!(
        normalize_domain(" company.ghe.com ").as_deref(),
        Some("company.ghe.com")
    );
    assert_eq!(
        normalize_domain("https://Company.GHE.com/some/path").as_deref(),
        Some("company.ghe.com")
    );
    assert_eq!(normalize_domain("https://"), None);
    assert_eq!(normalize_domain("a b"), None);
}

#[test]
fn requests_go_where_the_token_says_else_to_the_enterprise_or_individual() {
    let token = "tid=abc;exp=1700000000;sku=x;proxy-ep=proxy.business.githubcopilot.com;st=dotcom";
    assert_eq!(
        api_base_url(token, Some("company.ghe.com")),
        "https://api.business.githubcopilot.com"
    );
    assert_eq!(
        api_base_url("tid=1;proxy-ep=copilot.example", None),
        "https://copilot.example"
    );
    assert_eq!(
        api_base_url("tid=1;exp=2", Some("company.ghe.com")),
        "https://copilot-api.company.ghe.com"
    );
    assert_eq!(
        api_base_url("tid=1;proxy-ep=;exp=2", None),
        "https://api.individual.githubcopilot.com"
    );

    let login = tokens(token, json!({"enterpriseUrl": "company.ghe.com"}));
    let auth = GitHubCopilot.to_auth(&login);
    assert_eq!(auth.key, token, "the Copilot token, never the GitHub one");
    assert_eq!(
        auth.base_url.as_deref(),
        Some("https://api.business.githubcopilot.com")
    );
    let enterprise = tokens(
        "tid=1",
        json!({"enterpriseUrl": "https://company.ghe.com/"}),
    );
    assert_eq!(
        GitHubCopilot.to_auth(&enterprise).base_url.as_deref(),
        Some("https://copilot-api.company.ghe.com")
    );
}

#[test]
fn a_login_offers_the_models_its_account_lists() {
    let listed = tokens("t", json!({"availableModelIds": ["gpt-6.1-sol"]}));
    assert!(GitHubCopilot.offers(&listed, "gpt-6.1-sol"));
    assert!(!GitHubCopilot.offers(&listed, "claude-opus-5"));
    // No list, or one 1.6 would not read: every model.
    for extra in [json!({}), json!({"availableModelIds": ["a", 1]})] {
        assert!(GitHubCopilot.offers(&tokens("t", extra), "claude-opus-5"));
    }
}

#[tokio::test]
async fn the_github_token_is_exchanged_for_a_copilot_token_as_1_6_stores_it() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/copilot_internal/v2/token"))
        .and(header("authorization", "Bearer gho_github"))
        .and(header("accept", "application/json"))
        .and(header("user-agent", "GitHubCopilotChat/0.35.0"))
        .and(header("editor-version", "vscode/1.107.0"))
        .and(header("editor-plugin-version", "copilot-chat/0.35.0"))
        .and(header("copilot-integration-id", "vscode-chat"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"token": "tid=1;proxy-ep=proxy.x", "expires_at": 1_900_000_000, "refresh_in": 1500}),
        ))
        .mount(&server)
        .await;
    let http = crate::provider::http::client();
    let got = exchange(&http, &urls(&server), "gho_github", Some("company.ghe.com"))
        .await
        .unwrap();
    assert_eq!(got.access, "tid=1;proxy-ep=proxy.x");
    assert_eq!(got.refresh, "gho_github", "the GitHub token is the refresh");
    assert_eq!(got.expires, 1_900_000_000_000 - 5 * 60 * 1000);
    assert_eq!(
        got.extra,
        *json!({"enterpriseUrl": "company.ghe.com"})
            .as_object()
            .unwrap()
    );
    let github = exchange(&http, &urls(&server), "gho_github", None)
        .await
        .unwrap();
    assert!(github.extra.is_empty(), "no enterpriseUrl for github.com");
    let entry = github.into_entry(None);
    let keys: Vec<&str> = entry
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        ["type", "refresh", "access", "expires"],
        "1.6's order"
    );
}

#[tokio::test]
async fn a_revoked_github_token_is_refused_in_1_6s_words() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/copilot_internal/v2/token"))
        .respond_with(
            ResponseTemplate::new(401).set_body_string(r#"{"message":"Bad credentials"}"#),
        )
        .mount(&server)
        .await;
    let http = crate::provider::http::client();
    let err = exchange(&http, &urls(&server), "gho_revoked", None)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"401 Unauthorized: {"message":"Bad credentials"}"#
    );
    assert!(matches!(err, CopilotError::Status { status: 401, .. }));

    server.reset().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"token": "t"})))
        .mount(&server)
        .await;
    let err = exchange(&http, &urls(&server), "gho_github", None)
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "Invalid Copilot token response fields");
}

#[tokio::test]
async fn the_device_login_is_asked_and_polled_as_1_6_does() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/login/device/code"))
        .and(header("content-type", "application/x-www-form-urlencoded"))
        .and(header("user-agent", "GitHubCopilotChat/0.35.0"))
        .respond_with(|req: &wiremock::Request| {
            let body = String::from_utf8_lossy(&req.body).into_owned();
            assert_eq!(body, "client_id=Iv1.b507a08c87ecfe98&scope=read%3Auser");
            ResponseTemplate::new(200).set_body_json(json!({"device_code": "dc", "user_code": "AB-12",
                "verification_uri": "https://github.com/login/device", "expires_in": 899, "interval": 5}))
        })
        .mount(&server)
        .await;
    let http = crate::provider::http::client();
    let device = start_device_flow(&http, &urls(&server)).await.unwrap();
    assert_eq!(device.user_code, "AB-12");
    assert_eq!(device.interval, Some(Duration::from_secs(5)));
    assert_eq!(device.expires_in, Duration::from_secs(899));

    for (answer, want) in [
        (json!({"error": "authorization_pending"}), Poll::Pending),
        (
            json!({"error": "slow_down", "interval": 10}),
            Poll::SlowDown {
                interval: Some(Duration::from_secs(10)),
            },
        ),
        (
            json!({"error": "access_denied", "error_description": "The user said no"}),
            Poll::Failed("Device flow failed: access_denied: The user said no".into()),
        ),
        (
            json!({}),
            Poll::Failed("Invalid device token response".into()),
        ),
        (
            json!({"access_token": "gho_x", "token_type": "bearer"}),
            Poll::Complete("gho_x".into()),
        ),
    ] {
        server.reset().await;
        Mock::given(method("POST"))
            .and(path("/login/oauth/access_token"))
            .respond_with(ResponseTemplate::new(200).set_body_json(answer))
            .mount(&server)
            .await;
        assert_eq!(
            poll_access_token(&http, &urls(&server), &device).await,
            want
        );
    }

    for (answer, want) in [
        (
            json!({"device_code": "dc", "user_code": "u", "verification_uri": "file:///etc/passwd",
                "expires_in": 900}),
            "Untrusted verification_uri in device code response",
        ),
        (
            json!({"device_code": "dc", "user_code": "u", "verification_uri": "https://x",
                "expires_in": 900, "interval": "5"}),
            "Invalid device code response fields",
        ),
    ] {
        server.reset().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_json(answer))
            .mount(&server)
            .await;
        let err = start_device_flow(&http, &urls(&server))
            .await
            .err()
            .unwrap();
        assert_eq!(err.to_string(), want);
    }
}
