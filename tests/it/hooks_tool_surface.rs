//! The extension surface of tools, through the real binary, a mock model server and real
//! Python hooks on `sample-hooks/pi_hook.py`: exposure, tools registered while pi runs,
//! structured content with an output schema, the `prepare_arguments` chain, `terminate` on a
//! block, `usage` on results, `durationMs`, nested `tools.execute` events with their parent,
//! the file lock hooks share with `edit`, and `tools.set_active` re-rendering the prompt.

use serde_json::{json, Value};

use crate::common::hooks::repo;
use crate::common::mock::{MockModel, Turn};
use crate::common::{of_type, path_str, tool_ends, wire, Output, TestAgent};

const OPENAI: &str = "mock/mock-model";

/// A hook named `name` whose body (Python, after `hook = Hook(name)`) is `body`.
fn py_hook(agent: &TestAgent, name: &str, body: &str) -> Value {
    let path = agent.tmp.join(format!("{name}.py"));
    let samples = path_str(&repo().join("sample-hooks"));
    let text = format!(
        "import json, os, sys, time\nsys.dont_write_bytecode = True\n\
         sys.path.insert(0, {samples:?})\nfrom pi_hook import Hook, HostError, text\n\
         hook = Hook({name:?})\n\n{body}\n\nhook.run()\n"
    );
    std::fs::write(&path, text).expect("write hook");
    json!({"command": format!("python3 {}", path_str(&path)), "name": name,
           "timeout_ms": 10000, "start_timeout_ms": 10000})
}

async fn run(agent: &TestAgent, hooks: Vec<Value>, extra: &[&str]) -> (Output, Vec<Value>) {
    agent.write_settings(&json!({ "hooks": hooks }));
    let mut args = vec!["--model", OPENAI, "--mode", "json", "--hook-events"];
    args.extend_from_slice(extra);
    args.extend(["-p", "go"]);
    let out = agent.run(&args).await;
    let events = out.events();
    (out, events)
}

fn end_of<'a>(events: &'a [Value], id: &str) -> &'a Value {
    of_type(events, "tool_execution_end")
        .into_iter()
        .find(|e| e["toolCallId"] == id)
        .unwrap_or_else(|| panic!("no tool_execution_end for {id}"))
}

fn text_of(end: &Value) -> String {
    crate::common::blocks_text(&end["result"]["content"])
}

const EXPOSURES: &str = r#"
for name, exposure in [("d_tool", "direct"), ("m_tool", "model-only"),
                       ("f_tool", "deferred"), ("h_tool", "hidden")]:
    hook.tool(name, name + " tool", exposure=exposure)(lambda a, c, n=name: n + " ran")

@hook.tool("probe", "Try every tool through tools.execute")
def probe(args, ctx):
    out = {}
    for n in ["d_tool", "m_tool", "f_tool", "h_tool"]:
        try:
            r = hook.call("tools.execute", {"tool": n, "arguments": {}}, timeout=10)
            out[n] = "ok: " + r["content"][0]["text"]
        except HostError as e:
            out[n] = e.code
    try:
        r = hook.call("tools.set_active", {"names": ["h_tool", "no_such_tool"]}, timeout=10)
        out["activate hidden"] = r["active"]
    except HostError as e:
        out["activate hidden"] = e.code
    listed = hook.call("tools.list_active", {}, timeout=10)
    out["listed"] = sorted(t["name"] + "=" + t["exposure"] for t in listed["all"]
                           if t["name"].endswith("_tool"))
    hook.call("tools.set_active", {"names": ["probe", "f_tool", "m_tool"]}, timeout=10)
    return json.dumps(out, sort_keys=True)
"#;

/// `direct` and `model-only` tools are declared from the start, `deferred` once activated,
/// `hidden` never; nested calls reach `direct` and `deferred`, never `model-only` or `hidden`.
#[tokio::test]
async fn each_exposure_decides_what_the_model_is_offered_and_what_hooks_may_run() {
    let mock = MockModel::start(vec![
        Turn::tools(&[("probe", json!({}))]),
        Turn::text("done"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    let (out, events) = run(&agent, vec![py_hook(&agent, "tools", EXPOSURES)], &[]).await;
    out.assert_ok();
    let bodies = mock.bodies();
    let first = wire::tool_names(&bodies[0]);
    for n in ["d_tool", "m_tool", "probe"] {
        assert!(first.contains(&n.to_string()), "{n} offered: {first:?}");
    }
    for n in ["f_tool", "h_tool"] {
        assert!(
            !first.contains(&n.to_string()),
            "{n} not offered: {first:?}"
        );
    }
    let probe: Value = serde_json::from_str(&text_of(end_of(&events, "call_1"))).expect("json");
    assert_eq!(probe["d_tool"], "ok: d_tool ran", "{probe}");
    assert_eq!(probe["f_tool"], "ok: f_tool ran", "{probe}");
    assert_eq!(probe["m_tool"], "invalid_params", "{probe}");
    assert_eq!(probe["h_tool"], "invalid_params", "{probe}");
    // Unknown and hidden names are dropped, as pi's setActiveTools drops them.
    assert_eq!(probe["activate hidden"], json!([]), "{probe}");
    assert_eq!(
        probe["listed"],
        json!(["d_tool=direct", "f_tool=deferred", "m_tool=model-only"]),
        "hidden tools are not listed"
    );
    // Naming the deferred tool activated it for the next request; the rest were dropped.
    let mut second = wire::tool_names(&bodies[1]);
    second.sort();
    assert_eq!(second, ["f_tool", "m_tool", "probe"], "{second:?}");
}

const LATE: &str = r#"
@hook.tool("late", "Registered while pi runs", later=True,
           prompt_snippet="late: a tool that joined during the run")
def late(args, ctx):
    hook.call("tools.unregister", {"names": ["late"]}, timeout=10)
    return "late ran"

@hook.tool("adder", "Registers another tool")
def adder(args, ctx):
    r = hook.register_tools("late", timeout=10)
    try:
        hook.call("tools.register", {"tools": [{"name": "read", "description": "mine",
                                                "parameters": {"type": "object"}}]}, timeout=10)
        taken = "registered"
    except HostError as e:
        taken = e.code
    try:
        hook.call("tools.register", {"tools": [{"name": "x", "description": "x",
                  "parameters": {"type": "object"}, "exposure": "sideways"}]}, timeout=10)
        bad = "registered"
    except HostError as e:
        bad = e.code
    return json.dumps({"registered": r["registered"], "taken": taken, "bad": bad})
"#;

/// `tools.register` during a run is live from the next request (declared, described in the
/// system prompt, callable); `tools.unregister` takes it away again.
#[tokio::test]
async fn a_tool_registered_during_the_run_is_offered_from_the_next_request_and_can_be_dropped() {
    let mock = MockModel::start(vec![
        Turn::tools(&[("adder", json!({}))]),
        Turn::tools(&[("late", json!({}))]),
        Turn::text("done"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    let (out, events) = run(&agent, vec![py_hook(&agent, "tools", LATE)], &[]).await;
    out.assert_ok();
    let added: Value = serde_json::from_str(&text_of(end_of(&events, "call_1"))).expect("json");
    assert_eq!(added["registered"], json!(["late"]), "{added}");
    assert_eq!(
        added["taken"], "failed",
        "a built-in's name is taken: {added}"
    );
    assert_eq!(added["bad"], "invalid_params", "{added}");
    let bodies = mock.bodies();
    assert!(!wire::tool_names(&bodies[0]).contains(&"late".to_string()));
    assert!(wire::tool_names(&bodies[1]).contains(&"late".to_string()));
    assert!(
        wire::system_text(&bodies[1]).contains("a tool that joined during the run"),
        "the prompt describes the new tool"
    );
    let late = end_of(&events, "call_2");
    assert_eq!(late["isError"], false, "{late}");
    assert_eq!(text_of(late), "late ran");
    assert!(!wire::tool_names(&bodies[2]).contains(&"late".to_string()));
    assert!(!wire::system_text(&bodies[2]).contains("a tool that joined during the run"));
}

const SHAPED: &str = r#"
SCHEMA = {"type": "object", "properties": {"files": {"type": "integer"}}, "required": ["files"]}

@hook.tool("scan", "Scan", output_schema=SCHEMA,
           parameters={"type": "object", "properties": {"n": {"type": "integer"}}})
def scan(args, ctx):
    files = args.get("n", 0)
    value = files if files >= 0 else "many"
    return {"content": [text("%s files" % files)], "structured_content": {"files": value}}

@hook.tool("outer", "Runs scan and reports what it got")
def outer(args, ctx):
    r = hook.call("tools.execute", {"tool": "scan", "arguments": {"n": 2}}, timeout=10)
    return json.dumps(r.get("structured_content"))
"#;

const REDACTOR: &str = r#"
@hook.on("tool_result", tools=["scan"])
def redact(payload, ctx):
    if payload["content"][0]["text"].startswith("7 "):
        return {"content": [text("[redacted]")]}
    return None
"#;

/// A result's `structured_content` must match the tool's `output_schema`; it reaches nested
/// callers and the stream, and new content from a `tool_result` hook drops it.
#[tokio::test]
async fn structured_content_is_checked_against_the_output_schema_and_dropped_with_new_content() {
    let mock = MockModel::start(vec![
        Turn::tools(&[
            ("scan", json!({"n": 3})),
            ("scan", json!({"n": -1})),
            ("scan", json!({"n": 7})),
            ("outer", json!({})),
        ]),
        Turn::text("done"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    let hooks = vec![
        py_hook(&agent, "tools", SHAPED),
        py_hook(&agent, "redactor", REDACTOR),
    ];
    let (out, events) = run(&agent, hooks, &[]).await;
    out.assert_ok();
    let ok = end_of(&events, "call_1");
    assert_eq!(
        ok["result"]["structuredContent"],
        json!({"files": 3}),
        "{ok}"
    );
    let bad = end_of(&events, "call_2");
    assert_eq!(bad["isError"], true, "{bad}");
    assert!(
        text_of(bad).contains("does not match its output_schema"),
        "{bad}"
    );
    let redacted = end_of(&events, "call_3");
    assert_eq!(text_of(redacted), "[redacted]");
    assert!(
        redacted["result"].get("structuredContent").is_none(),
        "{redacted}"
    );
    assert_eq!(text_of(end_of(&events, "call_4")), r#"{"files": 2}"#);
    // The model reads the content, never the structured JSON.
    let results = wire::tool_results(&mock.bodies()[1]);
    assert_eq!(results[0].1, "3 files", "{results:?}");
}

const PREPARERS: &str = r#"
@hook.on("prepare_arguments", tools=["echo"])
def rename(payload, ctx):
    a = dict(payload["arguments"])
    if "paths" in a:
        a["path"] = a.pop("paths")
        return {"arguments": a}
    return None
"#;

const SECOND_PREPARER: &str = r#"
SEEN = []

@hook.on("prepare_arguments", tools=["echo"])
def suffix(payload, ctx):
    a = dict(payload["arguments"])
    if "path" in a:
        a["path"] = a["path"] + "/x"
        return {"arguments": a}
    return None

@hook.on("tool_call", tools=["echo"])
def gate(payload, ctx):
    SEEN.append(payload["input"])
    return None

@hook.tool("echo", "Echo the path",
           parameters={"type": "object", "properties": {"path": {"type": "string"}},
                       "required": ["path"], "additionalProperties": False})
def echo(args, ctx):
    return json.dumps({"args": args, "gate_saw": SEEN[-1]})
"#;

/// `prepare_arguments` hooks chain (each sees the one before) ahead of validation: a shape
/// the schema rejects becomes valid, and the gate and the tool see the prepared arguments.
#[tokio::test]
async fn prepare_arguments_chains_before_validation_and_the_gate_sees_its_result() {
    let mock = MockModel::start(vec![
        Turn::tools(&[
            ("echo", json!({"paths": "src"})),
            ("echo", json!({"where": "src"})),
        ]),
        Turn::text("done"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    let hooks = vec![
        py_hook(&agent, "renamer", PREPARERS),
        py_hook(&agent, "suffixer", SECOND_PREPARER),
    ];
    let (out, events) = run(&agent, hooks, &[]).await;
    out.assert_ok();
    let fixed = end_of(&events, "call_1");
    assert_eq!(fixed["isError"], false, "{fixed}");
    let got: Value = serde_json::from_str(&text_of(fixed)).expect("json");
    assert_eq!(got["args"], json!({"path": "src/x"}), "{got}");
    assert_eq!(got["gate_saw"], json!({"path": "src/x"}), "{got}");
    let unfixable = end_of(&events, "call_2");
    assert_eq!(unfixable["isError"], true);
    assert!(
        text_of(unfixable).contains("Validation failed for tool \"echo\""),
        "{unfixable}"
    );
    let decisions: Vec<&Value> = of_type(&events, "hook_decision")
        .into_iter()
        .filter(|d| d["event"] == "prepare_arguments" && d["toolCallId"] == "call_1")
        .collect();
    assert_eq!(decisions.len(), 1, "{decisions:?}");
    assert_eq!(decisions[0]["outcome"], "patched");
}

const TERMINATOR: &str = r#"
@hook.on("tool_call")
def stop(payload, ctx):
    if payload["input"].get("command", "").startswith("stop"):
        return {"block": True, "reason": "finished", "terminate": True}
    return None
"#;

/// A block with `terminate: true` ends the run after its batch only when every result of the
/// batch asks so; the other calls of the batch still run.
#[tokio::test]
async fn terminate_on_a_block_ends_the_run_after_the_batch_only_when_every_result_asks() {
    let mock = MockModel::start(vec![
        Turn::tools(&[
            ("bash", json!({"command": "stop 1"})),
            ("bash", json!({"command": "stop 2"})),
        ]),
        Turn::text("never asked"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    let (out, events) = run(&agent, vec![py_hook(&agent, "stopper", TERMINATOR)], &[]).await;
    out.assert_ok();
    assert_eq!(tool_ends(&events).len(), 2);
    assert_eq!(
        mock.bodies().len(),
        1,
        "no follow-up call after an all-terminate batch"
    );

    let mock = MockModel::start(vec![
        Turn::tools(&[
            ("bash", json!({"command": "stop 1"})),
            ("bash", json!({"command": "echo still-ran"})),
        ]),
        Turn::text("followed up"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    let (out, events) = run(&agent, vec![py_hook(&agent, "stopper", TERMINATOR)], &[]).await;
    out.assert_ok();
    let ran = end_of(&events, "call_2");
    assert!(text_of(ran).contains("still-ran"), "{ran}");
    assert_eq!(
        mock.bodies().len(),
        2,
        "one call did not ask: the run goes on"
    );
}

const USAGE: &str = r#"
USAGE = {"input": 120, "output": 30, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 150,
         "cost": {"input": 0.001, "output": 0.002, "cacheRead": 0, "cacheWrite": 0, "total": 0.003}}

@hook.tool("summarise", "Summarise with a model of its own")
def summarise(args, ctx):
    return {"content": [text("summary")], "usage": USAGE}

@hook.on("tool_result", tools=["summarise"])
def bill(payload, ctx):
    u = dict(payload["usage"])
    u["output"] = u["output"] + 1
    return {"usage": u}
"#;

/// A tool result's `usage` is kept with the result, patched by `tool_result` hooks, and
/// reported in the stream and the stored tool-result message.
#[tokio::test]
async fn usage_on_a_tool_result_is_kept_and_chained() {
    let mock = MockModel::start(vec![
        Turn::tools(&[("summarise", json!({}))]),
        Turn::text("done"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    let (out, events) = run(&agent, vec![py_hook(&agent, "tools", USAGE)], &[]).await;
    out.assert_ok();
    let end = end_of(&events, "call_1");
    assert_eq!(end["result"]["usage"]["input"], 120, "{end}");
    assert_eq!(
        end["result"]["usage"]["output"], 31,
        "the hook's patch: {end}"
    );
    let stored = of_type(&events, "message_end")
        .into_iter()
        .find(|e| e["message"]["role"] == "toolResult")
        .expect("tool result message");
    assert_eq!(stored["message"]["usage"]["totalTokens"], 150, "{stored}");
}

const NESTER: &str = r#"
@hook.tool("outer", "Reads a file through the host")
def outer(args, ctx):
    r = hook.call("tools.execute", {"tool": "read", "arguments": {"path": "notes.txt"}},
                  timeout=10)
    return "nested: " + r["content"][0]["text"]
"#;

const WATCHER: &str = r#"
@hook.on("tool_execution_end")
def seen(payload, ctx):
    with open(os.path.join(hook.cwd, "seen.jsonl"), "a") as f:
        f.write(json.dumps(payload) + "\n")
"#;

/// A nested `tools.execute` sends `tool_execution_*` naming its parent, to the stream and to
/// hooks; every `tool_execution_end` carries `durationMs` / `duration_ms`.
#[tokio::test]
async fn a_nested_call_reports_its_parent_and_every_end_its_duration() {
    let mock = MockModel::start(vec![
        Turn::tools(&[("outer", json!({}))]),
        Turn::text("done"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    agent.write_file("notes.txt", "hello nested\n");
    let hooks = vec![
        py_hook(&agent, "nester", NESTER),
        py_hook(&agent, "watcher", WATCHER),
    ];
    let (out, events) = run(&agent, hooks, &[]).await;
    out.assert_ok();
    let starts = of_type(&events, "tool_execution_start");
    let nested_start = starts
        .iter()
        .find(|e| e["toolName"] == "read")
        .unwrap_or_else(|| panic!("no nested start\n{out}"));
    assert_eq!(nested_start["parentToolCallId"], "call_1", "{nested_start}");
    let nested_id = nested_start["toolCallId"].as_str().expect("id").to_string();
    let nested_end = end_of(&events, &nested_id);
    assert_eq!(nested_end["parentToolCallId"], "call_1");
    assert!(text_of(nested_end).contains("hello nested"));
    let outer_end = end_of(&events, "call_1");
    assert!(outer_end.get("parentToolCallId").is_none(), "{outer_end}");
    for e in [nested_end, outer_end] {
        assert!(e["durationMs"].is_u64(), "durationMs on {e}");
    }
    // The nested call adds no message of its own.
    let results = of_type(&events, "message_end")
        .into_iter()
        .filter(|e| e["message"]["role"] == "toolResult")
        .count();
    assert_eq!(results, 1);
    let seen: Vec<Value> = std::fs::read_to_string(agent.cwd.join("seen.jsonl"))
        .expect("watcher log")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    let hook_nested = seen
        .iter()
        .find(|p| p["tool_name"] == "read")
        .expect("the watcher saw the nested end");
    assert_eq!(hook_nested["parent_tool_call_id"], "call_1");
    assert!(seen.iter().all(|p| p["duration_ms"].is_u64()), "{seen:?}");
}

const LOCKER: &str = r#"
@hook.tool("bump", "Read-modify-write counter.txt under the file lock")
def bump(args, ctx):
    lock = hook.call("tools.with_file_lock", {"path": "counter.txt"}, timeout=30)
    path = os.path.join(hook.cwd, "counter.txt")
    with open(path) as f:
        before = f.read()
    # Now the other hook's edit is sent, and would land in this window but for the lock.
    open(os.path.join(hook.cwd, "bump-read"), "w").close()
    time.sleep(0.5)
    with open(path, "w") as f:
        f.write(before.replace("a=1", "a=2"))
    # The hook's own nested edit re-enters the lock it holds instead of waiting on it.
    r = hook.call("tools.execute", {"tool": "edit", "arguments": {"path": "counter.txt",
                  "edits": [{"oldText": "c=1", "newText": "c=3"}]}}, timeout=30)
    hook.call("tools.release_file_lock", {"lock_id": lock["lock_id"]}, timeout=10)
    try:
        hook.call("tools.release_file_lock", {"lock_id": lock["lock_id"]}, timeout=10)
        again = "released twice"
    except HostError as e:
        again = e.code
    return json.dumps({"nested_error": r["is_error"], "again": again})
"#;

const EDITOR: &str = r#"
@hook.tool("edit_after_read", "Edit counter.txt once bump has read it")
def edit_after_read(args, ctx):
    marker = os.path.join(hook.cwd, "bump-read")
    for _ in range(2000):
        if os.path.exists(marker):
            break
        time.sleep(0.01)
    r = hook.call("tools.execute", {"tool": "edit", "arguments": {"path": "counter.txt",
                  "edits": [{"oldText": "b=1", "newText": "b=2"}]}}, timeout=30)
    return "edit error" if r["is_error"] else "edited"
"#;

/// `tools.with_file_lock` holds the lock the built-in `edit` takes: an `edit` of the file sent
/// while a hook tool is in the middle of its read-modify-write waits for it, so neither change
/// is lost, and the hook's own nested `edit` of the file it holds does not wait on itself.
#[tokio::test]
async fn a_hook_file_lock_and_the_builtin_edit_do_not_race_on_one_file() {
    let mock = MockModel::start(vec![
        Turn::tools(&[("bump", json!({})), ("edit_after_read", json!({}))]),
        Turn::text("done"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    agent.write_file("counter.txt", "a=1\nb=1\nc=1\n");
    let hooks = vec![
        py_hook(&agent, "locker", LOCKER),
        py_hook(&agent, "editor", EDITOR),
    ];
    let (out, events) = run(&agent, hooks, &[]).await;
    out.assert_ok();
    let bump: Value = serde_json::from_str(&text_of(end_of(&events, "call_1"))).expect("json");
    assert_eq!(bump["nested_error"], false, "{bump}");
    assert_eq!(bump["again"], "not_found", "{bump}");
    assert_eq!(text_of(end_of(&events, "call_2")), "edited");
    let after = std::fs::read_to_string(agent.cwd.join("counter.txt")).expect("read");
    assert_eq!(after, "a=2\nb=2\nc=3\n", "both writers' changes survive");
}

const NARROWER: &str = r#"
@hook.tool("narrow", "Leave only this tool active", prompt_guidelines=["Narrow sparingly."])
def narrow(args, ctx):
    return json.dumps(hook.call("tools.set_active", {"names": ["narrow"]}, timeout=10))
"#;

/// `tools.set_active` re-renders the system prompt's tool section and skills block for the
/// next request, during the run.
#[tokio::test]
async fn set_active_rebuilds_the_prompts_tool_section_and_skills_block() {
    let mock = MockModel::start(vec![
        Turn::tools(&[("narrow", json!({}))]),
        Turn::text("done"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    let dir = agent.agent_dir.join("skills/deploy");
    std::fs::create_dir_all(&dir).expect("skills dir");
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: deploy\ndescription: Ship the app\n---\nbody",
    )
    .expect("skill");
    let (out, _) = run(&agent, vec![py_hook(&agent, "narrower", NARROWER)], &[]).await;
    out.assert_ok();
    let bodies = mock.bodies();
    let before = wire::system_text(&bodies[0]);
    assert!(before.contains("Read file contents"), "{before}");
    assert!(before.contains("<available_skills>"), "{before}");
    assert!(before.contains("Narrow sparingly."));
    let after = wire::system_text(&bodies[1]);
    assert!(
        !after.contains("Read file contents"),
        "read is not offered: {after}"
    );
    assert!(
        !after.contains("<available_skills>"),
        "no tool can read a skill: {after}"
    );
    assert!(after.contains("Narrow sparingly."));
    assert_eq!(wire::tool_names(&bodies[1]), ["narrow"]);
}
