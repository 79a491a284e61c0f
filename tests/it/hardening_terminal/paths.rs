//! A project directory whose name carries escape sequences: the trust question (which lists
//! the project's files by path) and the footer (the working directory) show the name as
//! visible text.

use serde_json::json;

use super::*;
use crate::common::hooks::fixture;
use crate::common::TestAgent;

#[test]
fn a_project_path_with_escapes_is_shown_not_obeyed_in_the_trust_question_and_the_footer() {
    let mut agent = TestAgent::new();
    // A file name may hold any byte but `/` and NUL.
    let name = format!("proj[{TITLE}{CLEAR}{C1_CLEAR}]");
    let seen = "proj[␛]0;PWNED␇␛[2J␛[H2J]";
    agent.cwd = agent.cwd.join(&name);
    std::fs::create_dir_all(&agent.cwd).expect("the project");
    let entry = json!({"command": format!("python3 {}", fixture("scripted.py")), "name": "p"});
    agent.write_file(
        ".pi/settings.json",
        serde_json::to_vec(&json!({"hooks": [entry]})).expect("json"),
    );
    let mut pi = agent.pty(&agent.faux_args(json!(["ok"])), 200, 40);
    let screen = pi.wait_text("Trust this project?");
    assert!(has_row(&screen, seen), "{screen:#?}");
    pi.enter();
    let screen = pi.wait_text("faux/faux-1");
    assert!(has_row(&screen, seen), "the footer: {screen:#?}");
    assert_sent(&pi, "␛[H\u{FFFD}2J]");
    assert_pty_inert(&pi);
    pi.quit();
}
