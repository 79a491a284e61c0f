//! Session state, commands, dialogs-as-events and dynamic subscriptions for hooks, through the
//! real binary and real Python hooks built on `sample-hooks/pi_hook.py`: a hook rebuilds its
//! state from `session.get_branch` entries after a fork; `session.get_entries {since}` with a
//! cursor kept across a `/reload`; `commands.list` with each command's source; other hooks
//! hear `ui_prompt_start` / `ui_prompt_end` around a hook's dialog; a hook subscribes to
//! `message_update` from a command and unsubscribes from another, and hears only what came in
//! between; a managed hook cannot unsubscribe its own gate.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::hooks::{bash_then_final, hook_errors, repo, run_faux, run_json};
use crate::common::{only_tool_end, path_str, wait_until, TestAgent};

/// Writes a hook named `name` whose body (Python, after `hook = Hook(name)`) is `body`, and
/// returns its settings entry with `config`.
fn py_hook(agent: &TestAgent, name: &str, body: &str, config: Value) -> Value {
    let path = agent.tmp.join(format!("{name}.py"));
    let samples = path_str(&repo().join("sample-hooks"));
    let text = format!(
        "import json, os, sys\nsys.dont_write_bytecode = True\nsys.path.insert(0, {samples:?})\n\
         from pi_hook import Hook, HostError\nhook = Hook({name:?})\n\n\
         def log(**kw):\n    with open(hook.config[\"log\"], \"a\") as f:\n        \
         f.write(json.dumps(kw) + \"\\n\")\n\n{body}\n\nhook.run()\n"
    );
    std::fs::write(&path, text).expect("write hook");
    json!({"command": format!("python3 {}", path_str(&path)), "name": name, "config": config,
           "timeout_ms": 10000, "start_timeout_ms": 10000})
}

/// Where hook `name` logs (its `config.log`).
fn log_path(agent: &TestAgent, name: &str) -> PathBuf {
    agent.tmp.join(format!("{name}.log"))
}

fn logged(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("log line is JSON"))
        .collect()
}

fn with_log(agent: &TestAgent, name: &str) -> Value {
    json!({"log": path_str(&log_path(agent, name))})
}

const TODO: &str = r#"
STATE = {"done": []}

def rebuild(reason):
    branch = hook.call("session.get_branch", {}, timeout=10)
    done = []
    for e in branch["entries"]:
        if e["type"] == "custom" and e.get("customType") == "todo/state":
            done = e["data"]["done"]
    STATE["done"] = done
    log(event="rebuild", reason=reason, done=done, leaf=branch["leaf_id"],
        types=[e["type"] for e in branch["entries"]],
        labels=[e.get("label") for e in branch["entries"] if e["type"] == "label"],
        messages=len(branch["messages"]))

@hook.on("session_start")
def start(payload, ctx):
    rebuild(payload.get("reason"))

@hook.command("done", "Mark an item done")
def done(args, ctx):
    STATE["done"] = STATE["done"] + [args]
    r = hook.call("session.append_entry",
                  {"custom_type": "todo/state", "data": {"done": STATE["done"]}}, timeout=10)
    hook.call("session.set_label", {"entry_id": r["id"], "label": "todo " + args}, timeout=10)
    return "ok"

@hook.command("fork-first", "Fork before the first prompt")
def fork_first(args, ctx):
    entries = hook.call("session.get_branch", {}, timeout=10)["entries"]
    first = next(e["id"] for e in entries
                 if e["type"] == "message" and e["message"]["role"] == "user")
    return json.dumps(hook.call("session.fork", {"entry_id": first}, timeout=30))

@hook.command("state", "Show the state")
def state(args, ctx):
    return json.dumps(STATE)
"#;

#[tokio::test]
async fn a_hook_rebuilds_its_state_from_the_branch_entries_after_a_fork() {
    let agent = TestAgent::new();
    let hook = py_hook(&agent, "todo", TODO, with_log(&agent, "todo"));
    agent.write_settings(&json!({ "hooks": [hook] }));
    let out = run_faux(
        &agent,
        json!(["hi there"]),
        &["-p", "/done a", "hello", "/done b", "/fork-first", "/state"],
    )
    .await;
    out.assert_ok();
    let log = logged(&log_path(&agent, "todo"));
    // At start-up, before the agent exists, the (empty) branch is already readable.
    assert_eq!(log[0]["reason"], "startup", "{log:#?}\n{out}");
    assert_eq!(log[0]["done"], json!([]));
    // The fork's new hook process knows nothing but what the branch holds: the custom entry
    // and the label written before the first prompt, no messages.
    let fork = log
        .iter()
        .find(|l| l["reason"] == "fork")
        .unwrap_or_else(|| panic!("no rebuild after the fork: {log:#?}\n{out}"));
    assert_eq!(fork["done"], json!(["a"]), "{fork:#?}");
    let types: Vec<&str> = fork["types"]
        .as_array()
        .expect("types")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        types.contains(&"custom") && types.contains(&"label"),
        "{types:?}"
    );
    // No conversation: the one message is the system message declaring the prompt, which
    // came before the first prompt (as in pi 1.6).
    assert_eq!(
        types.iter().filter(|t| **t == "message").count(),
        1,
        "{types:?}"
    );
    assert_eq!(fork["labels"], json!(["todo a"]));
    assert!(
        fork["messages"].is_u64(),
        "the messages are still there: {fork:#?}"
    );
    // The state the user sees after the fork is the rebuilt one.
    assert!(
        out.stdout.lines().any(|l| l.trim() == r#"{"done": ["a"]}"#),
        "{out}"
    );
}

const CURSOR: &str = r#"
@hook.command("mark", "Remember the newest entry")
def mark(args, ctx):
    page = hook.call("session.get_entries", {}, timeout=10)
    with open(hook.config["cursor"], "w") as f:
        f.write(page["leaf_id"])
    log(event="mark", count=len(page["entries"]), leaf=page["leaf_id"])
    return "marked"

@hook.command("note", "Append a note entry")
def note(args, ctx):
    hook.call("session.append_entry", {"custom_type": "note", "data": args}, timeout=10)
    return "noted"

@hook.command("since", "Entries since the mark")
def since(args, ctx):
    cursor = args or open(hook.config["cursor"]).read().strip()
    try:
        page = hook.call("session.get_entries", {"since": cursor}, timeout=10)
    except HostError as e:
        log(event="since", error=e.code)
        return "since failed: " + e.code
    kinds = [e["type"] + ("/" + e["message"]["role"] if e["type"] == "message" else "")
             for e in page["entries"]]
    log(event="since", pid=os.getpid(), kinds=kinds, leaf=page["leaf_id"],
        first_parent=page["entries"][0]["parentId"] if page["entries"] else None)
    return "since: " + " ".join(kinds)

@hook.on("session_start")
def start(payload, ctx):
    log(event="start", reason=payload.get("reason"), pid=os.getpid())
"#;

#[test]
fn get_entries_since_a_cursor_returns_only_later_entries_across_a_reload() {
    let agent = TestAgent::new();
    let mut config = with_log(&agent, "cursor");
    config["cursor"] = json!(path_str(&agent.tmp.join("cursor.txt")));
    let hook = py_hook(&agent, "cursor", CURSOR, config);
    agent.write_settings(&json!({ "hooks": [hook] }));
    let mut pi = agent.pty_faux(json!(["hi there"]), 100, 30);
    pi.type_text("/mark");
    pi.enter();
    pi.wait_transcript("marked");
    pi.type_text("hello");
    pi.enter();
    pi.wait_transcript("hi there");
    pi.type_text("/note x");
    pi.enter();
    pi.wait_transcript("noted");
    pi.type_text("/reload");
    pi.enter();
    pi.wait_transcript("Reloaded");
    pi.type_text("/since");
    pi.enter();
    pi.wait_transcript("since: ");
    pi.type_text("/since 0000beef");
    pi.enter();
    pi.wait_transcript("since failed");
    pi.quit();

    let log = logged(&log_path(&agent, "cursor"));
    let mark = log.iter().find(|l| l["event"] == "mark").expect("mark");
    let starts: Vec<&Value> = log.iter().filter(|l| l["event"] == "start").collect();
    assert!(
        starts.iter().any(|s| s["reason"] == "reload"),
        "the hook was not reloaded: {log:#?}"
    );
    let since: Vec<&Value> = log.iter().filter(|l| l["event"] == "since").collect();
    let after = since[0];
    // A new process (the reload restarted the hook) reads exactly what came after the mark.
    assert_ne!(after["pid"], starts[0]["pid"], "{log:#?}");
    assert_eq!(
        after["kinds"],
        json!([
            "message/system",
            "message/user",
            "message/assistant",
            "custom"
        ]),
        "{log:#?}"
    );
    assert_eq!(after["first_parent"], mark["leaf"]);
    assert_eq!(since[1]["error"], "not_found", "{log:#?}");
}

const LISTER: &str = r#"
@hook.command("deploy", "Deploy the site")
def deploy(args, ctx):
    return "deploying"

@hook.command("cmds", "List the commands")
def cmds(args, ctx):
    return json.dumps(hook.call("commands.list", {}, timeout=10))
"#;

#[tokio::test]
async fn commands_list_names_hook_commands_templates_and_skills_with_their_source() {
    let agent = TestAgent::new();
    let prompts = agent.agent_dir.join("prompts");
    std::fs::create_dir_all(&prompts).expect("prompts dir");
    std::fs::write(
        prompts.join("review.md"),
        "---\ndescription: Review a file\n---\nReview $1",
    )
    .expect("template");
    let skill = agent.agent_dir.join("skills/lint");
    std::fs::create_dir_all(&skill).expect("skill dir");
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: lint\ndescription: Lint the code\n---\nRun the linter.",
    )
    .expect("skill");
    let hook = py_hook(&agent, "lister", LISTER, with_log(&agent, "lister"));
    let hook_cmd = hook["command"].as_str().expect("command").to_string();
    agent.write_settings(&json!({ "hooks": [hook] }));
    let out = run_faux(&agent, json!(["unused"]), &["-p", "/cmds"]).await;
    out.assert_ok();
    let list: Value = serde_json::from_str(out.stdout.trim()).expect("commands.list JSON");
    let by_name = |n: &str| {
        list["commands"]
            .as_array()
            .expect("commands")
            .iter()
            .find(|c| c["name"] == n)
            .cloned()
            .unwrap_or_else(|| panic!("no command {n} in {list:#}"))
    };
    let deploy = by_name("deploy");
    assert_eq!(deploy["source"], "extension");
    assert_eq!(deploy["hook"], "lister");
    assert_eq!(deploy["description"], "Deploy the site");
    // The hook's executable (here the interpreter its command runs).
    let program = deploy["source_info"]["path"].as_str().expect("path");
    assert!(
        program.starts_with('/') && hook_cmd.contains("python3"),
        "{deploy:#}"
    );
    let review = by_name("review");
    assert_eq!(review["source"], "prompt");
    assert_eq!(review["description"], "Review a file");
    assert_eq!(
        review["source_info"]["path"],
        path_str(&prompts.join("review.md"))
    );
    assert_eq!(review["source_info"]["scope"], "user");
    assert!(review.get("hook").is_none());
    let lint = by_name("skill:lint");
    assert_eq!(lint["source"], "skill");
    assert_eq!(lint["description"], "Lint the code");
    assert_eq!(
        lint["source_info"]["path"],
        path_str(&skill.join("SKILL.md"))
    );
}

const WATCHER: &str = r#"
def delta(payload, ctx):
    ev = payload["assistant_message_event"]
    if ev.get("type") == "text_delta":
        log(event="delta", delta=ev["delta"])

@hook.command("watch", "Listen to the model's stream")
def watch(args, ctx):
    try:
        hook.subscribe("mesage_update", delta)
    except HostError as e:
        log(event="refused", code=e.code, message=e.message)
    subs = hook.subscribe("message_update", delta)
    log(event="subscribed", subscriptions=subs)
    return "watching"

@hook.command("unwatch", "Stop listening")
def unwatch(args, ctx):
    log(event="unsubscribed", subscriptions=hook.unsubscribe("message_update"))
    return "stopped"
"#;

#[tokio::test]
async fn a_hook_subscribes_from_a_command_and_hears_only_the_events_until_it_unsubscribes() {
    let agent = TestAgent::new();
    let hook = py_hook(&agent, "watcher", WATCHER, with_log(&agent, "watcher"));
    agent.write_settings(&json!({ "hooks": [hook] }));
    let out = run_faux(
        &agent,
        json!(["one one", "two two", "three three"]),
        &[
            "--mode",
            "json",
            "--hook-events",
            "first",
            "/watch",
            "second",
            "/unwatch",
            "third",
        ],
    )
    .await;
    out.assert_ok();
    let events = out.events();
    let log = logged(&log_path(&agent, "watcher"));
    let refused = log
        .iter()
        .find(|l| l["event"] == "refused")
        .expect("refused");
    assert_eq!(refused["code"], "invalid_params", "{log:#?}");
    assert!(
        refused["message"]
            .as_str()
            .is_some_and(|m| m.contains("mesage_update")),
        "{refused}"
    );
    let errors = hook_errors(&events);
    assert!(
        errors
            .iter()
            .any(|e| e["kind"] == "bad_subscription" && e["hook"] == "watcher"),
        "{errors:#?}"
    );
    let subscribed = log
        .iter()
        .find(|l| l["event"] == "subscribed")
        .expect("subscribed");
    assert_eq!(
        subscribed["subscriptions"],
        json!([{"event": "message_update", "deadline_ms": 10000}])
    );
    let unsubscribed = log
        .iter()
        .find(|l| l["event"] == "unsubscribed")
        .expect("unsubscribed");
    assert_eq!(unsubscribed["subscriptions"], json!([]));
    let heard: String = log
        .iter()
        .filter(|l| l["event"] == "delta")
        .filter_map(|l| l["delta"].as_str())
        .collect();
    assert_eq!(heard, "two two", "{log:#?}");
}

const MANAGED_GATE: &str = r#"
@hook.on("tool_call", tools=["bash"])
def gate(payload, ctx):
    return {"block": True, "reason": "managed says no"}

@hook.on("session_start")
def start(payload, ctx):
    try:
        hook.unsubscribe("tool_call")
        log(event="unsubscribed")
    except HostError as e:
        log(event="refused", code=e.code, message=e.message)
    try:
        hook.subscribe("tool_call", gate, tools=["nothing-matches-this"])
        log(event="narrowed")
    except HostError as e:
        log(event="refused", code=e.code, message=e.message)
"#;

#[tokio::test]
async fn a_managed_hook_cannot_unsubscribe_or_narrow_its_registered_gate() {
    let mut agent = TestAgent::new();
    let entry = py_hook(&agent, "guard", MANAGED_GATE, with_log(&agent, "guard"));
    let policy = agent.tmp.join("managed-settings.json");
    std::fs::write(&policy, json!({ "hooks": [entry] }).to_string()).expect("policy");
    agent.env("PI_MANAGED_SETTINGS", &path_str(&policy));
    let (out, events) = run_json(&agent, bash_then_final("touch bash-ran"), &[]).await;
    out.assert_ok();
    let log = logged(&log_path(&agent, "guard"));
    let refused: Vec<&Value> = log.iter().filter(|l| l["event"] == "refused").collect();
    assert_eq!(refused.len(), 2, "{log:#?}\n{out}");
    assert!(refused.iter().all(|r| r["code"] == "invalid_params"));
    assert!(refused[0]["message"]
        .as_str()
        .is_some_and(|m| m.contains("required hook")));
    // The gate still judged the call.
    let end = only_tool_end(&out);
    assert!(end.is_error, "{out}");
    assert!(end.text.contains("managed says no"), "{}", end.text);
    assert!(!agent.cwd.join("bash-ran").exists());
    assert!(hook_errors(&events)
        .iter()
        .any(|e| e["kind"] == "bad_subscription"));
}

const ASKER: &str = r#"
@hook.command("ask", "Ask before deploying")
def ask(args, ctx):
    r = hook.call("ui.confirm", {"title": "Deploy?", "message": "to production"}, timeout=30)
    return "confirmed" if r["confirmed"] else "declined"
"#;

const OBSERVER: &str = r#"
@hook.on("ui_prompt_start")
def started(payload, ctx):
    log(event="ui_prompt_start", payload=payload)

@hook.on("ui_prompt_end")
def ended(payload, ctx):
    log(event="ui_prompt_end", payload=payload)
"#;

#[tokio::test]
async fn other_hooks_hear_ui_prompt_start_and_end_around_a_hooks_dialog() {
    let agent = TestAgent::new();
    let asker = py_hook(&agent, "asker", ASKER, with_log(&agent, "asker"));
    let observer = py_hook(&agent, "observer", OBSERVER, with_log(&agent, "observer"));
    agent.write_settings(&json!({ "hooks": [asker, observer] }));
    let observed = log_path(&agent, "observer");
    let mut rpc = agent.rpc(&agent.faux_args(json!(["ok"])));
    rpc.send(json!({"id": "p1", "type": "prompt", "message": "/ask"}))
        .await;
    let req = rpc
        .until(|v| v["type"] == "extension_ui_request" && v["method"] == "confirm")
        .await;
    // While the dialog is open the observer has heard the start, and not yet the end.
    assert!(
        wait_until(Duration::from_secs(10), || logged(&observed).len() == 1),
        "{:?}",
        logged(&observed)
    );
    let start = &logged(&observed)[0];
    assert_eq!(start["event"], "ui_prompt_start");
    assert_eq!(
        start["payload"],
        json!({"reason": "ui_prompt", "kind": "confirm", "title": "Deploy?"})
    );
    rpc.send(json!({"type": "extension_ui_response", "id": req["id"], "confirmed": true}))
        .await;
    assert!(
        wait_until(Duration::from_secs(10), || logged(&observed).len() == 2),
        "{:?}",
        logged(&observed)
    );
    assert_eq!(logged(&observed)[1]["event"], "ui_prompt_end");
    assert_eq!(logged(&observed)[1]["payload"], start["payload"]);
    assert_eq!(rpc.close().await, Some(0));
}

const LATE_SUBSCRIBER: &str = r#"
def gate(payload, ctx):
    return {"block": True, "reason": "late gate"}

@hook.on("session_start")
def start(payload, ctx):
    if TYPO:
        try:
            hook.unsubscribe("mesage_update", timeout=5)
        except HostError:
            pass
    hook.subscribe("tool_call", gate, tools=["bash"], timeout=5)
"#;

#[tokio::test]
async fn hook_check_asks_events_a_hook_subscribes_to_later_and_fails_a_refused_change() {
    let agent = TestAgent::new();
    for typo in [false, true] {
        let name = if typo { "late-typo" } else { "late" };
        let body = format!(
            "TYPO = {}\n{LATE_SUBSCRIBER}",
            if typo { "True" } else { "False" }
        );
        let entry = py_hook(&agent, name, &body, json!({}));
        let cmd = entry["command"].as_str().expect("command");
        let out = crate::common::hooks::run_pi(&agent, &["hook", "check", cmd]).await;
        let rows: Vec<(String, String)> = out
            .stdout
            .lines()
            .filter_map(|l| {
                let (s, rest) = l.split_once(char::is_whitespace)?;
                matches!(s, "PASS" | "FAIL").then(|| (s.to_string(), rest.trim().to_string()))
            })
            .collect();
        let row = |check: &str| {
            rows.iter()
                .find(|(_, r)| r.starts_with(check))
                .cloned()
                .unwrap_or_else(|| panic!("no {check} row\n{out}"))
        };
        // The gate it added while it was asked got its sample tool call, and answered.
        let asked = row("replies to tool_call");
        assert_eq!(asked.0, "PASS", "{out}");
        assert!(asked.1.contains("late gate"), "{out}");
        assert_eq!(row("writes only frames to stdout").0, "PASS", "{out}");
        let subs = row("subscriptions after subscribe/unsubscribe");
        if typo {
            out.assert_code(1);
            assert_eq!(subs.0, "FAIL", "{out}");
            assert!(subs.1.contains("mesage_update"), "{out}");
        } else {
            out.assert_ok();
            assert_eq!(subs.0, "PASS", "{out}");
            assert!(subs.1.contains("tool_call [bash]"), "{out}");
        }
    }
}

const HANDOFF: &str = r#"
@hook.command("handoff", "Continue in a new session that names its parent")
def handoff(args, ctx):
    r = hook.call("session.new", {"parent_session": args}, timeout=10)
    log(event="new", cancelled=r["cancelled"], file=r.get("session_file"))
    return "handed off"
"#;

/// `session.new {parent_session}` (1.6's `ctx.newSession({parentSession})`): the new
/// session's header names the parent the hook gave.
#[tokio::test]
async fn a_hook_starts_a_new_session_that_names_its_parent() {
    let agent = TestAgent::new();
    let hook = py_hook(&agent, "handoff", HANDOFF, with_log(&agent, "handoff"));
    agent.write_settings(&json!({ "hooks": [hook] }));
    let parent = path_str(&agent.tmp.join("parent.jsonl"));
    let handoff = format!("/handoff {parent}");
    // A new session's file is written with its first message: one more prompt.
    let out = run_faux(
        &agent,
        json!(["hi there", "again"]),
        &["-p", "hello", &handoff, "carry on"],
    )
    .await;
    out.assert_ok();
    let log = logged(&log_path(&agent, "handoff"));
    let new = log.iter().find(|l| l["event"] == "new").expect("new");
    assert_eq!(new["cancelled"], false, "{log:#?}");
    let file = new["file"].as_str().expect("a session file");
    let header: Value = serde_json::from_str(
        std::fs::read_to_string(file)
            .unwrap_or_default()
            .lines()
            .next()
            .unwrap_or("{}"),
    )
    .expect("header");
    assert_eq!(header["parentSession"], parent.as_str(), "{header}");
}
