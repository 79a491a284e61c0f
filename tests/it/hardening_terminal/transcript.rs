//! The transcript: a command's output, a tool call's arguments, the model's thinking, a
//! model's error and a provider's error body reach the screen as visible text.

use serde_json::json;

use super::*;
use crate::common::{MockModel, TestAgent, Turn};

#[test]
fn bash_output_tool_arguments_and_thinking_are_shown_not_obeyed() {
    let agent = TestAgent::new();
    // The command's output carries every payload and a colour; its arguments (a comment the
    // shell ignores) and the model's thinking carry them too.
    agent.write_file(
        "emit.sh",
        format!("printf '%s\\n' '{}\x1b[31mred\x1b[0m'\n", payload("out")),
    );
    let steps = json!([
        {"thinking": payload("think"), "text": "Running it.",
         "toolCalls": [{"name": "bash", "arguments": {"command": format!("sh emit.sh # {}", payload("args"))}}]},
        "All done.",
        {"error": payload("fail")}
    ]);
    let mut pi = agent.pty_faux(steps, 200, 40);
    pi.type_text("go");
    pi.enter();
    let all = pi.wait_transcript("All done.");
    for (what, text) in [
        ("the thinking", format!("∴ {}", shown("think"))),
        ("the arguments", format!("$ sh emit.sh # {}", shown("args"))),
        // SGR colours are dropped from command output; every other sequence is shown.
        ("the output", format!("  {}red", shown("out"))),
    ] {
        assert!(
            has_row(&all, &text),
            "{what} is not shown as {text:?}: {all:#?}"
        );
    }
    assert!(!has_row(&all, "␛[31m"), "{all:#?}");
    pi.type_text("again");
    pi.enter();
    pi.wait_transcript(&shown("fail"));
    assert_sent(&pi, &sent("out"));
    assert_pty_inert(&pi);
    pi.quit();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_providers_error_body_is_shown_not_obeyed() {
    let mock = MockModel::start(vec![Turn::status(400, &payload("err"))]).await;
    let agent = TestAgent::with_mock(&mock);
    tokio::task::spawn_blocking(move || {
        let mut pi = agent.pty(&["--provider", "mock", "--model", "mock-model"], 200, 40);
        pi.wait_text("mock-model");
        pi.type_text("hello");
        pi.enter();
        // The body is shown as the JSON it is: serde_json escaped the C0 controls in it, and
        // left the C1 CSI raw, which must show as a stand-in.
        pi.wait_transcript("err[\\u001b]52;c;UFdORUQ=\\u0007");
        pi.wait_transcript("\\u001b[H2J]");
        assert_sent(&pi, "\\u001b[H\u{FFFD}2J]");
        assert_pty_inert(&pi);
        pi.quit();
    })
    .await
    .expect("the terminal part");
}
