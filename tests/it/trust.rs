//! Project trust through the real binary: an untrusted project's hooks, settings, skills,
//! templates and SYSTEM.md have no effect (its hooks never start a process); `-a` loads them;
//! a user hook's `project_trust` answer decides (and is remembered); `trust.json` decisions
//! are inherited from the nearest ancestor; `defaultProjectTrust` comes from user settings only.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::common::hooks::{fixture, recorded_events, scripted};
use crate::common::wire;
use crate::common::{MockModel, TestAgent, Turn};

/// A project with every kind of trust-gated resource. Its two hooks (one from
/// `.pi/settings.json`, one executable in `.pi/hooks/`) touch a marker file as the very first
/// thing their process does, before any handshake. Returns the two marker paths.
fn untrusted_project(agent: &TestAgent) -> [PathBuf; 2] {
    let outside = agent.agent_dir.parent().expect("root").to_path_buf();
    let markers = [
        outside.join("settings-hook-ran"),
        outside.join("dir-hook-ran"),
    ];
    let hook = |marker: &Path| {
        format!(
            "#!/bin/sh\ntouch '{}'\nexec python3 '{}'\n",
            marker.display(),
            fixture("scripted.py")
        )
    };
    let settings_hook = outside.join("settings-hook.sh");
    std::fs::write(&settings_hook, hook(&markers[0])).unwrap();
    let dir_hook = agent.write_file(".pi/hooks/dir-hook", hook(&markers[1]));
    for p in [&settings_hook, &dir_hook] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    agent.write_file(
        ".pi/settings.json",
        json!({
            "hooks": [{"command": settings_hook.display().to_string(), "name": "from-settings"}],
            "defaultProvider": "mock-anthropic",
            "defaultModel": "mock-claude",
        })
        .to_string(),
    );
    agent.write_file(
        ".pi/skills/proj-skill/SKILL.md",
        "---\nname: proj-skill\ndescription: A skill the project ships\n---\nBody",
    );
    agent.write_file(".pi/prompts/tpl.md", "TEMPLATE BODY $1");
    agent.write_file(".pi/SYSTEM.md", "PROJECT SYSTEM PROMPT");
    markers
}

fn model_of(body: &Value) -> &str {
    body["model"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn untrusted_project_resources_have_no_effect_and_its_hooks_never_start() {
    let mock = MockModel::start(vec![Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    let markers = untrusted_project(&agent);
    let out = agent.run(&["-p", "/tpl x"]).await;
    out.assert_ok();
    for m in &markers {
        assert!(!m.exists(), "{} ran in an untrusted project", m.display());
    }
    let body = &mock.bodies()[0];
    assert_eq!(
        model_of(body),
        "mock-model",
        "project settings were applied"
    );
    let sys = wire::system_text(body);
    assert!(!sys.contains("PROJECT SYSTEM PROMPT"), "{sys}");
    assert!(!sys.contains("proj-skill"), "project skill listed: {sys}");
    assert_eq!(wire::user_text(body), "/tpl x", "project template expanded");
    assert!(
        out.stderr.contains("not trusted") && out.stderr.contains("-a"),
        "the user is told why and how: {}",
        out.stderr
    );
}

#[tokio::test]
async fn approve_flag_loads_project_settings_hooks_skills_templates_and_system_md() {
    let mock = MockModel::start(vec![Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    let markers = untrusted_project(&agent);
    agent.run(&["-a", "-p", "/tpl x"]).await.assert_ok();
    for m in &markers {
        assert!(
            m.exists(),
            "{} did not run in a trusted project",
            m.display()
        );
    }
    let body = &mock.bodies()[0];
    assert_eq!(model_of(body), "mock-claude", "project settings merged");
    let sys = wire::system_text(body);
    assert!(sys.starts_with("PROJECT SYSTEM PROMPT"), "{sys}");
    assert!(sys.contains("proj-skill"), "{sys}");
    assert_eq!(wire::user_text(body), "TEMPLATE BODY x");

    // -na wins over a remembered "trusted".
    std::fs::write(
        agent.agent_dir.join("trust.json"),
        json!({ agent.cwd.display().to_string(): true }).to_string(),
    )
    .unwrap();
    for m in &markers {
        std::fs::remove_file(m).unwrap();
    }
    let mock2 = MockModel::start(vec![Turn::text("ok")]).await;
    agent.write_models(&mock2.models_json());
    agent.run(&["-na", "-p", "hi"]).await.assert_ok();
    assert!(markers.iter().all(|m| !m.exists()));
    assert_eq!(model_of(&mock2.bodies()[0]), "mock-model");
}

#[tokio::test]
async fn a_user_hook_answering_project_trust_decides_and_is_remembered() {
    let mock = MockModel::start(vec![Turn::text("ok"), Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    let markers = untrusted_project(&agent);
    let judge = scripted(
        &agent,
        "judge",
        json!({
            "subscriptions": [{"event": "project_trust"}],
            "on": {"project_trust": {"reply": {"trusted": "yes", "remember": true}}},
        }),
    );
    agent.write_settings(&json!({ "hooks": [judge] }));
    let out = agent.run(&["--mode", "json", "--hook-events", "hi"]).await;
    out.assert_ok();
    assert!(
        markers.iter().all(|m| m.exists()),
        "the hook's yes trusted it"
    );
    let decision = out
        .events()
        .into_iter()
        .find(|e| e["type"] == "hook_decision" && e["event"] == "project_trust")
        .expect("a hook_decision for project_trust");
    assert_eq!(decision["outcome"], "trusted");
    assert_eq!(decision["answers"][0]["outcome"], "trust");
    let asked = recorded_events(&agent, "judge", "project_trust");
    assert_eq!(asked.len(), 1);
    assert_eq!(
        asked[0]["payload"]["cwd"],
        json!(agent.cwd.display().to_string())
    );
    let store: Value =
        serde_json::from_slice(&std::fs::read(agent.agent_dir.join("trust.json")).unwrap())
            .unwrap();
    assert_eq!(store[agent.cwd.display().to_string()], json!(true));

    // Without the hook, the remembered decision still trusts the project.
    agent.write_settings(&json!({}));
    for m in &markers {
        std::fs::remove_file(m).unwrap();
    }
    agent.run(&["-p", "hi"]).await.assert_ok();
    assert!(markers.iter().all(|m| m.exists()));
}

#[tokio::test]
async fn trust_json_nearest_ancestor_decides() {
    let mock = MockModel::start(vec![Turn::text("ok"), Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    let markers = untrusted_project(&agent);
    let parent = agent.cwd.parent().unwrap().display().to_string();
    std::fs::write(
        agent.agent_dir.join("trust.json"),
        json!({ parent.clone(): true }).to_string(),
    )
    .unwrap();
    agent.run(&["-p", "hi"]).await.assert_ok();
    assert!(
        markers.iter().all(|m| m.exists()),
        "inherited from the parent"
    );
    assert_eq!(model_of(&mock.bodies()[0]), "mock-claude");

    for m in &markers {
        std::fs::remove_file(m).unwrap();
    }
    std::fs::write(
        agent.agent_dir.join("trust.json"),
        json!({ parent: true, agent.cwd.display().to_string(): false }).to_string(),
    )
    .unwrap();
    agent.run(&["-p", "hi"]).await.assert_ok();
    assert!(markers.iter().all(|m| !m.exists()), "the nearer entry wins");
    assert_eq!(model_of(&mock.bodies()[1]), "mock-model");
}

#[tokio::test]
async fn default_project_trust_comes_from_user_settings_only() {
    let mock = MockModel::start(vec![Turn::text("ok"), Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    let markers = untrusted_project(&agent);
    // The project cannot vouch for itself.
    let mut own: Value = serde_json::from_str(&agent.read_string(".pi/settings.json")).unwrap();
    own["defaultProjectTrust"] = json!("always");
    agent.write_file(".pi/settings.json", own.to_string());
    agent.run(&["-p", "hi"]).await.assert_ok();
    assert!(markers.iter().all(|m| !m.exists()));

    agent.write_settings(&json!({"defaultProjectTrust": "always"}));
    agent.run(&["-p", "hi"]).await.assert_ok();
    assert!(markers.iter().all(|m| m.exists()));
    assert_eq!(model_of(&mock.bodies()[1]), "mock-claude");
}

#[tokio::test]
async fn a_directory_with_nothing_to_guard_asks_no_hook() {
    let mock = MockModel::start(vec![Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    // A bare .pi/ directory does not count.
    std::fs::create_dir_all(agent.cwd.join(".pi")).unwrap();
    let judge = scripted(
        &agent,
        "judge",
        json!({
            "subscriptions": [{"event": "project_trust"}],
            "on": {"project_trust": {"reply": {"trusted": "no"}}},
        }),
    );
    agent.write_settings(&json!({ "hooks": [judge] }));
    let out = agent.run(&["-p", "hi"]).await;
    out.assert_ok();
    assert!(recorded_events(&agent, "judge", "project_trust").is_empty());
    assert!(!out.stderr.contains("not trusted"), "{}", out.stderr);
}

#[tokio::test]
async fn pi_hooks_lists_a_project_hook_only_when_the_project_is_trusted() {
    let agent = TestAgent::new();
    let markers = untrusted_project(&agent);
    let out = agent.run(&["hooks"]).await;
    assert!(
        markers.iter().all(|m| !m.exists()),
        "`pi hooks` started an untrusted project's hook"
    );
    assert!(!out.stdout.contains("from-settings"), "{out}");
    let out = agent.run(&["hooks", "-a"]).await;
    assert!(markers.iter().all(|m| m.exists()), "{out}");
    assert!(out.stdout.contains("from-settings"), "{out}");
    assert!(out.stdout.contains("project"), "{out}");
}
