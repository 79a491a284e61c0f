//! Themes through the real binary in a pseudo-terminal: the colours a person sees (read from
//! the terminal emulator's cells, never from escape bytes) follow `--theme`, `/settings` and a
//! hook's `ui.set_theme`, and a theme file that cannot be used is named on screen while pi
//! draws with the built-in theme.

use serde_json::{json, Value};
use vt100::Color;

use crate::common::pty::PtyPi;
use crate::common::TestAgent;

/// pi 1.6's `userMessageBg` in its `dark` and `light` themes.
const DARK_USER_BG: Color = Color::Rgb(0x21, 0x3b, 0x49);
const LIGHT_USER_BG: Color = Color::Rgb(0xdf, 0xe7, 0xec);

fn say_hello(pi: &mut PtyPi) {
    pi.type_text("hello");
    pi.enter();
    pi.wait_row("ok");
    pi.wait_screen("the run settled", |s| {
        !s.iter().any(|r| r.contains("Working…"))
    });
}

/// An agent whose terminal says it shows 24-bit colour, so theme colours arrive unchanged
/// (without `COLORTERM` pi approximates them in the 256-colour palette).
fn truecolor_agent() -> TestAgent {
    let mut agent = TestAgent::new();
    agent.env("COLORTERM", "truecolor");
    agent
}

/// The background of the user's message `hello` once it is `want`.
fn user_bg(pi: &PtyPi, want: Color) {
    pi.wait_colors("› hello", |_, bg| bg == want);
}

#[test]
fn theme_flag_light_draws_with_the_light_themes_colours() {
    let agent = truecolor_agent();
    let mut args = agent.faux_args(json!(["ok", "ok"]));
    let mut plain = agent.pty(&args, 100, 30);
    plain.wait_text("faux/faux-1");
    say_hello(&mut plain);
    // The default theme is `system`: the terminal's own colours, no panel background.
    assert_eq!(
        plain.colors_of("› hello").map(|c| c.1),
        Some(Color::Default)
    );
    plain.quit();

    args.extend(["--theme".to_string(), "light".to_string()]);
    let mut pi = agent.pty(&args, 100, 30);
    pi.wait_text("faux/faux-1");
    say_hello(&mut pi);
    user_bg(&pi, LIGHT_USER_BG);
    pi.quit();
}

#[test]
fn settings_switches_the_theme_live_and_writes_the_file_keeping_other_keys() {
    let agent = truecolor_agent();
    agent.write_settings(&json!({"theme": "dark", "x-unknown": {"keep": [1, 2]}}));
    let mut pi = agent.pty_faux(json!(["ok"]), 100, 40);
    say_hello(&mut pi);
    user_bg(&pi, DARK_USER_BG);
    pi.type_text("/settings");
    pi.enter();
    pi.wait_text("Auto-compact");
    pi.type_text("theme");
    pi.wait_text("→ Theme");
    pi.enter();
    pi.wait_text("✓ dark");
    // Down to `light`: previewed at once, the transcript drawn again in it.
    pi.send(b"\x1b[B");
    user_bg(&pi, LIGHT_USER_BG);
    pi.enter();
    pi.wait_text("Theme = light saved to");
    let text = std::fs::read_to_string(agent.agent_dir.join("settings.json")).expect("settings");
    let saved: Value = serde_json::from_str(&text).expect("settings.json parses");
    assert_eq!(
        saved,
        json!({"theme": "light", "x-unknown": {"keep": [1, 2]}})
    );
    pi.esc();
    pi.wait_screen("the settings closed", |s| {
        !s.iter().any(|r| r.contains("Esc to close"))
    });
    user_bg(&pi, LIGHT_USER_BG);
    pi.quit();
}

#[test]
fn a_theme_file_that_does_not_parse_is_named_with_its_line_and_the_default_is_used() {
    let agent = truecolor_agent();
    let themes = agent.agent_dir.join("themes");
    std::fs::create_dir_all(&themes).expect("themes dir");
    std::fs::write(
        themes.join("broken.json"),
        "{\n  \"name\": \"broken\",\n  \"colors\": {,\n}\n",
    )
    .expect("write theme");
    agent.write_settings(&json!({"theme": "broken"}));
    let mut pi = agent.pty_faux(json!(["ok"]), 120, 30);
    let screen = pi.wait_text("broken.json: line 3, column");
    assert!(
        screen
            .iter()
            .any(|r| r.contains("theme \"broken\" not found; available: system, dark, light")),
        "{screen:#?}"
    );
    say_hello(&mut pi);
    assert_eq!(pi.colors_of("› hello").map(|c| c.1), Some(Color::Default));
    pi.quit();
}

#[test]
fn unknown_colour_keys_and_bad_values_are_named_on_screen() {
    let agent = truecolor_agent();
    let mut doc: Value =
        serde_json::from_str(include_str!("../../src/resources/themes/builtin/dark.json"))
            .expect("dark.json");
    doc["name"] = "ocean".into();
    doc["colors"]["acent"] = "#00ff00".into();
    doc["colors"]["border"] = "#12".into();
    let text = serde_json::to_string_pretty(&doc).expect("json");
    let line = |needle: &str| {
        text.lines()
            .position(|l| l.contains(needle))
            .map_or(0, |i| i + 1)
    };
    let file = agent.agent_dir.join("themes").join("ocean.json");
    std::fs::create_dir_all(file.parent().expect("parent")).expect("dir");
    std::fs::write(&file, &text).expect("write");
    let pi = agent.pty_faux(json!(["ok"]), 160, 30);
    pi.wait_text(&format!(
        "line {}: unknown colour key \"acent\"",
        line("\"acent\"")
    ));
    pi.wait_text(&format!(
        "line {}: \"border\": \"#12\" is not a colour",
        line("\"border\"")
    ));
    pi.quit();
}

#[test]
fn a_hooks_set_theme_switches_at_once_and_becomes_the_setting() {
    let agent = truecolor_agent();
    agent.write_settings(&json!({
        "theme": "dark",
        "hooks": [{
            "command": format!("python3 {}", crate::common::hooks::fixture("ui_dialogs.py")),
            "name": "ui-dialogs",
            "timeout_ms": 60000,
        }],
    }));
    let mut pi = agent.pty_faux(json!(["ok"]), 120, 40);
    say_hello(&mut pi);
    user_bg(&pi, DARK_USER_BG);
    pi.type_text(r#"/ask ui.set_theme {"name": "nosuch"}"#);
    pi.enter();
    pi.wait_text(r#"theme \"nosuch\" not found; available: system, dark, light"#);
    pi.type_text(r#"/ask ui.set_theme {"name": "light"}"#);
    pi.enter();
    pi.wait_text(r#"{"success": true}"#);
    user_bg(&pi, LIGHT_USER_BG);
    let text = std::fs::read_to_string(agent.agent_dir.join("settings.json")).expect("settings");
    let saved: Value = serde_json::from_str(&text).expect("settings.json parses");
    assert_eq!(saved["theme"], "light");
    assert_eq!(saved["hooks"][0]["name"], "ui-dialogs");
    pi.quit();
}

/// The user's own theme `ocean` with `userMessageBg` set to `bg`.
fn ocean_theme(bg: &str) -> String {
    let mut doc: Value =
        serde_json::from_str(include_str!("../../src/resources/themes/builtin/dark.json"))
            .expect("dark.json");
    doc["name"] = "ocean".into();
    doc["colors"]["userMessageBg"] = bg.into();
    serde_json::to_string_pretty(&doc).expect("json")
}

#[test]
fn saving_the_theme_in_use_redraws_in_its_new_colours_and_a_broken_save_keeps_the_last_good_one() {
    let agent = truecolor_agent();
    let file = agent.agent_dir.join("themes").join("ocean.json");
    std::fs::create_dir_all(file.parent().expect("parent")).expect("dir");
    std::fs::write(&file, ocean_theme("#102030")).expect("write");
    agent.write_settings(&json!({"theme": "ocean"}));
    let mut pi = agent.pty_faux(json!(["ok"]), 120, 30);
    say_hello(&mut pi);
    user_bg(&pi, Color::Rgb(0x10, 0x20, 0x30));
    // Saved as editors do: a new file renamed over the old one.
    let tmp = file.with_extension("json.tmp");
    std::fs::write(&tmp, ocean_theme("#405060")).expect("write");
    std::fs::rename(&tmp, &file).expect("rename");
    user_bg(&pi, Color::Rgb(0x40, 0x50, 0x60));
    std::fs::write(&file, "{\n  \"name\": \"ocean\",\n  \"colors\": {,\n}\n").expect("write");
    pi.wait_text("Warning: theme ocean kept as it was");
    assert_eq!(
        pi.colors_of("› hello").map(|c| c.1),
        Some(Color::Rgb(0x40, 0x50, 0x60)),
        "a broken save keeps the last good colours"
    );
    pi.quit();
}

/// pi 1.6 asks the terminal for its colours (OSC 10/11, the palette, then DA1) and a
/// `light/dark` theme setting takes the half the reported background calls for; keys typed
/// while the answer is awaited still arrive.
#[test]
fn a_light_terminal_answering_the_colour_query_gets_the_light_half_of_light_dark() {
    let agent = truecolor_agent();
    agent.write_settings(&json!({"theme": "light/dark"}));
    let args = agent.faux_args(json!(["ok", "ok"]));
    // A terminal that does not answer: dark, as 1.6 falls back without COLORFGBG.
    let mut quiet = agent.pty(&args, 100, 30);
    quiet.wait_text("faux/faux-1");
    say_hello(&mut quiet);
    user_bg(&quiet, DARK_USER_BG);
    assert!(
        quiet
            .bytes()
            .windows(10)
            .any(|w| w == b"\x1b]11;?\x07\x1b]4"),
        "pi asked for the background"
    );
    quiet.quit();

    let light = b"\x1b]10;rgb:0000/0000/0000\x07\x1b]11;rgb:ffff/ffff/ffff\x07\x1b[?62;22c";
    let mut pi = agent.pty_answering(&args, (100, 30), b"\x1b]11;?\x07", light);
    pi.wait_text("faux/faux-1");
    say_hello(&mut pi);
    user_bg(&pi, LIGHT_USER_BG);
    pi.quit();
}
