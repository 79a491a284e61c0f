//! What pi 1.6 cannot offer: an extension that throws, exits, loops or fails to load costs pi
//! that extension's answers and nothing else. And where extensions load from: the user's
//! extensions directory, a trusted project's, the settings' `extensions` list, `-e`; and what
//! a user without Node is told.

use serde_json::json;

use super::harness::{bridge_ready, example};
use crate::common::{of_type, only_tool_end, path_str, tool_ends, TestAgent};

const GATE: &str = r#"
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.on("tool_call", async (event) => {
    if (event.input.command === "boom") throw new Error("the gate fell over");
    if (event.input.command === "exit") process.exit(3);
    return undefined;
  });
}
"#;

#[tokio::test]
async fn a_handler_that_throws_blocks_that_call_with_its_message_as_in_pi_1_6() {
    if !bridge_ready() {
        return;
    }
    let agent = TestAgent::new();
    agent.write_file("gate.ts", GATE);
    let calls = json!([{"name": "bash", "arguments": {"command": "boom"}},
                       {"name": "bash", "arguments": {"command": "echo fine"}}]);
    let out = agent.run_tools(calls, &["-e", "gate.ts"]).await;
    out.assert_ok();
    let ends = tool_ends(&out.events());
    assert_eq!(ends.len(), 2, "{out}");
    assert!(
        ends[0].is_error && ends[0].text == "the gate fell over",
        "{:?}",
        ends[0]
    );
    assert_eq!(ends[1].text, "fine\n", "{out}");
}

#[tokio::test]
async fn an_extension_that_exits_costs_its_answers_and_pi_carries_on() {
    if !bridge_ready() {
        return;
    }
    let agent = TestAgent::new();
    agent.write_file("gate.ts", GATE);
    let steps = json!([
        {"toolCalls": [{"name": "bash", "arguments": {"command": "exit"}}]},
        {"text": "carried on"}
    ]);
    let out = agent
        .run_faux(
            steps,
            &["--mode", "json", "--hook-events", "-e", "gate.ts", "go"],
        )
        .await;
    out.assert_ok();
    let events = out.events();
    // pi 1.6 would have exited with the extension; here its gate failed closed, by name.
    let end = only_tool_end(&out);
    assert!(
        end.is_error && end.text.contains("hook gate failed"),
        "{end:?}"
    );
    let restarting = of_type(&events, "hook_state")
        .into_iter()
        .any(|e| e["hook"] == "gate" && e["state"] == "restarting");
    assert!(restarting, "the bridge is supervised as a hook\n{out}");
    let last = of_type(&events, "message_end")
        .last()
        .map(|e| crate::common::blocks_text(&e["message"]["content"]));
    assert_eq!(last.as_deref(), Some("carried on"), "{out}");
}

#[tokio::test]
async fn a_tool_that_never_returns_is_cut_off_at_the_tool_cap() {
    if !bridge_ready() {
        return;
    }
    let mut agent = TestAgent::new();
    agent.env("PI_HOOK_TOOL_TIMEOUT_MS", "1500");
    agent.write_file(
        "spin.ts",
        r#"
import { Type } from "typebox";
export default function (pi) {
  pi.registerTool({ name: "spin", label: "Spin", description: "never ends",
    parameters: Type.Object({}), async execute() { for (;;) {} } });
}
"#,
    );
    let started = std::time::Instant::now();
    let calls = json!([{"name": "spin", "arguments": {}}, {"name": "bash", "arguments": {"command": "echo still here"}}]);
    let out = agent.run_tools(calls, &["-e", "spin.ts"]).await;
    out.assert_ok();
    let ends = tool_ends(&out.events());
    assert!(ends.iter().any(|e| e.name == "spin" && e.is_error), "{out}");
    assert!(ends.iter().any(|e| e.text == "still here\n"), "{out}");
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}

#[tokio::test]
async fn an_extension_that_fails_to_load_is_reported_and_blocks_nothing() {
    if !bridge_ready() {
        return;
    }
    let agent = TestAgent::new();
    agent.write_file(
        "broken.ts",
        "export default function (pi) { throw new Error('cannot start today'); }\n",
    );
    let out = agent
        .run_tools(
            json!([{"name": "bash", "arguments": {"command": "echo ran"}}]),
            &["-e", "broken.ts"],
        )
        .await;
    out.assert_ok();
    assert_eq!(only_tool_end(&out).text, "ran\n", "{out}");
    assert!(
        out.stderr.contains("Failed to load extension")
            && out.stderr.contains("cannot start today"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn what_cannot_run_out_of_process_is_named_at_load_and_the_rest_runs() {
    if !bridge_ready() {
        return;
    }
    let agent = TestAgent::new();
    agent.write_file(
        "mixed.ts",
        r#"
export default function (pi) {
  pi.registerShortcut("ctrl+x", { handler: async () => {} });
  pi.on("tool_call", async (event, ctx) => {
    if (event.toolName === "bash") { await ctx.ui.custom(() => null); return { block: true, reason: "mixed says no" }; }
  });
}
"#,
    );
    let out = agent
        .run_tools(
            json!([{"name": "bash", "arguments": {"command": "echo x"}}]),
            &["-e", "mixed.ts"],
        )
        .await;
    out.assert_ok();
    assert!(
        out.stderr
            .contains("ctx.ui.custom is not available to out-of-process extensions"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(
            "pi.registerShortcut(\"ctrl+x\") is not available to out-of-process extensions"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(only_tool_end(&out).text, "mixed says no");
}

#[tokio::test]
async fn console_output_and_stray_stdout_never_reach_the_protocol() {
    if !bridge_ready() {
        return;
    }
    let agent = TestAgent::new();
    agent.write_file(
        "chatty.ts",
        r#"
export default function (pi) {
  console.log("loading chatty");
  pi.on("tool_call", async () => { process.stdout.write("\x1b]777;notify;x;y\x07"); console.info("gate"); });
}
"#,
    );
    let out = agent
        .run_tools(
            json!([{"name": "bash", "arguments": {"command": "echo ok"}}]),
            &["-e", "chatty.ts", "--verbose"],
        )
        .await;
    out.assert_ok();
    assert_eq!(only_tool_end(&out).text, "ok\n", "{out}");
    assert!(out.stderr.contains("loading chatty"), "{}", out.stderr);
    assert!(!out.stderr.contains("broke the protocol"), "{}", out.stderr);
}

fn protected_paths_in(dir: &std::path::Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::copy(
        example("protected-paths.ts"),
        dir.join("protected-paths.ts"),
    )
    .unwrap();
}

const WRITE_ENV: &str = r#"[{"name": "write", "arguments": {"path": ".env", "content": "K=1"}}]"#;

#[tokio::test]
async fn extensions_load_from_the_user_directory_and_the_settings() {
    if !bridge_ready() {
        return;
    }
    let agent = TestAgent::new();
    protected_paths_in(&agent.agent_dir.join("extensions"));
    let out = agent
        .run_tools(serde_json::from_str(WRITE_ENV).unwrap(), &[])
        .await;
    assert_eq!(
        only_tool_end(&out).text,
        "Path \".env\" is protected",
        "{out}"
    );

    let agent = TestAgent::new();
    protected_paths_in(&agent.home.join("exts"));
    agent.write_settings(
        &json!({"extensions": [path_str(&agent.home.join("exts/protected-paths.ts"))]}),
    );
    let out = agent
        .run_tools(serde_json::from_str(WRITE_ENV).unwrap(), &[])
        .await;
    assert_eq!(
        only_tool_end(&out).text,
        "Path \".env\" is protected",
        "{out}"
    );
    // `--no-hooks` (`-ne`) leaves them out, as pi 1.6's `--no-extensions` does.
    let out = agent
        .run_tools(serde_json::from_str(WRITE_ENV).unwrap(), &["-ne"])
        .await;
    assert!(!only_tool_end(&out).is_error, "{out}");
}

#[tokio::test]
async fn the_settings_patterns_choose_which_extensions_load_as_in_pi_1_6() {
    if !bridge_ready() {
        return;
    }
    let agent = TestAgent::new();
    protected_paths_in(&agent.agent_dir.join("extensions"));
    let write = || serde_json::from_str(WRITE_ENV).unwrap();
    // `!glob` turns a discovered extension off (matched by its name here).
    agent.write_settings(&json!({"extensions": ["!protected-*.ts"]}));
    let out = agent.run_tools(write(), &[]).await;
    assert!(
        !only_tool_end(&out).is_error,
        "the extension was turned off\n{out}"
    );
    assert!(!out.stderr.contains("not supported"), "{}", out.stderr);
    // `+path` brings it back over the glob.
    agent.write_settings(&json!({"extensions": ["!*.ts", "+extensions/protected-paths.ts"]}));
    let out = agent.run_tools(write(), &[]).await;
    assert_eq!(
        only_tool_end(&out).text,
        "Path \".env\" is protected",
        "{out}"
    );
    // `-path` wins over everything; a plain glob narrows a listed folder.
    agent.write_settings(&json!({"extensions": ["-extensions/protected-paths.ts"]}));
    let out = agent.run_tools(write(), &[]).await;
    assert!(!only_tool_end(&out).is_error, "{out}");
    protected_paths_in(&agent.home.join("exts"));
    agent.write_settings(&json!({"extensions": [
        path_str(&agent.home.join("exts")), "!extensions/*", "exts/*.js"
    ]}));
    let out = agent.run_tools(write(), &[]).await;
    assert!(
        !only_tool_end(&out).is_error,
        "`exts/*.js` keeps no .ts file of the listed folder\n{out}"
    );
}

#[tokio::test]
async fn a_project_extension_runs_only_in_a_trusted_project() {
    if !bridge_ready() {
        return;
    }
    let agent = TestAgent::new();
    protected_paths_in(&agent.cwd.join(".pi/extensions"));
    let out = agent
        .run_tools(serde_json::from_str(WRITE_ENV).unwrap(), &["--no-approve"])
        .await;
    assert!(
        !only_tool_end(&out).is_error,
        "an untrusted project's extension never ran\n{out}"
    );
    let out = agent
        .run_tools(serde_json::from_str(WRITE_ENV).unwrap(), &["--approve"])
        .await;
    assert_eq!(
        only_tool_end(&out).text,
        "Path \".env\" is protected",
        "{out}"
    );
}

#[tokio::test]
async fn without_node_the_user_is_told_which_extension_needs_what() {
    let mut agent = TestAgent::new();
    agent.write_file("gate.ts", GATE);
    agent.env("PATH", "/nonexistent");
    let out = agent
        .run_faux(json!(["ok"]), &["-e", "gate.ts", "-p", "hi"])
        .await;
    assert_eq!(out.code, Some(1), "{out}");
    let lines: Vec<&str> = out.stderr.lines().filter(|l| l.contains("gate")).collect();
    assert_eq!(lines.len(), 1, "{}", out.stderr);
    assert!(
        lines[0].contains("extension gate (") && lines[0].contains("install Node.js"),
        "{}",
        lines[0]
    );
}
