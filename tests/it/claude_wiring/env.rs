//! What a Claude Code hook may ask for of pi's environment. Hooks start from the model's
//! filtered shell environment (no `*KEY*`, `*TOKEN*`, `*SECRET*`, `*PASSWORD*`); a hook
//! entry's `envPassthrough` (names or globs) and `env` (literal values) add to it, and so do
//! the same keys beside the events of a `commandHooks` object, for all of its hooks. A trusted
//! project's hooks get only what the user's `projectEnv` grants the project, and pi says at
//! start-up what it withheld.

use serde_json::{json, Value};

use super::{exe, settings, FLAG};
use crate::common::hooks::{run_json, run_pi};
use crate::common::{path_str, TestAgent};

/// Records, for each name it is given, the value it sees (or null).
const DUMP: &str = r#"#!/usr/bin/env python3
import json, os, sys
json.load(sys.stdin)
names = ["GITHUB_TOKEN", "DEPLOY_SECRET", "DEPLOY_REGION", "OTHER_API_KEY", "HOOK_MODE", "TEAM"]
out = os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "env-" + sys.argv[1] + ".json")
with open(out, "w") as f:
    json.dump({n: os.environ.get(n) for n in names}, f)
"#;

fn agent() -> TestAgent {
    let mut agent = TestAgent::new();
    agent.env("GITHUB_TOKEN", "ghp-wired");
    agent.env("DEPLOY_SECRET", "s3cr3t");
    agent.env("DEPLOY_REGION", "eu");
    agent.env("OTHER_API_KEY", "other-key");
    exe(&agent.cwd.join(".claude/hooks/dump.py"), DUMP);
    agent
}

fn dump(tag: &str) -> String {
    format!("python3 \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/dump.py {tag}")
}

fn seen(agent: &TestAgent, tag: &str) -> Value {
    let text = std::fs::read_to_string(agent.cwd.join(format!("env-{tag}.json")))
        .unwrap_or_else(|e| panic!("hook {tag} did not run: {e}"));
    serde_json::from_str(&text).unwrap()
}

fn one_call() -> Value {
    crate::common::hooks::bash_then_final("true")
}

#[tokio::test]
async fn env_passthrough_and_env_give_a_hook_what_it_asks_for_and_nothing_else() {
    let agent = agent();
    // Per hook, in a Claude Code settings file.
    settings(
        &agent,
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": dump("asks"),
             "envPassthrough": ["GITHUB_TOKEN", "DEPLOY_*"], "env": {"HOOK_MODE": "strict"}},
            {"type": "command", "command": dump("plain")}]}]}),
    );
    // For every hook of the user's `commandHooks`.
    agent.write_settings(&json!({"commandHooks": {
        "envPassthrough": ["OTHER_API_KEY"], "env": {"TEAM": "infra"},
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": dump("user")}]}]}}));
    let (out, _) = run_json(&agent, one_call(), &FLAG).await;
    out.assert_ok();
    assert!(!out.stderr.contains("Warning"), "{out}");
    assert_eq!(
        seen(&agent, "asks"),
        json!({"GITHUB_TOKEN": "ghp-wired", "DEPLOY_SECRET": "s3cr3t", "DEPLOY_REGION": "eu",
               "OTHER_API_KEY": null, "HOOK_MODE": "strict", "TEAM": null})
    );
    assert_eq!(
        seen(&agent, "plain"),
        json!({"GITHUB_TOKEN": null, "DEPLOY_SECRET": null, "DEPLOY_REGION": "eu",
               "OTHER_API_KEY": null, "HOOK_MODE": null, "TEAM": null})
    );
    assert_eq!(
        seen(&agent, "user"),
        json!({"GITHUB_TOKEN": null, "DEPLOY_SECRET": null, "DEPLOY_REGION": "eu",
               "OTHER_API_KEY": "other-key", "HOOK_MODE": null, "TEAM": "infra"})
    );

    // A malformed request is an error naming the place.
    settings(
        &agent,
        json!({"PreToolUse": [{"hooks": [{"command": dump("x"), "envPassthrough": "GITHUB_TOKEN"}]}]}),
    );
    let (out, _) = run_json(&agent, one_call(), &FLAG).await;
    out.assert_code(1);
    assert!(
        out.stderr.contains("PreToolUse[0].hooks[0]") && out.stderr.contains("envPassthrough"),
        "{out}"
    );
}

#[tokio::test]
async fn a_project_hook_gets_a_secret_only_when_the_user_grants_it_and_pi_says_so() {
    let agent = agent();
    agent.write_file(
        ".pi/settings.json",
        json!({"commandHooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": dump("project"),
             "envPassthrough": ["GITHUB_TOKEN", "DEPLOY_*", "PATH"]}]}]}})
        .to_string(),
    );
    let trusted = ["-a"];
    let (out, _) = run_json(&agent, one_call(), &trusted).await;
    out.assert_ok();
    let got = seen(&agent, "project");
    assert_eq!(got["GITHUB_TOKEN"], Value::Null, "{out}");
    assert_eq!(got["DEPLOY_SECRET"], Value::Null, "{out}");
    for name in ["GITHUB_TOKEN", "DEPLOY_SECRET"] {
        assert!(
            out.stderr
                .lines()
                .any(|l| l.contains("withheld") && l.contains(name) && l.contains("projectEnv")),
            "no start-up line saying {name} was withheld\n{out}"
        );
    }
    // DEPLOY_REGION is no secret: the hook has it from the shell environment anyway.
    assert_eq!(got["DEPLOY_REGION"], "eu", "{out}");
    assert!(!out.stderr.contains("DEPLOY_REGION"), "{out}");
    // `pi hooks` shows the same.
    let list = run_pi(&agent, &["hooks", "-a"]).await;
    list.assert_ok();
    assert!(
        list.stdout.contains("withheld") && list.stdout.contains("GITHUB_TOKEN"),
        "{list}"
    );

    // The user grants the token to this project: passed, and no longer reported.
    let cwd = path_str(&agent.cwd);
    agent.write_settings(&json!({"projectEnv": {cwd: ["GITHUB_TOKEN"]}}));
    let (out, _) = run_json(&agent, one_call(), &trusted).await;
    out.assert_ok();
    let got = seen(&agent, "project");
    assert_eq!(got["GITHUB_TOKEN"], "ghp-wired", "{out}");
    assert_eq!(got["DEPLOY_SECRET"], Value::Null, "{out}");
    assert!(
        !out.stderr
            .lines()
            .any(|l| l.contains("withheld") && l.contains("GITHUB_TOKEN")),
        "{out}"
    );
}
