//! The prompt editor and the rendered answer as a person sees them in the pty: multi-line
//! input, a collapsed large paste sent whole, `/` and `@` completion, history across runs,
//! and markdown (headings, lists, code with its language, tables) in the scrollback.

use serde_json::json;

use crate::common::pty::{editor_row, PtyPi, PLACEHOLDER};
use crate::common::TestAgent;

/// The user messages the model received, from the session file.
fn sent_user_messages(agent: &TestAgent) -> Vec<String> {
    let mut out = Vec::new();
    let dir = agent.agent_dir.join("sessions");
    for d in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        for f in std::fs::read_dir(d.path()).into_iter().flatten().flatten() {
            for line in std::fs::read_to_string(f.path())
                .unwrap_or_default()
                .lines()
            {
                let v: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
                if v["message"]["role"] == "user" {
                    let c = &v["message"]["content"];
                    let text = c.as_str().map(String::from).unwrap_or_else(|| {
                        c.as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|b| b["text"].as_str())
                            .collect::<Vec<_>>()
                            .join("")
                    });
                    out.push(text);
                }
            }
        }
    }
    out
}

#[test]
fn shift_enter_makes_a_second_line_and_a_large_paste_is_collapsed_but_sent_whole() {
    let agent = TestAgent::new();
    let mut pi = agent.pty_faux(json!(["got it"]), 100, 30);
    pi.type_text("first line");
    // Shift+Enter in the kitty keyboard protocol pi asks for.
    pi.send(b"\x1b[13;2u");
    pi.type_text("second line ");
    let screen = pi.wait_text("second line");
    let first = screen
        .iter()
        .position(|r| r == "first line")
        .expect("first line");
    assert_eq!(screen[first + 1], "second line", "{screen:#?}");
    let big: String = (1..=40).map(|i| format!("pasted row {i}\n")).collect();
    pi.paste(&big);
    pi.wait_text("[paste #1 +40 lines]");
    pi.enter();
    pi.wait_row("got it");
    let sent = sent_user_messages(&agent);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert!(
        sent[0].starts_with("first line\nsecond line pasted row 1\n"),
        "{:?}",
        sent[0]
    );
    assert!(sent[0].contains("pasted row 40"), "{:?}", sent[0]);
    pi.quit();
}

#[test]
fn slash_lists_commands_with_descriptions_and_tab_completes_one() {
    let agent = TestAgent::new();
    let mut pi = agent.pty_faux(json!(["ok"]), 100, 30);
    pi.type_text("/ses");
    let screen = pi.wait_text("this session's file, id, counts, tokens and cost");
    assert!(screen.iter().any(|r| r.contains("/session")), "{screen:#?}");
    pi.send(b"\t");
    pi.wait_editor("/session");
    pi.enter();
    pi.wait_transcript("Messages 0");
    pi.quit();
}

#[test]
fn at_completes_file_names_fuzzily_and_respects_gitignore() {
    let agent = TestAgent::new();
    agent.write_file("src/parser/lexer.rs", "fn main() {}\n");
    agent.write_file("target/debug/lexer.rs", "built\n");
    agent.write_file(".gitignore", "target/\n");
    let mut pi = agent.pty_faux(json!(["ok"]), 100, 30);
    pi.type_text("look at @lexr");
    let screen = pi.wait_text("src/parser/lexer.rs");
    assert!(
        !screen.iter().any(|r| r.contains("target/debug")),
        "{screen:#?}"
    );
    pi.send(b"\t");
    pi.wait_editor("look at @src/parser/lexer.rs");
    quit_clearing(pi);
}

fn quit_clearing(mut pi: PtyPi) {
    pi.ctrl('u');
    pi.wait_editor(PLACEHOLDER);
    pi.quit();
}

#[test]
fn up_recalls_what_was_sent_in_an_earlier_run_of_the_same_project() {
    let agent = TestAgent::new();
    let mut pi = agent.pty_faux(json!(["one"]), 100, 30);
    pi.type_text("the remembered prompt");
    pi.enter();
    pi.wait_row("one");
    pi.quit();
    let mut pi = agent.pty_faux(json!(["two"]), 100, 30);
    pi.send(b"\x1b[A");
    let screen = pi.wait_editor("the remembered prompt");
    assert_eq!(editor_row(&screen), Some("the remembered prompt"));
    quit_clearing(pi);
}

#[test]
fn the_answer_is_rendered_as_markdown() {
    let agent = TestAgent::new();
    let answer = "# Plan\n\nSome **bold** and `code`.\n\n- first item\n- second item\n\n```rust\nfn main() {}\n```\n\n| name | value |\n|------|-------|\n| a    | 1     |\n";
    let mut pi = agent.pty_faux(json!([answer]), 100, 40);
    pi.type_text("plan it");
    pi.enter();
    pi.wait_transcript("fn main() {}");
    pi.wait_transcript("second item");
    // The table is the answer's last block and is drawn once it is complete (streaming shows
    // its raw lines first): once it shows, everything before it has.
    pi.wait_screen("the table drawn", |rows| {
        rows.iter()
            .any(|r| r.contains("name") && r.contains("│") && r.contains("value"))
    });
    let all = pi.transcript();
    let has = |needle: &str| all.iter().any(|r| r.contains(needle));
    assert!(has("# Plan"), "{all:#?}");
    assert!(
        has("Some bold and code."),
        "markdown markers stayed: {all:#?}"
    );
    assert!(has("• first item") && has("• second item"), "{all:#?}");
    assert!(has("╭─ rust") && has("│ fn main() {}"), "{all:#?}");
    assert!(
        all.iter()
            .any(|r| r.contains("name") && r.contains("│") && r.contains("value")),
        "{all:#?}"
    );
    pi.quit();
}

#[test]
fn thinking_shows_and_ctrl_t_collapses_it() {
    let agent = TestAgent::new();
    let steps = json!([
        {"thinking": "weighing the first option", "text": "first answer"},
        {"thinking": "weighing the second option", "text": "second answer"}
    ]);
    let mut pi = agent.pty_faux(steps, 100, 30);
    pi.type_text("one");
    pi.enter();
    pi.wait_row("first answer");
    assert!(pi
        .transcript()
        .iter()
        .any(|r| r == "∴ weighing the first option"));
    pi.ctrl('t');
    pi.wait_text("Thinking collapsed");
    pi.type_text("two");
    pi.enter();
    pi.wait_row("second answer");
    let all = pi.transcript();
    assert!(
        all.iter()
            .any(|r| r == "∴ thinking (4 words, Ctrl+T shows)"),
        "{all:#?}"
    );
    assert!(
        !all.iter().any(|r| r.contains("weighing the second option")),
        "{all:#?}"
    );
    pi.quit();
}

#[test]
fn a_hooks_command_completes_its_arguments_in_the_editor() {
    let agent = TestAgent::new();
    let hook = agent.tmp.join("deployer.py");
    let samples = crate::common::hooks::repo().join("sample-hooks");
    std::fs::write(
        &hook,
        format!(
            r#"import sys
sys.path.insert(0, {samples:?})
from pi_hook import Hook
hook = Hook("deployer")
TARGETS = [{{"value": "production", "description": "the live site"}}, "preview", "staging"]
def complete(prefix):
    return [t for t in TARGETS if (t if isinstance(t, str) else t["value"]).startswith(prefix)]
@hook.command("deploy", "Deploy the site", complete=complete)
def deploy(args, ctx):
    return "deploying to " + args
hook.run()
"#,
            samples = samples.display().to_string()
        ),
    )
    .expect("hook file");
    agent.write_settings(
        &json!({"hooks": [{"command": format!("python3 {}", hook.display()), "name": "deployer"}]}),
    );
    let mut pi = agent.pty_faux(json!(["ok"]), 100, 30);
    pi.type_text("/deploy ");
    let screen = pi.wait_text("the live site");
    assert!(screen.iter().any(|r| r.contains("staging")), "{screen:#?}");
    pi.type_text("pr");
    pi.wait_screen("only the matching targets", |s| {
        s.iter().any(|r| r.contains("preview")) && !s.iter().any(|r| r.contains("staging"))
    });
    pi.send(b"\t");
    pi.wait_editor("/deploy production");
    pi.enter();
    pi.wait_transcript("deploying to production");
    pi.quit();
}
