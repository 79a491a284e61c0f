//! Completion as a person meets it: `/` commands and their arguments, `@` files found by
//! the background walk, Tab on paths.

use std::fs;
use std::sync::{mpsc, Arc, Mutex};

use crossterm::event::KeyCode;

use super::super::tests::{editor, press, texts, typed, view, NONE};
use super::super::*;

fn commands() -> Vec<CommandInfo> {
    vec![
        CommandInfo::new("model", "Pick a model"),
        CommandInfo::new("name", "Name this session"),
        CommandInfo::new("new", "Start a new session"),
    ]
}

#[test]
fn slash_lists_commands_with_descriptions_and_filters_as_you_type() {
    let mut ed = editor();
    ed.set_commands(commands());
    typed(&mut ed, "/");
    let popup = texts(&view(&ed, 60).popup);
    assert_eq!(popup.len(), 3);
    assert_eq!(popup[0], "› /model  Pick a model");
    assert_eq!(popup[1], "  /name   Name this session");
    typed(&mut ed, "n");
    let popup = texts(&view(&ed, 60).popup);
    assert_eq!(
        popup,
        ["› /name  Name this session", "  /new   Start a new session"]
    );
    typed(&mut ed, "x");
    assert!(!ed.has_popup(), "nothing matches");
}

#[test]
fn tab_accepts_a_command_and_enter_runs_it() {
    let mut ed = editor();
    ed.set_commands(commands());
    typed(&mut ed, "/n");
    press(&mut ed, KeyCode::Down, NONE);
    press(&mut ed, KeyCode::Tab, NONE);
    assert_eq!(ed.text(), "/new ");
    ed.clear();
    typed(&mut ed, "/mo");
    assert_eq!(
        press(&mut ed, KeyCode::Enter, NONE),
        EditorOutcome::Submit("/model".into())
    );
}

struct Args(Arc<Mutex<Vec<(String, String)>>>);

impl ArgumentCompleter for Args {
    fn complete_args(&self, command: &str, prefix: &str) -> Vec<CompletionItem> {
        if let Ok(mut calls) = self.0.lock() {
            calls.push((command.into(), prefix.into()));
        }
        if command != "model" {
            return Vec::new();
        }
        ["claude-sonnet", "claude-haiku", "gpt-5"]
            .iter()
            .filter(|m| m.starts_with(prefix))
            .map(|m| CompletionItem::new(*m).with_description("provider"))
            .collect()
    }
}

#[test]
fn arguments_complete_from_the_apps_provider() {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let mut ed = editor();
    ed.set_commands(commands());
    ed.set_argument_completer(Box::new(Args(Arc::clone(&calls))));
    typed(&mut ed, "/model cl");
    assert_eq!(
        calls.lock().unwrap().last(),
        Some(&("model".to_string(), "cl".to_string()))
    );
    let popup = texts(&view(&ed, 60).popup);
    assert_eq!(
        popup,
        ["› claude-sonnet  provider", "  claude-haiku   provider"]
    );
    press(&mut ed, KeyCode::Down, NONE);
    press(&mut ed, KeyCode::Tab, NONE);
    assert_eq!(ed.text(), "/model claude-haiku");
    ed.clear();
    typed(&mut ed, "/name x");
    assert!(!ed.has_popup(), "no arguments offered, no popup");
}

#[test]
fn accepting_a_command_opens_its_argument_list() {
    let mut ed = editor();
    ed.set_commands(commands());
    ed.set_argument_completer(Box::new(Args(Arc::default())));
    typed(&mut ed, "/mod");
    press(&mut ed, KeyCode::Tab, NONE);
    assert_eq!(ed.text(), "/model ");
    assert_eq!(view(&ed, 60).popup.len(), 3);
}

#[test]
fn escape_closes_the_popup_until_the_text_changes() {
    let mut ed = editor();
    ed.set_commands(commands());
    typed(&mut ed, "/n");
    assert_eq!(press(&mut ed, KeyCode::Esc, NONE), EditorOutcome::Handled);
    assert!(!ed.has_popup());
    press(&mut ed, KeyCode::Left, NONE);
    assert!(!ed.has_popup(), "moving does not reopen it");
    press(&mut ed, KeyCode::End, NONE);
    typed(&mut ed, "e");
    assert!(ed.has_popup());
    assert_eq!(
        press(&mut ed, KeyCode::Enter, NONE),
        EditorOutcome::Submit("/new".into())
    );
}

/// An editor on a project directory, and a channel its file walk reports on.
fn project(files: &[&str]) -> (tempfile::TempDir, Editor, mpsc::Receiver<()>) {
    let dir = tempfile::tempdir().unwrap();
    for f in files {
        let p = dir.path().join(f);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, "").unwrap();
    }
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let notify: Notify = Arc::new(move || {
        if let Ok(tx) = tx.lock() {
            let _ = tx.send(());
        }
    });
    let ed = Editor::new(EditorOptions {
        cwd: dir.path().to_path_buf(),
        home: Some(dir.path().to_path_buf()),
        history_file: None,
        notify: Some(notify),
    });
    (dir, ed, rx)
}

/// Wait for the walk to finish, applying its news as the app would.
fn settle(ed: &mut Editor, rx: &mpsc::Receiver<()>) {
    loop {
        let searching = view(ed, 80)
            .popup
            .iter()
            .any(|l| l.text().contains("searching"));
        if !searching {
            return;
        }
        rx.recv_timeout(std::time::Duration::from_secs(10))
            .expect("the walk reports");
        ed.poll_background();
    }
}

#[test]
fn at_lists_project_files_fuzzily_and_tab_inserts_the_reference() {
    let (_dir, mut ed, rx) = project(&["src/main.rs", "src/lib.rs", "README.md"]);
    typed(&mut ed, "see @mai");
    settle(&mut ed, &rx);
    let popup = texts(&view(&ed, 80).popup);
    assert_eq!(popup.first().map(String::as_str), Some("› src/main.rs"));
    press(&mut ed, KeyCode::Tab, NONE);
    assert_eq!(ed.text(), "see @src/main.rs ");
    assert!(!ed.has_popup());
}

#[test]
fn enter_on_a_file_list_inserts_without_submitting() {
    let (_dir, mut ed, rx) = project(&["notes.md"]);
    typed(&mut ed, "@no");
    settle(&mut ed, &rx);
    assert_eq!(press(&mut ed, KeyCode::Enter, NONE), EditorOutcome::Handled);
    assert_eq!(ed.text(), "@notes.md ");
    assert_eq!(
        press(&mut ed, KeyCode::Enter, NONE),
        EditorOutcome::Submit("@notes.md".into())
    );
}

#[test]
fn a_file_with_spaces_is_quoted_and_a_directory_keeps_the_list_open() {
    let (_dir, mut ed, rx) = project(&["my docs/plan one.md"]);
    typed(&mut ed, "@my");
    settle(&mut ed, &rx);
    assert_eq!(texts(&view(&ed, 80).popup)[0], "› my docs/");
    press(&mut ed, KeyCode::Tab, NONE);
    assert_eq!(ed.text(), "@\"my docs/");
    assert!(ed.has_popup(), "still completing inside the directory");
    press(&mut ed, KeyCode::Tab, NONE);
    assert_eq!(ed.text(), "@\"my docs/plan one.md\" ");
}

#[test]
fn a_query_matching_nothing_says_so() {
    let (_dir, mut ed, rx) = project(&["a.txt"]);
    typed(&mut ed, "@zzz");
    settle(&mut ed, &rx);
    assert_eq!(texts(&view(&ed, 80).popup), ["  no matching files"]);
    assert_eq!(
        press(&mut ed, KeyCode::Enter, NONE),
        EditorOutcome::Submit("@zzz".into()),
        "an empty list does not swallow Enter"
    );
}

#[test]
fn tab_completes_a_path_to_the_common_prefix_and_lists_the_choices() {
    let (dir, mut ed, _rx) = project(&["src/modes/x", "src/models/y", "src/main.rs"]);
    typed(&mut ed, "open ./sr");
    press(&mut ed, KeyCode::Tab, NONE);
    assert_eq!(ed.text(), "open ./src/");
    typed(&mut ed, "mo");
    press(&mut ed, KeyCode::Tab, NONE);
    assert_eq!(ed.text(), "open ./src/mode");
    assert_eq!(texts(&view(&ed, 80).popup), ["› models/", "  modes/"]);
    press(&mut ed, KeyCode::Down, NONE);
    press(&mut ed, KeyCode::Enter, NONE);
    assert_eq!(ed.text(), "open ./src/modes/");
    ed.set_text("cat ~/src/ma");
    press(&mut ed, KeyCode::Tab, NONE);
    assert_eq!(ed.text(), "cat ~/src/main.rs");
    drop(dir);
}

#[test]
fn tab_on_a_plain_word_changes_nothing() {
    let (_dir, mut ed, _rx) = project(&["src/main.rs"]);
    typed(&mut ed, "src");
    assert_eq!(press(&mut ed, KeyCode::Tab, NONE), EditorOutcome::Handled);
    assert_eq!(ed.text(), "src");
}

struct Hostile;

impl ArgumentCompleter for Hostile {
    fn complete_args(&self, _command: &str, _prefix: &str) -> Vec<CompletionItem> {
        vec![CompletionItem {
            value: "two\nlines\u{1b}[2J".into(),
            label: "evil\u{1b}]0;title\u{7}".into(),
            description: Some("clear\u{1b}[2J\nscreen".into()),
        }]
    }
}

#[test]
fn a_providers_control_characters_never_reach_the_text_or_the_screen() {
    let mut ed = editor();
    ed.set_argument_completer(Box::new(Hostile));
    typed(&mut ed, "/x ");
    let popup = texts(&view(&ed, 80).popup);
    assert_eq!(popup, ["› evil ]0;title   clear [2J screen"]);
    press(&mut ed, KeyCode::Tab, NONE);
    assert_eq!(ed.text(), "/x two lines[2J");
}
