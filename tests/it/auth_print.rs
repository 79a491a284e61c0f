//! `pi auth print-api-key | print-bearer-token | check` against pi 1.6.0 on the same
//! `auth.json`: every command line of the table prints what 1.6 prints, on the same stream,
//! with the same exit code. (Renewing a login is in `oauth.rs`, where the token server is.)

use serde_json::json;

use crate::common::ts_pi::TsPi;
use crate::common::{write_json, Output, TestAgent};

/// A Claude login with an hour left and an OpenAI key, both stored.
fn agent() -> TestAgent {
    let agent = TestAgent::new();
    let expires = chrono_now_ms() + 3_600_000;
    write_json(
        &agent.agent_dir.join("auth.json"),
        &json!({
            "anthropic": {"type": "oauth", "access": "at-stored", "refresh": "rt-stored",
                "expires": expires},
            "openai": {"type": "api_key", "key": "sk-openai"},
        }),
    );
    agent
}

fn chrono_now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// (arguments after `auth`, exit code, stdout, stderr's first line). Each row is checked
/// against pi; the rows [`ALSO_1_6`] names against pi 1.6.0 as well (each TypeScript run costs
/// seconds, so one row per behaviour).
const TABLE: &[(&str, i32, &str, &str)] = &[
    ("print-api-key --provider openai", 0, "sk-openai", ""),
    ("print-api-key --model gpt-4o", 0, "sk-openai", ""),
    (
        "print-api-key --provider openai --model nonesuch",
        0,
        "sk-openai",
        "",
    ),
    (
        "print-api-key --provider anthropic",
        1,
        "",
        "Error: Provider \"anthropic\" is configured with OAuth, not an API key",
    ),
    (
        "print-api-key --model claude-sonnet-4-5",
        1,
        "",
        "Error: No usable API key is configured",
    ),
    (
        "print-bearer-token --provider anthropic",
        0,
        "at-stored",
        "",
    ),
    (
        "print-bearer-token --provider anthropic --min-expiry 30m",
        0,
        "at-stored",
        "",
    ),
    (
        "print-bearer-token --model claude-sonnet-4-5",
        0,
        "at-stored",
        "",
    ),
    (
        "print-bearer-token --provider openai",
        1,
        "",
        "Error: Provider \"openai\" is not configured with an OAuth bearer token",
    ),
    (
        "print-bearer-token --model gpt-4o",
        1,
        "",
        "Error: No usable OAuth bearer token is configured",
    ),
    (
        "print-api-key",
        1,
        "",
        "Error: Credential printing requires --provider <provider> or --model <model>",
    ),
    (
        "print-api-key --provider nope",
        1,
        "",
        "Error: Unknown provider \"nope\". Use --list-models to see available providers.",
    ),
    (
        "print-api-key --model nonesuch",
        1,
        "",
        "Error: Model \"nonesuch\" not found. Use --list-models to see available models.",
    ),
    (
        "print-api-key --provider openai --json",
        1,
        "",
        "Error: --json is only supported by auth check",
    ),
    (
        "print-api-key --provider openai --min-expiry 1h",
        1,
        "",
        "Error: --min-expiry is only supported by print-bearer-token",
    ),
    (
        "print-bearer-token --provider anthropic --min-expiry 5x",
        1,
        "",
        "Error: --min-expiry must use a duration such as 30m or 1h",
    ),
    (
        "print-api-key --provider openai --bogus",
        1,
        "",
        "Unknown option --bogus for \"auth print-api-key\".",
    ),
    (
        "print-api-key --provider openai extra",
        1,
        "",
        "Error: Auth commands only accept --provider and --model",
    ),
    (
        "check --provider anthropic --json --credentials",
        0,
        r#"{"status":"ready","provider":"anthropic","authType":"oauth","credentials":"at-stored"}"#,
        "",
    ),
    (
        "check --provider anthropic --json --no-refresh",
        0,
        r#"{"status":"ready","provider":"anthropic","authType":"oauth"}"#,
        "",
    ),
    ("check --provider openai --credentials", 0, "sk-openai", ""),
    (
        "check --provider groq --json",
        1,
        r#"{"status":"not_ready","provider":"groq","reason":"credentials_not_configured"}"#,
        "",
    ),
    ("check --model anthropic/claude-sonnet-4-5", 0, "ready", ""),
    ("check --model nonesuch", 2, "invalid", ""),
    (
        "check --json",
        2,
        "",
        "Error: Auth checks require --provider <provider> or --model <model>",
    ),
    (
        "check --provider openai extra",
        2,
        "",
        "Error: Auth commands only accept --provider and --model",
    ),
    (
        "check --provider openai --bogus",
        1,
        "",
        "Unknown option --bogus for \"auth check\".",
    ),
];

const ALSO_1_6: &[&str] = &[
    "print-api-key --model gpt-4o",
    "print-api-key --provider anthropic",
    "print-bearer-token --model claude-sonnet-4-5",
    "print-bearer-token --provider openai",
    "print-api-key --model nonesuch",
    "print-api-key --provider openai --bogus",
    "check --provider anthropic --json --credentials",
    "check --provider openai extra",
];

fn shown(out: &Output) -> (Option<i32>, String, String) {
    let first = out.stderr.lines().next().unwrap_or_default().to_string();
    (out.code, out.stdout.trim_end().to_string(), first)
}

#[tokio::test]
async fn credential_commands_answer_as_pi_1_6_does() {
    let agent = agent();
    let ts = TsPi::find_v1_6();
    let mut wrong = Vec::new();
    let rows: Vec<&str> = TABLE.iter().map(|r| r.0).collect();
    assert!(ALSO_1_6.iter().all(|l| rows.contains(l)));
    for (line, code, stdout, stderr) in TABLE {
        let args: Vec<&str> = std::iter::once("auth")
            .chain(line.split_whitespace())
            .collect();
        let ours = shown(&agent.run(&args).await);
        let expected = (Some(*code), stdout.to_string(), stderr.to_string());
        if ours != expected {
            wrong.push(format!("pi {line}: {ours:?}, expected {expected:?}"));
        }
        if let Some(ts) = ts.as_ref().filter(|_| ALSO_1_6.contains(line)) {
            let theirs = shown(&ts.run(&agent, &args).await);
            if theirs != expected {
                wrong.push(format!("pi 1.6 {line}: {theirs:?}, expected {expected:?}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
