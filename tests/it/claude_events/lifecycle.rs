//! The Claude Code events about pi's own life rather than a conversation: Setup (`--init`,
//! `--init-only`, `--maintenance`).

use serde_json::json;

use super::{hook, py, seen, settings, FLAG};
use crate::common::hooks::run_pi;
use crate::common::TestAgent;

#[tokio::test]
async fn setup_runs_only_when_asked_and_before_session_start() {
    let agent = TestAgent::new();
    py(&agent, "log.py", "");
    settings(
        &agent,
        json!({
            "Setup": [{"matcher": "init", "hooks": [hook("log.py")]},
                      {"matcher": "maintenance", "hooks": [hook("log.py")]}],
            "SessionStart": [{"hooks": [hook("log.py")]}]}),
    );
    let events = |agent: &TestAgent| -> Vec<(String, String)> {
        seen(agent, "log.py")
            .iter()
            .map(|e| {
                let what = e["trigger"].as_str().or(e["source"].as_str()).unwrap();
                (
                    e["hook_event_name"].as_str().unwrap().to_string(),
                    what.to_string(),
                )
            })
            .collect()
    };
    let s = |a: &str, b: &str| (a.to_string(), b.to_string());
    let mut args = agent.faux_args(json!(["never reached"]));
    args.extend(["--init-only", FLAG[0], FLAG[1]].map(String::from));
    let out = run_pi(&agent, &args).await;
    out.assert_ok();
    assert_eq!(
        events(&agent),
        [s("Setup", "init"), s("SessionStart", "startup")],
        "{out}"
    );
    assert!(out.stdout.trim().is_empty(), "no conversation: {out}");

    // An ordinary start runs no Setup hook.
    let mut args = agent.faux_args(json!(["hello"]));
    args.extend(["-p", FLAG[0], FLAG[1], "hi"].map(String::from));
    run_pi(&agent, &args).await.assert_ok();
    assert_eq!(events(&agent).len(), 3);
    assert_eq!(events(&agent)[2], s("SessionStart", "startup"));

    // `--maintenance`: the other trigger, then the run goes on.
    let mut args = agent.faux_args(json!(["hello"]));
    args.extend(["-p", "--maintenance", FLAG[0], FLAG[1], "hi"].map(String::from));
    let out = run_pi(&agent, &args).await;
    out.assert_ok();
    assert_eq!(out.stdout.trim(), "hello");
    assert_eq!(
        events(&agent)[3..],
        [s("Setup", "maintenance"), s("SessionStart", "startup")]
    );
}
