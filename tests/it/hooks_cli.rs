//! Hook author tooling through the real binary: `pi hook check CMD` (a PASS/FAIL table, exit 1
//! on any failure), `pi hook test CMD --event NAME --payload JSON` (the raw reply and the
//! derived decision) and `pi hooks` (the hooks in load order with their subscriptions).

use serde_json::json;

use crate::common::hooks::{assert_no_hook_processes, fixture, repo, run_pi, sample, use_hooks};
use crate::common::{path_str, Output, TestAgent};

/// Rows of the `pi hook check` table: (status, the rest of the line).
fn rows(out: &Output) -> Vec<(String, String)> {
    out.stdout
        .lines()
        .filter_map(|l| {
            let (status, rest) = l.split_once(char::is_whitespace)?;
            matches!(status, "PASS" | "FAIL").then(|| (status.to_string(), rest.trim().to_string()))
        })
        .collect()
}

#[track_caller]
fn assert_all_pass(cmd: &str, out: &Output) {
    out.assert_ok();
    let rows = rows(out);
    assert!(rows.len() >= 3, "no check table for {cmd}\n{out}");
    assert!(
        rows.iter().all(|(s, _)| s == "PASS"),
        "{cmd} failed a check\n{out}"
    );
    for check in [
        "starts and registers",
        "writes only frames to stdout",
        "answers tool_execute",
        "exits on shutdown",
        "exits on stdin EOF",
    ] {
        assert!(
            rows.iter().any(|(_, r)| r.starts_with(check)),
            "no '{check}' row for {cmd}\n{out}"
        );
    }
}

#[tokio::test]
async fn hook_check_passes_on_every_sample_hook() {
    let agent = TestAgent::new();
    let mut hooks = vec![
        sample("policy.py"),
        sample("secret_scan.py"),
        sample("audit_log.py"),
        sample("expand_aliases.py"),
    ];
    let rust_policy = repo().join("target/debug/examples/policy");
    assert!(
        rust_policy.is_file(),
        "{} is missing: `cargo test` builds the declared example; run `cargo build --example \
         policy` if you run this test binary alone",
        rust_policy.display()
    );
    hooks.push(path_str(&rust_policy));
    let has_node = std::env::var("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join("node").is_file()))
        .unwrap_or(false);
    if has_node {
        hooks.push(fixture("node_gate.js"));
    } else {
        eprintln!("note: `node` is not on PATH; not checking the Node helper hook");
    }
    for cmd in &hooks {
        let out = run_pi(&agent, &["hook", "check", cmd.as_str()]).await;
        assert_all_pass(cmd, &out);
    }
    // The tool shows what the hook provides.
    let out = run_pi(&agent, &["hook", "check", &sample("secret_scan.py")]).await;
    assert!(out.stdout.contains("scan_secrets"), "{out}");
    assert_no_hook_processes(&agent);
}

#[tokio::test]
async fn hook_check_fails_on_a_hook_that_prints_to_stdout_and_names_the_check() {
    let agent = TestAgent::new();
    let cmd = format!("{} stdout", fixture("broken.py"));
    let out = run_pi(&agent, &["hook", "check", &cmd]).await;
    out.assert_code(1);
    let rows = rows(&out);
    assert!(
        rows.iter()
            .any(|(s, r)| s == "FAIL" && r.starts_with("writes only frames to stdout")),
        "the stdout check should fail\n{out}"
    );
    assert!(
        rows.iter()
            .any(|(s, r)| s == "PASS" && r.starts_with("starts and registers")),
        "{out}"
    );
    assert_no_hook_processes(&agent);
}

#[tokio::test]
async fn hook_check_fails_on_a_wrong_reply_shape_and_names_the_field() {
    let agent = TestAgent::new();
    let cmd = format!("{} blok", fixture("broken.py"));
    let out = run_pi(&agent, &["hook", "check", &cmd]).await;
    out.assert_code(1);
    let failed: Vec<_> = rows(&out)
        .into_iter()
        .filter(|(s, _)| s == "FAIL")
        .collect();
    assert!(
        failed
            .iter()
            .any(|(_, r)| r.starts_with("replies to tool_call") && r.contains("blok")),
        "{out}"
    );
    assert_no_hook_processes(&agent);
}

#[tokio::test]
async fn hook_test_prints_the_raw_reply_and_the_block_decision() {
    let agent = TestAgent::new();
    let payload = json!({"tool_call_id": "c", "tool_name": "bash",
                         "input": {"command": "rm -rf /"}})
    .to_string();
    let out = run_pi(
        &agent,
        &[
            "hook",
            "test",
            &sample("policy.py"),
            "--event",
            "tool_call",
            "--payload",
            &payload,
        ],
    )
    .await;
    out.assert_ok();
    let reply = out
        .stdout
        .lines()
        .find(|l| l.starts_with("reply"))
        .unwrap_or_else(|| panic!("no reply line\n{out}"));
    let raw: serde_json::Value =
        serde_json::from_str(&reply[reply.find('{').expect("JSON in the reply line")..])
            .expect("the raw reply is JSON");
    assert_eq!(raw["block"], true, "{out}");
    assert!(
        raw["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("no-recursive-delete"),
        "{out}"
    );
    assert!(
        out.stdout.lines().any(|l| l.starts_with("decision: block")),
        "{out}"
    );

    // A harmless command is allowed.
    let payload = json!({"tool_call_id": "c", "tool_name": "bash",
                         "input": {"command": "echo ok"}})
    .to_string();
    let out = run_pi(
        &agent,
        &[
            "hook",
            "test",
            &sample("policy.py"),
            "--event",
            "tool_call",
            "--payload",
            &payload,
        ],
    )
    .await;
    out.assert_ok();
    assert!(out.stdout.lines().any(|l| l == "decision: allow"), "{out}");
    assert_no_hook_processes(&agent);
}

#[tokio::test]
async fn hook_test_reports_a_reply_of_the_wrong_shape_and_exits_1() {
    let agent = TestAgent::new();
    let cmd = format!("{} blok", fixture("broken.py"));
    let out = run_pi(&agent, &["hook", "test", &cmd, "--event", "tool_call"]).await;
    out.assert_code(1);
    assert!(
        out.stdout.contains(r#"{"blok":true}"#),
        "the raw reply is shown\n{out}"
    );
    assert!(out.stdout.contains("fail closed"), "{out}");
    assert_no_hook_processes(&agent);
}

#[tokio::test]
async fn hooks_lists_hooks_in_load_order_with_their_subscriptions_and_tools() {
    let agent = TestAgent::new();
    // Settings hooks load before --hook ones.
    use_hooks(
        &agent,
        vec![json!({"command": sample("audit_log.py"), "name": "audit"})],
    );
    let out = run_pi(
        &agent,
        &[
            "hooks",
            "--hook",
            &sample("policy.py"),
            "--hook",
            &sample("secret_scan.py"),
        ],
    )
    .await;
    out.assert_ok();
    let s = &out.stdout;
    let pos = |needle: &str| {
        s.find(needle)
            .unwrap_or_else(|| panic!("no {needle:?}\n{out}"))
    };
    assert!(
        pos("audit") < pos("policy") && pos("policy") < pos("secret_scan"),
        "{out}"
    );
    assert!(s.contains("tool_call[bash,write,edit]"), "{out}");
    assert!(s.contains("tool_result[read,bash]"), "{out}");
    assert!(s.contains("scan_secrets"), "{out}");
    assert!(s.contains("running"), "{out}");
    assert_no_hook_processes(&agent);
}

/// A Python hook on `pi_hook.py` whose body follows `hook = Hook(name)`, as a command line.
fn py_check_hook(agent: &TestAgent, name: &str, body: &str) -> String {
    let path = agent.tmp.join(format!("{name}.py"));
    let samples = path_str(&repo().join("sample-hooks"));
    let text = format!(
        "import sys\nsys.dont_write_bytecode = True\nsys.path.insert(0, {samples:?})\n\
         from pi_hook import Hook\nhook = Hook({name:?})\n\n{body}\n\nhook.run()\n"
    );
    std::fs::write(&path, text).expect("write hook");
    format!("python3 {}", path_str(&path))
}

/// `pi hook check` knows the tool surface: each tool's exposure and output schema, a
/// `prepare_arguments` subscription (sent its sample payload, its reply checked), and a
/// `register` with an unknown exposure fails the first row with the host's reason.
#[tokio::test]
async fn hook_check_knows_exposure_output_schemas_and_prepare_arguments() {
    let agent = TestAgent::new();
    let good = py_check_hook(
        &agent,
        "surface",
        r#"
@hook.tool("status", "Show status", exposure="model-only",
           output_schema={"type": "object", "properties": {"ok": {"type": "boolean"}}})
def status(args, ctx):
    return "ok"

@hook.on("prepare_arguments", tools=["status"])
def prep(payload, ctx):
    return {"arguments": dict(payload["arguments"])}
"#,
    );
    let out = run_pi(&agent, &["hook", "check", &good]).await;
    assert_all_pass(&good, &out);
    let table = rows(&out);
    let has = |prefix: &str, needle: &str| {
        table
            .iter()
            .any(|(s, r)| s == "PASS" && r.starts_with(prefix) && r.contains(needle))
    };
    assert!(has("tool status exposure", "model-only"), "{out}");
    assert!(has("tool status output_schema", "compiles"), "{out}");
    assert!(has("replies to prepare_arguments", ""), "{out}");

    let bad = py_check_hook(
        &agent,
        "sideways",
        r#"
@hook.tool("status", "Show status", exposure="sideways")
def status(args, ctx):
    return "ok"
"#,
    );
    let out = run_pi(&agent, &["hook", "check", &bad]).await;
    out.assert_code(1);
    assert!(
        rows(&out).iter().any(|(s, r)| s == "FAIL"
            && r.starts_with("starts and registers")
            && r.contains("exposure \"sideways\"")),
        "{out}"
    );
    assert_no_hook_processes(&agent);
}
