//! A resumed session starts with the tools it last offered, as pi 1.6 restores them from the
//! transcript's system messages: narrowed by `--tools`, a hook's `tools.set_active` or
//! anything else, it stays narrowed on `-c`, `--session` and RPC `switch_session`; a tool it
//! names that is gone is left out (and declared removed), a tool new to it starts active,
//! `--tools +name`/`-name` change the restored set, and an allowlist decides instead. Where
//! the same session file can be handed to pi 1.6, it is, and the tools the two offer the mock
//! model are compared.

use serde_json::{json, Value};

use crate::common::hooks::repo;
use crate::common::mcp::{fake, write_mcp};
use crate::common::ts_pi::TsPi;
use crate::common::wire;
use crate::common::{path_str, MockModel, TestAgent, Turn};
use crate::rpc_reference::scenarios::Program;
use crate::sessions::only_session_file;

const OPENAI: &str = "mock/mock-model";

/// The system messages of the session file, in order.
fn systems(agent: &TestAgent) -> Vec<Value> {
    let text = std::fs::read_to_string(only_session_file(agent)).expect("session file");
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("json line"))
        .filter(|l| l["message"]["role"] == "system")
        .map(|l| l["message"].clone())
        .collect()
}

fn names(list: &Value) -> Vec<String> {
    let mut out: Vec<String> = list
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect();
    out.sort();
    out
}

/// The tools offered in the last request the mock received.
fn last_offered(mock: &MockModel) -> Vec<String> {
    wire::tool_names(mock.bodies().last().expect("a request"))
}

/// A hook (Python, on `sample-hooks/pi_hook.py`) whose body is `body`, as a settings entry.
fn py_hook(agent: &TestAgent, name: &str, body: &str) -> Value {
    let path = agent.tmp.join(format!("{name}.py"));
    let samples = path_str(&repo().join("sample-hooks"));
    let text = format!(
        "import json, sys\nsys.dont_write_bytecode = True\n\
         sys.path.insert(0, {samples:?})\nfrom pi_hook import Hook\n\
         hook = Hook({name:?})\n\n{body}\n\nhook.run()\n"
    );
    std::fs::write(&path, text).expect("write hook");
    json!({"command": format!("python3 {}", path_str(&path)), "name": name,
           "timeout_ms": 10000, "start_timeout_ms": 10000})
}

/// A tool `narrow` that leaves the model `read` and itself.
const NARROW: &str = r#"
@hook.tool("narrow", "Narrow the tools")
def narrow(args, ctx):
    return json.dumps(hook.call("tools.set_active", {"names": ["read", "narrow"]}, timeout=10))
"#;

const FRESH: &str = r#"
@hook.tool("fresh", "A tool the session has not seen")
def fresh(args, ctx):
    return "fresh"
"#;

/// A session whose first run narrowed the tools through a hook's `tools.set_active`: the
/// patch is in the transcript, and `-c` offers the narrowed set from its first request on.
#[tokio::test]
async fn a_loadout_a_hook_narrowed_is_what_the_resumed_session_offers() {
    let mock = MockModel::start(vec![
        Turn::tools(&[("narrow", json!({}))]),
        Turn::text("narrowed"),
        Turn::text("still narrow"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    agent.write_settings(&json!({"hooks": [py_hook(&agent, "narrower", NARROW)]}));
    let out = agent.run(&["--model", OPENAI, "-p", "narrow it"]).await;
    out.assert_ok();
    let bodies = mock.bodies();
    assert_eq!(
        wire::tool_names(&bodies[0]),
        ["bash", "edit", "narrow", "read", "write"]
    );
    assert_eq!(wire::tool_names(&bodies[1]), ["narrow", "read"]);
    let recorded = systems(&agent);
    assert_eq!(recorded.len(), 2, "{recorded:#?}");
    assert_eq!(
        names(&recorded[1]["toolsRemoved"]),
        ["bash", "edit", "write"]
    );

    let out = agent
        .run(&["--model", OPENAI, "--mode", "json", "-c", "-p", "again"])
        .await;
    out.assert_ok();
    assert_eq!(last_offered(&mock), ["narrow", "read"], "restored on -c");
    assert_eq!(
        systems(&agent).len(),
        2,
        "nothing changed, nothing declared"
    );
    let prompt = wire::system_text(mock.bodies().last().unwrap());
    assert!(
        !prompt.contains("- bash:"),
        "the prompt describes the restored tools only:\n{prompt}"
    );
}

/// The hook is gone when the session resumes: its tool is left out, declared removed, and a
/// hook tool the session never mentioned starts active.
#[tokio::test]
async fn a_recorded_tool_that_is_gone_is_dropped_and_a_new_one_starts_active() {
    let mock = MockModel::start(vec![
        Turn::tools(&[("narrow", json!({}))]),
        Turn::text("narrowed"),
        Turn::text("without the hook"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    agent.write_settings(&json!({"hooks": [py_hook(&agent, "narrower", NARROW)]}));
    agent
        .run(&["--model", OPENAI, "-p", "narrow it"])
        .await
        .assert_ok();
    agent.write_settings(&json!({"hooks": [py_hook(&agent, "other", FRESH)]}));
    agent
        .run(&["--model", OPENAI, "-c", "-p", "again"])
        .await
        .assert_ok();
    assert_eq!(last_offered(&mock), ["fresh", "read"]);
    let recorded = systems(&agent);
    assert_eq!(recorded.len(), 3, "{recorded:#?}");
    assert_eq!(names(&recorded[2]["toolsRemoved"]), ["narrow"]);
    assert_eq!(names(&recorded[2]["toolsAdded"]), ["fresh"]);
}

/// An MCP server's tools the session has not seen start active in a narrowed session, as
/// tools joining do; the narrowed built-ins stay narrowed.
#[tokio::test]
async fn mcp_tools_new_to_a_narrowed_session_join_it() {
    let mock = MockModel::start(vec![
        Turn::tools(&[("narrow", json!({}))]),
        Turn::text("narrowed"),
        Turn::text("with the server"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    agent.write_settings(&json!({"hooks": [py_hook(&agent, "narrower", NARROW)]}));
    agent
        .run(&["--model", OPENAI, "-p", "narrow it"])
        .await
        .assert_ok();
    write_mcp(
        &agent,
        json!({"fake": fake(&[], json!({"exposure": "direct"}))}),
    );
    agent
        .run(&["--model", OPENAI, "-c", "-p", "again"])
        .await
        .assert_ok();
    let offered = last_offered(&mock);
    assert!(
        offered.contains(&"mcp__fake__ping".to_string()),
        "{offered:?}"
    );
    for gone in ["bash", "edit", "write"] {
        assert!(!offered.contains(&gone.to_string()), "{offered:?}");
    }
    assert!(offered.contains(&"read".to_string()), "{offered:?}");
}

/// `--tools +name`/`-name` change the restored loadout; an allowlist replaces it, and
/// `--no-builtin-tools` leaves it to the command line too.
#[tokio::test]
async fn tools_changes_apply_to_the_restored_loadout_and_an_allowlist_replaces_it() {
    let mock = MockModel::start((0..5).map(|_| Turn::text("ok")).collect()).await;
    let agent = TestAgent::with_mock(&mock);
    agent
        .run(&["--model", OPENAI, "--tools", "read,grep", "-p", "one"])
        .await
        .assert_ok();
    assert_eq!(last_offered(&mock), ["grep", "read"]);
    agent
        .run(&["--model", OPENAI, "-c", "-p", "two"])
        .await
        .assert_ok();
    assert_eq!(
        last_offered(&mock),
        ["grep", "read"],
        "grep is restored too"
    );
    agent
        .run(&[
            "--model",
            OPENAI,
            "-c",
            "--tools",
            "+bash,-grep",
            "-p",
            "three",
        ])
        .await
        .assert_ok();
    assert_eq!(last_offered(&mock), ["bash", "read"]);
    agent
        .run(&["--model", OPENAI, "-c", "--tools", "ls", "-p", "four"])
        .await
        .assert_ok();
    assert_eq!(last_offered(&mock), ["ls"], "an allowlist decides");
    agent
        .run(&["--model", OPENAI, "-c", "-p", "five"])
        .await
        .assert_ok();
    assert_eq!(last_offered(&mock), ["ls"], "and is what is restored next");
    let out = agent
        .run(&["--model", OPENAI, "--tools", "read,+bash", "-p", "x"])
        .await;
    out.assert_code(1);
    assert!(
        out.stderr
            .contains("--tools: tool names cannot be mixed with +name or -name entries"),
        "{out}"
    );
}

/// pi 1.6 resumes the session the same way: a session narrowed by `--tools` and then by a
/// hook, whose hook is gone, offers the same tools in both programs, and both declare the
/// gone tool removed.
#[tokio::test]
async fn pi_1_6_restores_the_same_loadout_from_the_same_session() {
    let Some(ts) = TsPi::find_v1_6() else { return };
    let mock = MockModel::start(vec![
        Turn::tools(&[("narrow", json!({}))]),
        Turn::text("narrowed"),
        Turn::text("ours"),
        Turn::text("theirs"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    agent.write_settings(&json!({"hooks": [py_hook(&agent, "narrower", NARROW)]}));
    agent
        .run(&[
            "--model",
            OPENAI,
            "--tools",
            "read,grep,narrow",
            "-p",
            "narrow it",
        ])
        .await
        .assert_ok();
    agent.write_settings(&json!({}));
    let file = only_session_file(&agent);
    let before = std::fs::read_to_string(&file).unwrap();
    let session = file.to_str().unwrap();

    agent
        .run(&["--model", OPENAI, "--session", session, "-p", "again"])
        .await
        .assert_ok();
    let ours = last_offered(&mock);
    let our_patch = systems(&agent).last().cloned().unwrap();

    std::fs::write(&file, &before).unwrap();
    ts.run(
        &agent,
        &["--model", OPENAI, "--session", session, "-p", "again"],
    )
    .await
    .assert_ok();
    let theirs = last_offered(&mock);
    let their_patch = systems(&agent).last().cloned().unwrap();
    assert_eq!(ours, ["read"]);
    assert_eq!(ours, theirs, "pi 1.6 offers what we offer");
    assert_eq!(names(&our_patch["toolsRemoved"]), ["narrow"]);
    assert_eq!(our_patch["toolsRemoved"], their_patch["toolsRemoved"]);
    assert_eq!(our_patch.get("toolsAdded"), their_patch.get("toolsAdded"));
}

/// What an RPC client sees, in `program`: a session narrowed to `read` and `grep` in print
/// mode; then, in RPC mode with the default tools, a prompt in a new session, a
/// `switch_session` to the narrowed one and a prompt, `new_session` and a prompt. Returns the
/// tools each RPC prompt offered.
async fn offered_across_switches(program: &Program<'_>) -> Vec<Vec<String>> {
    let mock = MockModel::start((0..4).map(|_| Turn::text("ok")).collect()).await;
    let agent = TestAgent::with_mock(&mock);
    let first = ["--model", OPENAI, "--tools", "read,grep", "-p", "narrow"];
    match program {
        Program::Ts(ts) => ts.run(&agent, &first).await,
        Program::Ours => agent.run(&first).await,
    }
    .assert_ok();
    let narrowed = only_session_file(&agent);
    let mut r = program.rpc(&agent, &["--model", OPENAI]);
    let prompt = async |r: &mut crate::common::rpc::RpcProcess, id: &str| {
        let answer = r
            .request(json!({"id": id, "type": "prompt", "message": id}))
            .await;
        assert_eq!(answer["success"], true, "{answer}");
        r.event("agent_settled").await;
        last_offered(&mock)
    };
    let mut seen = vec![prompt(&mut r, "elsewhere").await];
    let switched = r
        .request(json!({"id": "sw", "type": "switch_session", "sessionPath": narrowed}))
        .await;
    assert_eq!(switched["success"], true, "{switched}");
    seen.push(prompt(&mut r, "back").await);
    let new = r.request(json!({"id": "n", "type": "new_session"})).await;
    assert_eq!(new["success"], true, "{new}");
    seen.push(prompt(&mut r, "fresh").await);
    assert_eq!(r.close().await, Some(0), "{}", r.tail());
    seen
}

/// `switch_session` restores the loadout the session recorded; `new_session` starts with the
/// command line's tools again. pi 1.6 run through the same script offers the same tools.
#[tokio::test]
async fn switch_session_restores_the_recorded_loadout_and_new_session_the_command_lines() {
    let defaults: Vec<String> = ["bash", "edit", "read", "write"].map(String::from).into();
    let narrowed: Vec<String> = ["grep", "read"].map(String::from).into();
    let expected = vec![defaults.clone(), narrowed, defaults];
    assert_eq!(offered_across_switches(&Program::Ours).await, expected);
    if let Some(ts) = TsPi::find_v1_6() {
        assert_eq!(
            offered_across_switches(&Program::Ts(&ts)).await,
            expected,
            "pi 1.6"
        );
    }
}
