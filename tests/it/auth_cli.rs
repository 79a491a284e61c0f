//! `pi auth login|logout|check` and the `auth.json` they share with TypeScript pi 1.6: a key
//! saved by one is read by the other, both take the same lock so neither loses the other's
//! change, bad input changes nothing, and with the same keys `--list-models` prints 1.6's
//! table. Also the credential's `env` object: Cloudflare's account id filling the endpoint.

use std::os::unix::fs::PermissionsExt;

use serde_json::{json, Value};

use crate::common::ts_pi::TsPi;
use crate::common::{write_json, MockModel, TestAgent, Turn};

fn auth(agent: &TestAgent) -> Value {
    let text = std::fs::read_to_string(agent.agent_dir.join("auth.json")).expect("auth.json");
    serde_json::from_str(&text).expect("auth.json parses")
}

#[tokio::test]
async fn a_key_saved_by_pi_serves_pi_1_6_and_its_logout_serves_pi() {
    let agent = TestAgent::new();
    let out = agent
        .run_with_stdin(&["auth", "login", "groq", "--api-key"], Some("gsk-one\n"))
        .await;
    out.assert_ok();
    assert!(out.stdout.starts_with("Saved API key for Groq."), "{out}");
    let path = agent.agent_dir.join("auth.json");
    let mode = std::fs::metadata(&path)
        .expect("auth.json")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "a new auth.json is the user's alone");
    assert_eq!(
        auth(&agent),
        json!({"groq": {"type": "api_key", "key": "gsk-one"}})
    );

    let ours = agent
        .run(&["auth", "check", "--provider", "groq", "--json"])
        .await;
    ours.assert_ok();
    let Some(ts) = TsPi::find_v1_6() else { return };
    let theirs = ts
        .run(&agent, &["auth", "check", "--provider", "groq", "--json"])
        .await;
    theirs.assert_ok();
    assert_eq!(ours.stdout, theirs.stdout);

    ts.run(&agent, &["auth", "logout", "groq"])
        .await
        .assert_ok();
    let after = agent
        .run(&["auth", "check", "--provider", "groq", "--json"])
        .await;
    after.assert_code(1);
    let v: Value = serde_json::from_str(after.stdout.trim()).expect("json");
    assert_eq!(v["reason"], "credentials_not_configured", "{after}");
    let out = agent.run(&["auth", "logout", "groq"]).await;
    out.assert_ok();
    assert!(
        out.stdout.starts_with("No stored credentials for Groq."),
        "{out}"
    );
}

#[tokio::test]
async fn logins_and_logouts_by_both_programs_at_once_lose_nothing() {
    let Some(ts) = TsPi::find_v1_6() else { return };
    let agent = TestAgent::new();
    let gone = ["cerebras", "xai", "deepseek", "together"];
    let mut start = json!({});
    for p in gone {
        start[p] = json!({"type": "api_key", "key": format!("{p}-key")});
    }
    write_json(&agent.agent_dir.join("auth.json"), &start);
    // TypeScript pi removes four entries one after another while pi keeps re-saving groq's
    // key; without a shared lock one side writes back what it read before the other's change.
    let theirs = async {
        for p in gone {
            ts.run(&agent, &["auth", "logout", p]).await.assert_ok();
        }
    };
    let done = std::sync::atomic::AtomicBool::new(false);
    let ours = async {
        let mut n = 0;
        while !done.load(std::sync::atomic::Ordering::SeqCst) || n < 3 {
            n += 1;
            let key = format!("gsk-{n}\n");
            agent
                .run_with_stdin(&["auth", "login", "groq", "--api-key"], Some(&key))
                .await
                .assert_ok();
        }
        n
    };
    let theirs = async {
        theirs.await;
        done.store(true, std::sync::atomic::Ordering::SeqCst);
    };
    let ((), n) = tokio::join!(theirs, ours);
    assert_eq!(
        auth(&agent),
        json!({"groq": {"type": "api_key", "key": format!("gsk-{n}")}}),
        "every removal and the last key survive"
    );
    assert!(!agent.agent_dir.join("auth.json.lock").exists());
}

#[tokio::test]
async fn bad_input_names_the_problem_and_changes_nothing() {
    let agent = TestAgent::new();
    let path = agent.agent_dir.join("auth.json");
    std::fs::write(&path, "{\"groq\": {\"type\": \"api_key\", \"key\": ").expect("write");
    let out = agent
        .run_with_stdin(&["auth", "login", "groq", "--api-key"], Some("gsk\n"))
        .await;
    assert_ne!(out.code, Some(0), "{out}");
    assert!(out.stderr.contains("auth.json"), "names the file: {out}");
    assert_eq!(
        std::fs::read_to_string(&path).expect("read"),
        "{\"groq\": {\"type\": \"api_key\", \"key\": ",
        "a file pi cannot read is left as it was"
    );
    std::fs::remove_file(&path).expect("remove");

    let out = agent
        .run_with_stdin(&["auth", "login", "nosuch", "--api-key"], Some("k\n"))
        .await;
    out.assert_code(1);
    assert!(out.stderr.contains("Unknown provider \"nosuch\""), "{out}");
    assert!(out.stderr.contains("groq"), "lists the providers: {out}");

    // Copilot's first question (the Enterprise host) unanswered: cancelled.
    let out = agent.run(&["auth", "login", "github-copilot"]).await;
    out.assert_code(1);
    assert!(out.stderr.contains("Login cancelled."), "{out}");
    // Account sign-in with nothing to paste and no browser coming back: cancelled.
    let out = agent.run(&["auth", "login", "anthropic"]).await;
    out.assert_code(1);
    assert!(out.stderr.contains("Login cancelled."), "{out}");
    assert!(!path.exists());

    let out = agent
        .run_with_stdin(&["auth", "login", "groq", "--api-key"], Some("\n"))
        .await;
    out.assert_code(1);
    assert!(out.stderr.contains("Login cancelled."), "{out}");
    assert!(!path.exists(), "nothing entered, nothing written");

    let out = agent.run(&["auth", "check", "--provider", "nosuch"]).await;
    out.assert_code(1);
    assert_eq!(out.stdout, "not_ready\n");
    let out = agent.run(&["auth", "frobnicate"]).await;
    out.assert_code(1);
    assert!(out.stderr.contains("Unknown auth command"), "{out}");
}

/// Keys for every catalog provider whose models all use an API pi speaks.
const SPOKEN_PROVIDER_KEYS: &[&str] = &[
    "ANT_LING_API_KEY",
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "NVIDIA_API_KEY",
    "DEEPSEEK_API_KEY",
    "COPILOT_GITHUB_TOKEN",
    "OPENROUTER_API_KEY",
    "AI_GATEWAY_API_KEY",
    "XAI_API_KEY",
    "GROQ_API_KEY",
    "CEREBRAS_API_KEY",
    "ZAI_API_KEY",
    "MINIMAX_API_KEY",
    "MOONSHOT_API_KEY",
    "HF_TOKEN",
    "FIREWORKS_API_KEY",
    "TOGETHER_API_KEY",
    "KIMI_API_KEY",
    "CLOUDFLARE_API_KEY",
    "QWEN_TOKEN_PLAN_API_KEY",
    "XIAOMI_API_KEY",
    "MISTRAL_API_KEY",
    "GOOGLE_CLOUD_API_KEY",
];

#[tokio::test]
async fn with_the_same_keys_list_models_prints_pi_1_6s_table() {
    let Some(ts) = TsPi::find_v1_6() else { return };
    let mut agent = TestAgent::new();
    for var in SPOKEN_PROVIDER_KEYS {
        agent.env(var, "x");
    }
    // Cloudflare's gateway is listed only once its account and gateway are known; the
    // account comes from the stored credential, the gateway from the environment.
    agent.env("CLOUDFLARE_GATEWAY_ID", "gw");
    write_json(
        &agent.agent_dir.join("auth.json"),
        &json!({"cloudflare-ai-gateway": {"type": "api_key", "key": "cf",
            "env": {"CLOUDFLARE_ACCOUNT_ID": "acc"}}}),
    );
    let ours = agent.run(&["--list-models"]).await;
    ours.assert_ok();
    let theirs = ts.run(&agent, &["--list-models"]).await;
    theirs.assert_ok();
    assert!(ours.stdout.contains("cloudflare-ai-gateway "), "{ours}");
    assert!(
        !ours.stdout.contains("cloudflare-workers-ai "),
        "no account id for workers: {ours}"
    );
    assert!(ours.stdout.lines().count() > 1000, "{ours}");
    if ours.stdout != theirs.stdout {
        let diff: Vec<String> = diff_lines(&theirs.stdout, &ours.stdout);
        panic!(
            "--list-models differs from 1.6's (< 1.6, > ours):\n{}",
            diff.join("\n")
        );
    }
}

fn diff_lines(a: &str, b: &str) -> Vec<String> {
    let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let mut out: Vec<String> = a
        .iter()
        .filter(|l| !b.contains(l))
        .map(|l| format!("< {l}"))
        .collect();
    out.extend(
        b.iter()
            .filter(|l| !a.contains(l))
            .map(|l| format!("> {l}")),
    );
    if out.is_empty() {
        out.push("(same lines, different order)".into());
    }
    out
}

#[tokio::test]
async fn cloudflare_gateway_takes_its_key_and_account_from_the_credential() {
    let mock = MockModel::start(vec![Turn::text("via the gateway")]).await;
    let agent = TestAgent::new();
    let host = mock.uri().trim_start_matches("http://").to_string();
    agent.write_models(&json!({"providers": {"cloudflare-ai-gateway": {
        "baseUrl": "http://{CLOUDFLARE_ACCOUNT_ID}/v1"}}}));
    // Re-pointed at the mock, the endpoint needs the account alone, so only it is asked for.
    let stdin = format!("cf-key\n{host}\n");
    agent
        .run_with_stdin(
            &["auth", "login", "cloudflare-ai-gateway", "--api-key"],
            Some(&stdin),
        )
        .await
        .assert_ok();
    assert_eq!(
        auth(&agent)["cloudflare-ai-gateway"],
        json!({"type": "api_key", "key": "cf-key",
            "env": {"CLOUDFLARE_ACCOUNT_ID": host}})
    );
    let out = agent
        .run(&["--model", "cloudflare-ai-gateway/gpt-4.1", "-p", "hi"])
        .await;
    out.assert_ok();
    assert_eq!(out.stdout, "via the gateway\n");
    let reqs = mock.requests();
    assert_eq!(reqs[0].path, "/v1/responses");
    assert_eq!(
        reqs[0]
            .headers
            .get("cf-aig-authorization")
            .map(String::as_str),
        Some("Bearer cf-key")
    );
    assert!(
        !reqs[0].headers.contains_key("authorization"),
        "the key goes to the gateway only: {:?}",
        reqs[0].headers
    );
}

#[tokio::test]
async fn a_provider_whose_endpoint_needs_a_variable_says_which() {
    let mut agent = TestAgent::new();
    agent.env("CLOUDFLARE_API_KEY", "cf");
    let model = "cloudflare-workers-ai/@cf/moonshotai/kimi-k2.6";
    let out = agent.run(&["--model", model, "-p", "hi"]).await;
    assert_ne!(out.code, Some(0), "{out}");
    assert!(
        out.stderr.contains("CLOUDFLARE_ACCOUNT_ID") && out.stderr.contains("auth.json"),
        "names the variable and where it may be stored: {out}"
    );
}
