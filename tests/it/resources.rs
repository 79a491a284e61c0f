//! Prompt resources as the model sees them: AGENTS.md context files, SYSTEM.md /
//! APPEND_SYSTEM.md, `-nc`, and prompt templates with their argument grammar.

use crate::common::wire;
use crate::common::{MockModel, TestAgent, Turn};

const OPENAI: &str = "mock/mock-model";

#[tokio::test]
async fn context_files_reach_the_system_prompt_from_global_then_root_to_cwd() {
    let mock = MockModel::start(vec![Turn::text("ok"), Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    std::fs::write(agent.agent_dir.join("AGENTS.md"), "GLOBAL RULES").unwrap();
    agent.write_file("AGENTS.md", "PROJECT RULES");
    agent.write_file("sub/CLAUDE.md", "SUBDIR RULES");
    agent
        .run(&["--model", OPENAI, "-p", "hi"])
        .await
        .assert_ok();
    let sys = wire::system_text(&mock.bodies()[0]);
    let g = sys
        .find("GLOBAL RULES")
        .expect("global AGENTS.md in the prompt");
    let p = sys
        .find("PROJECT RULES")
        .expect("project AGENTS.md in the prompt");
    assert!(g < p, "global context comes first");
    assert!(sys.contains("<project_instructions path="));
    assert!(
        !sys.contains("SUBDIR RULES"),
        "files below the cwd are not context"
    );

    agent
        .run(&["--model", OPENAI, "-nc", "-p", "hi"])
        .await
        .assert_ok();
    let sys = wire::system_text(&mock.bodies()[1]);
    assert!(!sys.contains("PROJECT RULES"), "-nc disables context files");
}

#[tokio::test]
async fn global_system_md_replaces_and_append_system_md_appends() {
    let mock = MockModel::start(vec![Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    std::fs::write(agent.agent_dir.join("SYSTEM.md"), "You are a pirate.").unwrap();
    std::fs::write(agent.agent_dir.join("APPEND_SYSTEM.md"), "Say arr.").unwrap();
    // An untrusted project's SYSTEM.md has no effect.
    agent.write_file(".pi/SYSTEM.md", "PROJECT SYSTEM");
    agent
        .run(&["--model", OPENAI, "-p", "hi"])
        .await
        .assert_ok();
    let sys = wire::system_text(&mock.bodies()[0]);
    assert!(
        sys.starts_with("You are a pirate.\n\n<addendum>\nSay arr.\n</addendum>\n\n"),
        "{sys}"
    );
    assert!(
        !sys.contains("<tools>") && !sys.contains("<rules>") && !sys.contains("<docs>"),
        "a custom prompt replaces the default sections: {sys}"
    );
    assert!(!sys.contains("PROJECT SYSTEM"));
}

#[tokio::test]
async fn prompt_templates_expand_with_bash_style_arguments() {
    let mock = MockModel::start(vec![Turn::text("ok"), Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    std::fs::create_dir_all(agent.agent_dir.join("prompts")).unwrap();
    std::fs::write(
        agent.agent_dir.join("prompts/review.md"),
        "---\ndescription: Review a file\n---\nReview $1 focusing on ${2:-correctness}. All: $@",
    )
    .unwrap();
    agent
        .run(&["--model", OPENAI, "-p", "/review \"src/main file.rs\""])
        .await
        .assert_ok();
    let text = wire::user_text(&mock.bodies()[0]);
    assert_eq!(
        text,
        "Review src/main file.rs focusing on correctness. All: src/main file.rs"
    );
    // -np stops discovery: the text reaches the model unchanged.
    agent
        .run(&["--model", OPENAI, "-np", "-p", "/review x"])
        .await
        .assert_ok();
    assert_eq!(wire::user_text(&mock.bodies()[1]), "/review x");
}

#[tokio::test]
async fn skills_are_listed_for_the_model_and_expand_on_request() {
    let mock = MockModel::start(vec![Turn::text("ok"), Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    let dir = agent.agent_dir.join("skills/deploy");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: deploy\ndescription: Ship the app to production\n---\nRun ./ship.sh then verify.",
    )
    .unwrap();
    agent
        .run(&["--model", OPENAI, "-p", "hi"])
        .await
        .assert_ok();
    let sys = wire::system_text(&mock.bodies()[0]);
    assert!(sys.contains("<available_skills>"), "{sys}");
    assert!(sys.contains("<name>deploy</name>"));
    assert!(sys.contains("Ship the app to production"));

    agent
        .run(&["--model", OPENAI, "-p", "/skill:deploy to staging"])
        .await
        .assert_ok();
    let user = wire::user_text(&mock.bodies()[1]);
    assert!(user.starts_with("<skill name=\"deploy\""), "{user}");
    assert!(user.contains("Run ./ship.sh then verify."));
    assert!(user.ends_with("to staging"));
}

#[tokio::test]
async fn no_skills_flag_hides_discovered_skills_but_skill_flag_still_loads() {
    let mock = MockModel::start(vec![Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    let dir = agent.agent_dir.join("skills/deploy");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("SKILL.md"), "---\ndescription: Ship it\n---\nbody").unwrap();
    agent.write_file(
        "extra/lint/SKILL.md",
        "---\ndescription: Lint the code\n---\nbody",
    );
    agent
        .run(&[
            "--model",
            OPENAI,
            "-ns",
            "--skill",
            "extra/lint",
            "-p",
            "hi",
        ])
        .await
        .assert_ok();
    let sys = wire::system_text(&mock.bodies()[0]);
    assert!(!sys.contains("Ship it"));
    assert!(sys.contains("Lint the code"), "{sys}");
}

#[tokio::test]
async fn hook_contributed_skills_reach_the_prompt() {
    let mock = MockModel::start(vec![Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    let hook = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-hooks/secret_scan.py");
    agent
        .run(&[
            "--model",
            OPENAI,
            "--hook",
            hook.to_str().unwrap(),
            "-p",
            "hi",
        ])
        .await
        .assert_ok();
    let sys = wire::system_text(&mock.bodies()[0]);
    assert!(sys.contains("<name>security-review</name>"), "{sys}");
}

#[tokio::test]
async fn templates_and_skills_a_hook_discovers_are_loaded_after_the_users_own() {
    let mock = MockModel::start(vec![Turn::text("ok"), Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    let prompts = agent.tmp.join("hook-prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    std::fs::write(prompts.join("triage.md"), "Triage issue $1 by severity.").unwrap();
    // The user's own template of the same name wins over the hook's.
    std::fs::write(prompts.join("review.md"), "HOOK REVIEW $1").unwrap();
    std::fs::create_dir_all(agent.agent_dir.join("prompts")).unwrap();
    std::fs::write(agent.agent_dir.join("prompts/review.md"), "USER REVIEW $1").unwrap();
    let skill = agent.tmp.join("hook-skills/release");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: release\ndescription: Cut a release the team's way\n---\nTag, then publish.",
    )
    .unwrap();
    crate::hooks_messages::messenger(
        &agent,
        serde_json::json!({"resources_discover": {"reply": {
            "prompt_paths": [prompts], "skill_paths": [agent.tmp.join("hook-skills")]}}}),
    );
    for prompt in ["/triage 42", "/review a.rs"] {
        agent
            .run(&["--model", OPENAI, "-p", prompt])
            .await
            .assert_ok();
    }
    let bodies = mock.bodies();
    assert_eq!(wire::user_text(&bodies[0]), "Triage issue 42 by severity.");
    assert_eq!(wire::user_text(&bodies[1]), "USER REVIEW a.rs");
    let sys = wire::system_text(&bodies[0]);
    assert!(sys.contains("<name>release</name>"), "{sys}");
}

/// As the seeds have it: a relative path a hook discovers is the project's, not the hook's.
#[tokio::test]
async fn a_relative_path_a_hook_discovers_resolves_against_the_working_directory() {
    let mock = MockModel::start(vec![Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    agent.write_file(
        "team-skills/deploy/SKILL.md",
        "---\nname: deploy\ndescription: Deploy the project's way\n---\nShip it.",
    );
    crate::hooks_messages::messenger(
        &agent,
        serde_json::json!({"resources_discover": {"reply": {"skill_paths": ["team-skills"]}}}),
    );
    agent
        .run(&["--model", OPENAI, "-p", "hi"])
        .await
        .assert_ok();
    let sys = wire::system_text(&mock.bodies()[0]);
    assert!(sys.contains("<name>deploy</name>"), "{sys}");
}
