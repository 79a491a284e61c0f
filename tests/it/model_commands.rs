//! The interactive mode's model commands through the real binary in a pseudo-terminal, as a
//! person sees them: `/model` (the current model marked, Ctrl+S saves the default, Ctrl+L opens
//! it), `/thinking`, Ctrl+P / Shift+Ctrl+P through the `--models` scope, and
//! `/scoped-models`.

use serde_json::{json, Value};

use crate::common::pty::PtyPi;
use crate::common::TestAgent;

/// Shift+Ctrl+P as a terminal with the kitty keyboard protocol sends it.
const SHIFT_CTRL_P: &[u8] = b"\x1b[112;6u";

fn command(pi: &mut PtyPi, line: &str) {
    pi.type_text(line);
    pi.enter();
}

/// Keyed models that are never called (no prompt is sent).
fn models(agent: &TestAgent) {
    agent.write_models(&json!({"providers": {
        "other": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions",
            "apiKey": "unused", "models": [
                {"id": "alpha"},
                {"id": "beta", "name": "Beta Turbo", "reasoning": true},
                {"id": "gamma"}]}
    }}));
}

fn settings(agent: &TestAgent) -> Value {
    let text = std::fs::read_to_string(agent.agent_dir.join("settings.json")).unwrap_or_default();
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

/// Esc, then the dialog gone (a key sent at once after a lone Esc would read as Alt+key):
/// `row` is one of its rows that nothing else shows.
fn close(pi: &mut PtyPi, row: &str) {
    pi.esc();
    pi.wait_screen("the dialog closed", |s| !s.iter().any(|r| r.contains(row)));
}

const PICKER_HINT: &str = "Ctrl+S to set as default";

fn footer_ends_with(pi: &PtyPi, model: &str) {
    pi.wait_screen(&format!("the footer on {model}"), |s| {
        s.iter()
            .any(|r| r.starts_with("↑0") && r.contains(&format!(" {model}")))
    });
}

#[test]
fn slash_model_marks_the_current_model_and_ctrl_s_saves_the_default() {
    let agent = TestAgent::new();
    models(&agent);
    let mut pi = agent.pty(&["--model", "other/gamma"], 120, 40);
    footer_ends_with(&pi, "other/gamma");
    command(&mut pi, "/model");
    // The current model first, marked and under the cursor; names that say more than the id.
    let screen = pi.wait_text("› ✓ gamma [other]");
    assert!(
        screen.iter().any(|r| r == "    beta (Beta Turbo) [other]"),
        "{screen:#?}"
    );
    assert!(screen
        .iter()
        .any(|r| r.contains("Ctrl+S to set as default")));
    pi.type_text("turbo");
    pi.wait_text("›   beta (Beta Turbo) [other]");
    pi.ctrl('s');
    pi.wait_text("Default model: other/beta");
    footer_ends_with(&pi, "other/beta");
    let s = settings(&agent);
    assert_eq!(
        (s["defaultProvider"].as_str(), s["defaultModel"].as_str()),
        (Some("other"), Some("beta"))
    );
    // Ctrl+L opens the same picker: now beta is current and the default.
    pi.ctrl('l');
    pi.wait_text("› ✓ beta (Beta Turbo) [other] · default");
    close(&mut pi, PICKER_HINT);
    pi.quit();
}

#[test]
fn slash_thinking_offers_the_models_levels_and_ctrl_s_saves_the_default() {
    let agent = TestAgent::new();
    models(&agent);
    let mut pi = agent.pty(&["--model", "other/beta", "--thinking", "low"], 120, 40);
    footer_ends_with(&pi, "other/beta");
    command(&mut pi, "/thinking");
    let screen = pi.wait_text("Thinking Level");
    assert!(
        screen
            .iter()
            .any(|r| r == "› ✓ low  Light reasoning (~2k tokens)"),
        "{screen:#?}"
    );
    assert!(
        screen
            .iter()
            .any(|r| r == "    medium  Moderate reasoning (~8k tokens) · default"),
        "{screen:#?}"
    );
    assert!(!screen.iter().any(|r| r.contains("xhigh")), "{screen:#?}");
    pi.type_text("high");
    pi.enter();
    pi.wait_text("Thinking level: high");
    command(&mut pi, "/thinking");
    pi.wait_text("› ✓ high");
    pi.type_text("minimal");
    pi.ctrl('s');
    pi.wait_text("Default thinking level: minimal");
    assert_eq!(settings(&agent)["defaultThinkingLevel"], "minimal");
    command(&mut pi, "/thinking huge");
    pi.wait_text(
        "Unknown thinking level \"huge\". Available levels: off, minimal, low, medium, high.",
    );
    // A model without reasoning has only `off`.
    command(&mut pi, "/model other/alpha");
    pi.wait_text("Model: alpha");
    command(&mut pi, "/thinking");
    let screen = pi.wait_text("Thinking Level");
    assert!(
        screen.iter().any(|r| r == "› ✓ off  No reasoning"),
        "{screen:#?}"
    );
    assert!(!screen.iter().any(|r| r.contains("minimal")), "{screen:#?}");
    close(&mut pi, PICKER_HINT);
    pi.quit();
}

#[test]
fn ctrl_p_cycles_the_models_scope_and_shift_ctrl_p_goes_back() {
    let agent = TestAgent::new();
    models(&agent);
    let mut pi = agent.pty(&["--models", "alpha,beta:high"], 120, 40);
    // A new session starts on the scope's first model.
    footer_ends_with(&pi, "other/alpha");
    pi.ctrl('p');
    pi.wait_text("Switched to Beta Turbo (thinking: high)");
    footer_ends_with(&pi, "other/beta");
    pi.ctrl('p');
    pi.wait_text("Switched to alpha");
    footer_ends_with(&pi, "other/alpha");
    pi.send(SHIFT_CTRL_P);
    footer_ends_with(&pi, "other/beta");
    pi.quit();
}

#[test]
fn scoped_models_toggles_the_cycle_and_ctrl_s_saves_enabled_models() {
    let agent = TestAgent::new();
    models(&agent);
    let mut pi = agent.pty(&["--model", "other/alpha"], 120, 40);
    footer_ends_with(&pi, "other/alpha");
    command(&mut pi, "/scoped-models");
    let screen = pi.wait_text("Model Configuration");
    assert!(
        screen.iter().any(|r| r.contains("all enabled")),
        "{screen:#?}"
    );
    assert!(
        screen.iter().any(|r| r == "› ✓ alpha [other]"),
        "{screen:#?}"
    );
    // Enter toggles the highlighted model off; the list stays open.
    pi.type_text("beta");
    pi.enter();
    let screen = pi.wait_text("2/3 enabled (unsaved)");
    assert!(
        screen.iter().any(|r| r == "›   beta [other]"),
        "{screen:#?}"
    );
    pi.ctrl('s');
    pi.wait_text("Model selection saved to settings");
    assert_eq!(
        settings(&agent)["enabledModels"],
        json!(["other/alpha", "other/gamma"])
    );
    close(&mut pi, "Session-only. Ctrl+S to save");
    // Ctrl+P now skips beta.
    pi.ctrl('p');
    pi.wait_text("Switched to gamma");
    pi.ctrl('p');
    pi.wait_text("Switched to alpha");
    pi.quit();
}
