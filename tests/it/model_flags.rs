//! pi 1.6's model and run flags through the real binary: `--models` (the scope RPC's
//! `cycle_model` and Ctrl+P go through, and the model a new session starts on), a repeated
//! `--provider` (the last wins), `--no-mcp`, and `--export FILE [OUT]` (a session file as HTML
//! without a run).

use serde_json::{json, Value};

use crate::common::mcp::{fake, write_mcp};
use crate::common::{path_str, TestAgent};

/// Three keyed providers of plain models (never called: these tests send no prompt).
fn three_models(agent: &TestAgent) {
    agent.write_models(&json!({"providers": {
        "one": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "k",
            "models": [{"id": "alpha"}, {"id": "beta", "reasoning": true}]},
        "two": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "k",
            "models": [{"id": "gamma"}]}
    }}));
}

fn model_of(state: &Value) -> String {
    format!(
        "{}/{}",
        state["data"]["model"]["provider"].as_str().unwrap_or("?"),
        state["data"]["model"]["id"].as_str().unwrap_or("?")
    )
}

#[tokio::test]
async fn models_flag_scopes_cycle_model_and_picks_the_start_model() {
    let agent = TestAgent::new();
    three_models(&agent);
    let mut rpc = agent.rpc(&["--models", "gamma,one/beta:high", "--no-session"]);
    let state = rpc.request(json!({"id": "r1", "type": "get_state"})).await;
    // A new session starts on the scope's first model.
    assert_eq!(model_of(&state), "two/gamma", "{state}");
    let mut seen = Vec::new();
    for _ in 0..3 {
        let r = rpc
            .request(json!({"id": "r2", "type": "cycle_model"}))
            .await;
        assert_eq!(r["data"]["isScoped"], true, "{r}");
        seen.push(format!(
            "{}/{}:{}",
            r["data"]["model"]["provider"].as_str().unwrap_or("?"),
            r["data"]["model"]["id"].as_str().unwrap_or("?"),
            r["data"]["thinkingLevel"].as_str().unwrap_or("?")
        ));
    }
    // `one/alpha` is outside the scope; `beta` comes with its `:high`.
    assert_eq!(seen, ["one/beta:high", "two/gamma:off", "one/beta:high"]);
    rpc.close().await;
}

#[tokio::test]
async fn without_a_scope_cycle_model_goes_through_every_model_with_auth() {
    let agent = TestAgent::new();
    three_models(&agent);
    let mut rpc = agent.rpc(&["--model", "one/alpha", "--no-session"]);
    let r = rpc
        .request(json!({"id": "r3", "type": "cycle_model"}))
        .await;
    assert_eq!(r["data"]["isScoped"], false, "{r}");
    assert_eq!(r["data"]["model"]["id"], "beta", "{r}");
    rpc.close().await;
}

#[tokio::test]
async fn a_pattern_that_names_nothing_is_warned_about() {
    let agent = TestAgent::new();
    three_models(&agent);
    let mut rpc = agent.rpc(&["--models", "nothing-like-it,alpha", "--no-session"]);
    let state = rpc.request(json!({"id": "r4", "type": "get_state"})).await;
    assert_eq!(model_of(&state), "one/alpha", "{state}");
    rpc.close().await;
    assert!(
        rpc.tail()
            .contains("Warning: No models match pattern \"nothing-like-it\""),
        "{}",
        rpc.tail()
    );
}

#[tokio::test]
async fn a_repeated_provider_takes_the_last_one() {
    let agent = TestAgent::new();
    let mut args = vec!["--provider".to_string(), "no-such-provider".to_string()];
    args.extend(agent.faux_args(json!(["hello from faux"])));
    args.extend(["-p".to_string(), "hi".to_string()]);
    let out = agent.run(&args).await;
    out.assert_ok();
    assert_eq!(out.stdout.trim(), "hello from faux", "{out}");
}

#[tokio::test]
async fn no_mcp_starts_no_mcp_server() {
    let agent = TestAgent::new();
    let log = agent.cwd.join("server.log");
    write_mcp(
        &agent,
        json!({"fake": fake(&["--log", &path_str(&log)], json!({"exposure": "direct"}))}),
    );
    let mut args = agent.faux_args(json!(["done"]));
    args.extend(["--no-mcp", "--mode", "json", "-p", "hi"].map(String::from));
    let out = agent.run(&args).await;
    out.assert_ok();
    assert!(!log.exists(), "the server was started:\n{out}");
    assert!(!out.stdout.contains("\"mcp_server\""), "{out}");
    // Without the flag the same configuration starts it.
    let mut args = agent.faux_args(json!(["done"]));
    args.extend(["--mode", "json", "-p", "hi"].map(String::from));
    agent.run(&args).await.assert_ok();
    assert!(log.exists(), "the server should start without --no-mcp");
}

#[tokio::test]
async fn export_writes_a_session_file_as_html_without_a_run() {
    let agent = TestAgent::new();
    let mut args = agent.faux_args(json!(["the faux answer"]));
    args.extend(["-p", "a question to export"].map(String::from));
    agent.run(&args).await.assert_ok();
    let sessions = agent.agent_dir.join("sessions");
    let file = walk(&sessions)
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .expect("a session file");
    // No model, no key: an export needs none.
    std::fs::remove_file(agent.agent_dir.join("models.json")).ok();
    let out = agent
        .run(&["--export", &path_str(&file), "page.html"])
        .await;
    out.assert_ok();
    assert_eq!(out.stdout.trim(), "Exported to: page.html", "{out}");
    let html = agent.read_string("page.html");
    assert!(html.contains("a question to export") && html.contains("the faux answer"));
    // Without OUT: pi-session-<file name>.html in the working directory.
    let out = agent.run(&["--export", &path_str(&file)]).await;
    out.assert_ok();
    let stem = file.file_stem().unwrap().to_string_lossy().to_string();
    assert_eq!(
        out.stdout.trim(),
        format!("Exported to: pi-session-{stem}.html"),
        "{out}"
    );
    assert!(agent.cwd.join(format!("pi-session-{stem}.html")).exists());
    // A file that is not there.
    let out = agent.run(&["--export", "missing.jsonl"]).await;
    out.assert_code(1);
    assert_eq!(
        out.stderr.trim(),
        format!(
            "Error: File not found: {}",
            agent.cwd.join("missing.jsonl").display()
        ),
        "{out}"
    );
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// With no level asked for, a model that reasons thinks at 1.6's `medium` and one that does
/// not is `off`, in pi as in pi 1.6.0.
#[tokio::test]
async fn the_default_thinking_level_is_1_6s() {
    let agent = TestAgent::new();
    three_models(&agent);
    let ts = crate::common::ts_pi::TsPi::find_v1_6();
    for (model, expected) in [("one/beta", "medium"), ("one/alpha", "off")] {
        let mut rpc = agent.rpc(&["--model", model]);
        let state = rpc.request(json!({"id": "s", "type": "get_state"})).await;
        assert_eq!(
            state["data"]["thinkingLevel"], expected,
            "{model}: {state:#}"
        );
        if let Some(ts) = &ts {
            let mut theirs = ts.rpc(&agent, &["--model", model]);
            let state = theirs
                .request(json!({"id": "s", "type": "get_state"}))
                .await;
            assert_eq!(
                state["data"]["thinkingLevel"], expected,
                "1.6, {model}: {state:#}"
            );
        }
    }
}
