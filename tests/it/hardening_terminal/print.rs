//! Print and JSON mode: the lines pi writes on stderr — `--verbose` tool activity, a hook's
//! notice and its stderr forwarded to the log — hold no sequence, and `--mode json` lines
//! escape the C1 controls serde_json would leave raw (the data decodes the same).

use serde_json::{json, Value};

use super::*;
use crate::common::hooks::fixture;
use crate::common::TestAgent;

fn noisy_hook(agent: &TestAgent) {
    agent.write_settings(&json!({"hooks": [{
        "command": format!("python3 {}", fixture("term_noise.py")),
        "name": "noise",
        "config": {"stderr": format!("{}\rcarriage{}", payload("log"), "\x0e"),
                   "notify": payload("notice")},
        "timeout_ms": 10000,
        "start_timeout_ms": 10000,
    }]}));
}

#[tokio::test]
async fn print_modes_stderr_lines_hold_no_sequence() {
    let agent = TestAgent::new();
    noisy_hook(&agent);
    agent.write_file("emit.sh", format!("printf '%s\\n' '{}'\n", payload("out")));
    let steps = json!([
        {"toolCalls": [{"name": "bash", "arguments": {"command": format!("sh emit.sh # {}", payload("args"))}}]},
        "done"
    ]);
    let mut args = agent.faux_args(steps);
    args.extend(["--verbose", "-p", "go"].map(String::from));
    let out = agent.command(&args).output().await.expect("run pi");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    for tag in ["notice", "out"] {
        assert!(err.contains(&sent(tag)), "{tag} not on stderr: {err}");
    }
    // The tool activity line: JSON of the arguments (ESC already escaped by JSON).
    assert!(err.contains("→ bash"), "{err}");
    // The hook's own stderr, forwarded to the log with --verbose.
    assert!(err.contains("␍carriage␎"), "{err}");
    assert_plain_lines(&out.stderr);
}

#[tokio::test]
async fn json_mode_lines_escape_c1_controls_and_decode_to_the_same_text() {
    let agent = TestAgent::new();
    let command = format!("echo '{C1_CLEAR}' # \u{7f}\u{202e}");
    let out = agent
        .run_faux(
            json!([{"toolCalls": [{"name": "bash", "arguments": {"command": command}}]}, "done"]),
            &["--mode", "json", "go"],
        )
        .await;
    out.assert_ok();
    let raw = out.stdout.as_bytes();
    assert_plain_lines(raw);
    assert!(
        !raw.windows(2)
            .any(|w| w[0] == 0xc2 && (0x80..=0x9f).contains(&w[1])),
        "a C1 control is raw in the JSON lines"
    );
    let events = out.events();
    let start = events
        .iter()
        .find(|e| e["type"] == "tool_execution_start")
        .expect("the tool started");
    assert_eq!(start["args"]["command"], Value::String(command));
}
