//! Our prompts against TypeScript pi 1.6.0's (`@earendil-works/pi-coding-agent`, pinned in
//! `tests/ts-pi/`), byte for byte, as each program sends them to the mock model: the system
//! prompt for fixed tools, skills, context files, appended text and cwd, and the compaction
//! prompts (the first summary with a focus, then the update of it).
//!
//! What 1.6 sends is recorded live when the package is installed and kept in
//! `fixtures/prompts/ts-pi-1.6/` (`PI_PROMPT_RECORD=1` rewrites it); our `pi` is compared with
//! the fixture always and with live 1.6 when it is there (`PI_TS_PI_REQUIRED=1` on CI makes
//! that half required). Paths are replaced by placeholders. The one part that differs on
//! purpose is where the `docs` section points (1.6 names its npm package's files, we name our
//! repository's), so that section's paths are compared for existing, and its other lines for
//! equality.

use std::path::PathBuf;

use serde_json::json;

use crate::common::ts_pi::TsPi;
use crate::common::{path_str, wire, MockModel, TestAgent, Turn};

const MODEL: [&str; 4] = ["--provider", "mock", "--model", "mock-model"];

/// One system prompt case: extra arguments, and whether it gets the shared resources.
struct Case {
    name: &'static str,
    args: &'static [&'static str],
}

const CASES: [Case; 5] = [
    Case {
        name: "default_tools",
        args: &[],
    },
    Case {
        name: "every_builtin_tool",
        args: &["--tools", "read,bash,edit,write,grep,find,ls"],
    },
    Case {
        name: "bash_only",
        args: &["--tools", "bash"],
    },
    Case {
        name: "no_tools",
        args: &["--no-tools"],
    },
    Case {
        name: "custom_prompt",
        args: &[
            "--system-prompt",
            "You are a pirate.",
            "--append-system-prompt",
            "Say arr.",
        ],
    },
];

/// Context files (global and project, one without a final newline), a visible skill whose
/// description needs escaping and a hidden one, and APPEND_SYSTEM.md.
fn prepare(agent: &TestAgent) {
    std::fs::write(agent.agent_dir.join("AGENTS.md"), "Global rules.\n").unwrap();
    agent.write_file("AGENTS.md", "Project rules: run the tests.");
    std::fs::write(agent.agent_dir.join("APPEND_SYSTEM.md"), "Appended text.\n").unwrap();
    let skill = |name: &str, front: &str| {
        let dir = agent.agent_dir.join("skills").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: {name}\n{front}---\nBody of {name}.\n"),
        )
        .unwrap();
    };
    skill(
        "deploy",
        "description: Ship <the app> & tell \"ops\" it's out\n",
    );
    skill(
        "secret",
        "description: Only on request\ndisable-model-invocation: true\n",
    );
}

#[derive(Clone, Copy)]
enum Program<'a> {
    Ts(&'a TsPi),
    Ours,
}

/// Every request body the program sent while answering `hi` once in print mode.
async fn system_prompt_of(program: Program<'_>, case: &Case) -> String {
    let mock = MockModel::start(vec![Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    prepare(&agent);
    let mut args: Vec<&str> = MODEL.to_vec();
    args.extend(case.args);
    args.extend(["-p", "hi"]);
    let out = match program {
        Program::Ts(ts) => ts.run(&agent, &args).await,
        Program::Ours => agent.run(&args).await,
    };
    out.assert_ok();
    let bodies = mock.bodies();
    assert_eq!(bodies.len(), 1, "{}: one model request", case.name);
    normalise(&agent, program, &wire::system_text(&bodies[0]))
}

/// Paths replaced by placeholders, longest first so a path inside another is not split.
fn normalise(agent: &TestAgent, program: Program<'_>, text: &str) -> String {
    let mut paths: Vec<(String, &str)> = vec![
        (path_str(&agent.agent_dir), "AGENT_DIR"),
        (path_str(&agent.cwd), "CWD"),
        (path_str(&agent.home), "HOME"),
        (path_str(&agent.tmp), "TMP"),
    ];
    if let Program::Ts(ts) = program {
        paths.push((path_str(&ts.package_dir), "TS_PI"));
    }
    paths.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
    paths
        .into_iter()
        .fold(text.to_string(), |t, (p, name)| t.replace(&p, name))
}

fn fixture_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/prompts/ts-pi-1.6")
        .join(format!("{name}.txt"))
}

/// 1.6's text for `name`: recorded live (and written to the fixture under
/// `PI_PROMPT_RECORD=1`) when installed, and the fixture; each is a reference to compare with.
async fn references<F, Fut>(name: &str, record: F) -> Vec<(String, String)>
where
    F: FnOnce(TsPi) -> Fut,
    Fut: std::future::Future<Output = String>,
{
    let mut out = Vec::new();
    let path = fixture_path(name);
    if let Some(ts) = TsPi::find_v1_6() {
        let live = record(ts).await;
        if std::env::var("PI_PROMPT_RECORD").is_ok_and(|v| v == "1") {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &live).unwrap();
        }
        out.push((format!("live TS pi 1.6 ({name})"), live));
    }
    let fixture = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (record with PI_PROMPT_RECORD=1)", path.display()));
    out.push((path.display().to_string(), fixture));
    out
}

/// The prompt with the `docs` section's body cut out, and that body.
fn split_docs(prompt: &str) -> (String, Option<String>) {
    let Some(start) = prompt.find("<docs>\n") else {
        return (prompt.to_string(), None);
    };
    let body_at = start + "<docs>\n".len();
    let end = prompt[body_at..]
        .find("\n</docs>")
        .map(|i| body_at + i)
        .expect("the docs section is closed");
    let rest = format!("{}<docs>\nDOCS{}", &prompt[..start], &prompt[end..]);
    (rest, Some(prompt[body_at..end].to_string()))
}

/// The docs lines that name no path: pi 1.6's wording, which ours keeps.
fn docs_wording(body: &str) -> Vec<&str> {
    body.lines()
        .filter(|l| {
            !l.starts_with("- Main documentation:")
                && !l.starts_with("- Additional docs:")
                && !l.starts_with("- Examples:")
                && !l.starts_with("- When asked about:")
        })
        .collect()
}

#[track_caller]
fn assert_same_prompt(ours: &str, reference: &str, what: &str) {
    let (ours_rest, ours_docs) = split_docs(ours);
    let (ref_rest, ref_docs) = split_docs(reference);
    assert_eq!(ours_rest, ref_rest, "our prompt differs from {what}");
    match (ours_docs, ref_docs) {
        (Some(o), Some(r)) => {
            assert_eq!(docs_wording(&o), docs_wording(&r), "docs wording vs {what}");
            for line in o.lines() {
                for label in ["- Main documentation: ", "- Additional docs: "] {
                    if let Some(p) = line.strip_prefix(label) {
                        assert!(PathBuf::from(p).exists(), "{line}: no such path");
                    }
                }
            }
        }
        (o, r) => assert_eq!(o.is_some(), r.is_some(), "a docs section in one only"),
    }
}

#[tokio::test]
async fn the_system_prompt_is_pi_1_6s_for_the_same_tools_skills_context_and_cwd() {
    for case in &CASES {
        let ours = system_prompt_of(Program::Ours, case).await;
        let refs = references(case.name, |ts| async move {
            system_prompt_of(Program::Ts(&ts), case).await
        })
        .await;
        for (what, reference) in refs {
            assert_same_prompt(&ours, &reference, &what);
        }
    }
}

/// The summary requests of a session compacted twice over RPC, keeping almost nothing: with
/// a focus, then the update of the first summary; each time the kept turn is split, so its
/// beginning gets the turn-prefix prompt. Each as `SYSTEM:\n…\n\nUSER:\n…`, normalised.
async fn compaction_prompts_of(program: Program<'_>) -> String {
    // Keeping one token splits the turn each time: a history summary and a turn-prefix one.
    let turns = vec![
        Turn::text("Hello back."),
        Turn::text("Hello again."),
        Turn::text("## Goal\nSay hello."),
        Turn::text("## Original Request\nagain"),
        Turn::text("Still here."),
        Turn::text("## Goal\nSay hello twice."),
        Turn::text("## Original Request\nonce more"),
    ];
    let mock = MockModel::start(turns).await;
    let agent = TestAgent::with_mock(&mock);
    std::fs::write(
        agent.agent_dir.join("settings.json"),
        json!({"compaction": {"keepRecentTokens": 1}}).to_string(),
    )
    .unwrap();
    let mut rpc = match program {
        Program::Ts(ts) => ts.rpc(&agent, &MODEL),
        Program::Ours => agent.rpc(&MODEL),
    };
    let ask = async |rpc: &mut crate::common::ts_pi::RpcProcess, id: &str, text: &str| {
        rpc.request(json!({"id": id, "type": "prompt", "message": text}))
            .await;
        rpc.event("agent_end").await;
    };
    ask(&mut rpc, "p1", "hi").await;
    ask(&mut rpc, "p2", "again").await;
    let c1 = rpc
        .request(json!({"id": "c1", "type": "compact", "customInstructions": "the greeting"}))
        .await;
    assert_eq!(c1["success"], true, "{c1}");
    ask(&mut rpc, "p3", "once more").await;
    let c2 = rpc.request(json!({"id": "c2", "type": "compact"})).await;
    assert_eq!(c2["success"], true, "{c2}");
    assert_eq!(rpc.close().await, Some(0), "{}", rpc.tail());
    assert_eq!(mock.pending(), 0, "every scripted turn was asked for");
    let summaries: Vec<String> = mock
        .bodies()
        .iter()
        .map(|b| (wire::system_text(b), wire::user_text(b)))
        .filter(|(system, _)| system.starts_with("You are a context summarization assistant"))
        .map(|(system, user)| format!("SYSTEM:\n{system}\n\nUSER:\n{user}"))
        .collect();
    assert_eq!(summaries.len(), 4, "two compactions of a split turn each");
    let text = summaries.join("\n\n=====\n\n");
    normalise(&agent, program, &text)
}

#[tokio::test]
async fn the_compaction_prompts_are_pi_1_6s() {
    let ours = compaction_prompts_of(Program::Ours).await;
    let refs = references("compaction", |ts| async move {
        compaction_prompts_of(Program::Ts(&ts)).await
    })
    .await;
    for (what, reference) in refs {
        assert_eq!(ours, reference, "our compaction prompts differ from {what}");
    }
}
