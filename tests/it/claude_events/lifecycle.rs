//! The Claude Code events about pi's own life rather than a conversation: Setup (`--init`,
//! `--init-only`, `--maintenance`) and ConfigChange (at `/reload`).

use serde_json::json;

use super::{hook, py, seen, settings, FLAG};
use crate::common::hooks::run_pi;
use crate::common::{path_str, TestAgent};

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

#[test]
fn config_change_runs_at_reload_and_a_block_keeps_the_old_settings() {
    let agent = TestAgent::new();
    py(
        &agent,
        "config.py",
        r#"
path = data.get("file_path", "")
text = open(path).read() if os.path.exists(path) else ""
if "forbidden" in text:
    print(json.dumps({"decision": "block", "reason": "that setting is not allowed"}))
"#,
    );
    settings(
        &agent,
        json!({"ConfigChange": [{"matcher": "user_settings", "hooks": [hook("config.py")]}]}),
    );
    let user_settings = agent.agent_dir.join("settings.json");
    let touching = |marker: &str| {
        json!({"commandHooks": {"UserPromptSubmit": [{"hooks": [{"type": "command",
            "command": format!("touch \"$CLAUDE_PROJECT_DIR\"/{marker}")}]}]}})
    };
    let mut args = agent.faux_args(json!(["first answer", "second answer"]));
    args.extend(FLAG.iter().map(|s| s.to_string()));
    let mut pi = agent.pty(&args, 120, 40);
    pi.wait_text("faux/faux-1");

    // A change the hook blocks: the reload is refused and says why; nothing changes.
    crate::common::write_json(&user_settings, &touching("forbidden-ran"));
    pi.type_text("/reload");
    pi.enter();
    pi.wait_transcript("that setting is not allowed");
    pi.type_text("hello");
    pi.enter();
    pi.wait_transcript("first answer");
    assert!(
        !agent.cwd.join("forbidden-ran").exists(),
        "the blocked settings took effect"
    );

    // A change it allows is reloaded.
    crate::common::write_json(&user_settings, &touching("allowed-ran"));
    pi.type_text("/reload");
    pi.enter();
    pi.wait_transcript("Reloaded settings, resources and hooks");
    pi.type_text("again");
    pi.enter();
    pi.wait_transcript("second answer");
    assert!(agent.cwd.join("allowed-ran").exists());
    pi.quit();

    let changes = seen(&agent, "config.py");
    assert_eq!(changes.len(), 2, "{changes:?}");
    for c in &changes {
        assert_eq!(c["hook_event_name"], "ConfigChange");
        assert_eq!(c["source"], "user_settings");
        assert_eq!(c["file_path"], path_str(&user_settings));
    }
}
