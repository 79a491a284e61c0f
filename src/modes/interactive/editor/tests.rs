//! The editor driven by keys, as the app drives it.

use std::fs;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;
use crate::modes::interactive::theme::ThemeName;

pub(super) const NONE: KeyModifiers = KeyModifiers::NONE;
const CTRL: KeyModifiers = KeyModifiers::CONTROL;
const ALT: KeyModifiers = KeyModifiers::ALT;
const SHIFT: KeyModifiers = KeyModifiers::SHIFT;

pub(super) fn editor() -> Editor {
    Editor::new(EditorOptions {
        cwd: PathBuf::from("/nonexistent-pi-test-dir"),
        home: None,
        history_file: None,
        notify: None,
    })
}

pub(super) fn press(ed: &mut Editor, code: KeyCode, m: KeyModifiers) -> EditorOutcome {
    ed.handle_key(&KeyEvent::new(code, m))
}

pub(super) fn typed(ed: &mut Editor, text: &str) {
    for c in text.chars() {
        assert_eq!(press(ed, KeyCode::Char(c), NONE), EditorOutcome::Handled);
    }
}

fn theme() -> Theme {
    Theme::new(ThemeName::Dark, false)
}

pub(super) fn view(ed: &Editor, width: usize) -> EditorView {
    ed.render(width, &theme())
}

pub(super) fn texts(lines: &[crate::modes::interactive::text::Line]) -> Vec<String> {
    lines.iter().map(|l| l.text()).collect()
}

#[test]
fn enter_submits_the_trimmed_text_and_empties_the_editor() {
    let mut ed = editor();
    typed(&mut ed, "  hello world ");
    assert_eq!(
        press(&mut ed, KeyCode::Enter, NONE),
        EditorOutcome::Submit("hello world".into())
    );
    assert!(ed.is_empty());
    assert_eq!(ed.text(), "");
}

#[test]
fn enter_on_an_empty_or_blank_editor_submits_nothing() {
    let mut ed = editor();
    assert_eq!(press(&mut ed, KeyCode::Enter, NONE), EditorOutcome::Handled);
    typed(&mut ed, "   ");
    assert_eq!(press(&mut ed, KeyCode::Enter, NONE), EditorOutcome::Handled);
    assert_eq!(ed.text(), "   ", "kept: nothing was sent");
}

#[test]
fn alt_enter_is_a_follow_up() {
    let mut ed = editor();
    typed(&mut ed, "after this");
    assert_eq!(
        press(&mut ed, KeyCode::Enter, ALT),
        EditorOutcome::FollowUp("after this".into())
    );
}

#[test]
fn shift_enter_ctrl_j_and_backslash_enter_insert_newlines() {
    let mut ed = editor();
    typed(&mut ed, "a");
    press(&mut ed, KeyCode::Enter, SHIFT);
    typed(&mut ed, "b");
    press(&mut ed, KeyCode::Char('j'), CTRL);
    typed(&mut ed, "c\\");
    assert_eq!(press(&mut ed, KeyCode::Enter, NONE), EditorOutcome::Handled);
    typed(&mut ed, "d");
    assert_eq!(ed.text(), "a\nb\nc\nd");
    assert_eq!(
        press(&mut ed, KeyCode::Enter, NONE),
        EditorOutcome::Submit("a\nb\nc\nd".into())
    );
}

#[test]
fn app_keys_are_ignored_for_the_app_to_handle() {
    let mut ed = editor();
    assert_eq!(
        press(&mut ed, KeyCode::Char('c'), CTRL),
        EditorOutcome::Ignored
    );
    assert_eq!(press(&mut ed, KeyCode::Esc, NONE), EditorOutcome::Ignored);
    assert_eq!(
        press(&mut ed, KeyCode::BackTab, SHIFT),
        EditorOutcome::Ignored
    );
    assert_eq!(
        press(&mut ed, KeyCode::Char('d'), CTRL),
        EditorOutcome::Ignored,
        "Ctrl+D on an empty editor is the app's (quit)"
    );
    typed(&mut ed, "ab");
    press(&mut ed, KeyCode::Home, NONE);
    assert_eq!(
        press(&mut ed, KeyCode::Char('d'), CTRL),
        EditorOutcome::Handled
    );
    assert_eq!(ed.text(), "b");
}

#[test]
fn readline_keys_edit_the_text() {
    let mut ed = editor();
    typed(&mut ed, "one two three");
    press(&mut ed, KeyCode::Char('w'), CTRL);
    assert_eq!(ed.text(), "one two ");
    press(&mut ed, KeyCode::Char('a'), CTRL);
    press(&mut ed, KeyCode::Right, ALT);
    press(&mut ed, KeyCode::Char('k'), CTRL);
    assert_eq!(ed.text(), "one");
    press(&mut ed, KeyCode::Char('y'), CTRL);
    assert_eq!(ed.text(), "one two ");
    press(&mut ed, KeyCode::Left, CTRL);
    press(&mut ed, KeyCode::Char('u'), CTRL);
    assert_eq!(ed.text(), "two ");
    press(&mut ed, KeyCode::Char('e'), CTRL);
    press(&mut ed, KeyCode::Backspace, ALT);
    assert_eq!(ed.text(), "");
}

#[test]
fn up_and_down_browse_history_and_bring_the_draft_back() {
    let mut ed = editor();
    for p in ["first", "second"] {
        typed(&mut ed, p);
        press(&mut ed, KeyCode::Enter, NONE);
    }
    typed(&mut ed, "draft");
    press(&mut ed, KeyCode::Up, NONE);
    assert_eq!(ed.text(), "second");
    press(&mut ed, KeyCode::Up, NONE);
    assert_eq!(ed.text(), "first");
    press(&mut ed, KeyCode::Up, NONE);
    assert_eq!(ed.text(), "first", "nothing older");
    press(&mut ed, KeyCode::Down, NONE);
    press(&mut ed, KeyCode::Down, NONE);
    assert_eq!(ed.text(), "draft");
}

#[test]
fn up_inside_multi_line_text_moves_the_cursor_before_reaching_history() {
    let mut ed = editor();
    typed(&mut ed, "old");
    press(&mut ed, KeyCode::Enter, NONE);
    typed(&mut ed, "line one");
    press(&mut ed, KeyCode::Enter, SHIFT);
    typed(&mut ed, "two");
    press(&mut ed, KeyCode::Up, NONE);
    typed(&mut ed, "X");
    assert_eq!(ed.text(), "linXe one\ntwo", "same column on the line above");
    press(&mut ed, KeyCode::Down, NONE);
    typed(&mut ed, "Y");
    assert_eq!(ed.text(), "linXe one\ntwoY", "the end of a shorter line");
    press(&mut ed, KeyCode::Up, NONE);
    press(&mut ed, KeyCode::Up, NONE);
    assert_eq!(ed.text(), "old", "from the first line Up goes to history");
    press(&mut ed, KeyCode::Down, NONE);
    assert_eq!(ed.text(), "linXe one\ntwoY");
}

#[test]
fn editing_a_recalled_entry_makes_it_the_draft() {
    let mut ed = editor();
    for p in ["a", "b"] {
        typed(&mut ed, p);
        press(&mut ed, KeyCode::Enter, NONE);
    }
    press(&mut ed, KeyCode::Up, NONE);
    typed(&mut ed, "!");
    press(&mut ed, KeyCode::Up, NONE);
    assert_eq!(ed.text(), "b", "browsing starts over from the newest");
    press(&mut ed, KeyCode::Down, NONE);
    assert_eq!(ed.text(), "b!");
}

#[test]
fn up_and_down_move_over_soft_wrapped_rows_as_drawn() {
    let mut ed = editor();
    typed(&mut ed, "old");
    press(&mut ed, KeyCode::Enter, NONE);
    typed(&mut ed, "aaaa bbbb cccc");
    let v = view(&ed, 5);
    assert_eq!(texts(&v.lines[1..4]), ["aaaa ", "bbbb ", "cccc"]);
    assert_eq!(v.cursor, (3, 4));
    press(&mut ed, KeyCode::Up, NONE);
    typed(&mut ed, "X");
    assert_eq!(
        ed.text(),
        "aaaa bbbbX cccc",
        "one drawn row up, same column"
    );
    press(&mut ed, KeyCode::Char('a'), CTRL);
    press(&mut ed, KeyCode::Down, NONE);
    typed(&mut ed, "Y");
    assert_eq!(
        ed.text(),
        "aaaa YbbbbX cccc",
        "down one drawn row, not to history"
    );
    press(&mut ed, KeyCode::Char('a'), CTRL);
    press(&mut ed, KeyCode::Up, NONE);
    assert_eq!(ed.text(), "old");
}

#[test]
fn history_persists_per_project_across_editors() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().join("proj");
    let opts = || EditorOptions::for_project(dir.path(), &cwd, None);
    let mut first = Editor::new(opts());
    typed(&mut first, "remember me");
    press(&mut first, KeyCode::Enter, NONE);
    let mut second = Editor::new(opts());
    press(&mut second, KeyCode::Up, NONE);
    assert_eq!(second.text(), "remember me");
    let other = EditorOptions::for_project(dir.path(), &dir.path().join("other"), None);
    let mut elsewhere = Editor::new(other);
    press(&mut elsewhere, KeyCode::Up, NONE);
    assert_eq!(elsewhere.text(), "", "another project has its own history");
}

#[test]
fn a_corrupt_history_file_is_reported_once_and_editing_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().join("proj");
    let path = history_path(dir.path(), &cwd.to_string_lossy());
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, "{\"text\": \"ok\"}\n\u{0}garbage\n").unwrap();
    let mut ed = Editor::new(EditorOptions::for_project(dir.path(), &cwd, None));
    let problems = ed.take_problems();
    assert_eq!(problems.len(), 1);
    assert!(
        problems[0].to_string().contains("line 2"),
        "{}",
        problems[0]
    );
    assert!(ed.take_problems().is_empty());
    press(&mut ed, KeyCode::Up, NONE);
    assert_eq!(ed.text(), "ok");
}

#[test]
fn a_large_paste_shows_as_a_marker_and_submits_in_full() {
    let mut ed = editor();
    typed(&mut ed, "review: ");
    let pasted: String = (1..=312).map(|i| format!("line {i}\r\n")).collect();
    ed.handle_paste(&pasted);
    let v = view(&ed, 80);
    assert_eq!(v.lines[1].text(), "review: [paste #1 +312 lines]");
    let full = format!("review: {}", pasted.replace("\r\n", "\n"));
    assert_eq!(ed.text(), full);
    assert_eq!(
        press(&mut ed, KeyCode::Enter, NONE),
        EditorOutcome::Submit(full.trim().to_string())
    );
}

#[test]
fn backspace_removes_a_paste_marker_whole() {
    let mut ed = editor();
    ed.handle_paste(&"x".repeat(COLLAPSE_CHARS + 5));
    press(&mut ed, KeyCode::Backspace, NONE);
    assert!(ed.is_empty(), "{:?}", ed.text());
}

#[test]
fn a_killed_and_yanked_marker_still_expands() {
    let mut ed = editor();
    let big = "y\n".repeat(20);
    ed.handle_paste(&big);
    press(&mut ed, KeyCode::Char('w'), CTRL);
    assert!(ed.is_empty());
    press(&mut ed, KeyCode::Char('y'), CTRL);
    assert_eq!(ed.text(), big);
}

#[test]
fn a_small_paste_is_inserted_as_is_without_control_characters() {
    let mut ed = editor();
    ed.handle_paste("a\tb\r\nc\u{1b}[2Jd");
    assert_eq!(ed.text(), "a\tb\nc[2Jd");
    let v = view(&ed, 80);
    assert_eq!(v.lines[1].text(), "a    b", "tabs drawn as spaces");
}

#[test]
fn set_text_and_recalled_history_drop_control_characters() {
    let mut ed = editor();
    ed.set_text("a\u{1b}[31mb\r\nc\td");
    assert_eq!(ed.text(), "a[31mb\nc\td");
    typed(&mut ed, "!");
    press(&mut ed, KeyCode::Enter, NONE);
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().join("p");
    let path = history_path(dir.path(), &cwd.display().to_string());
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, "{\"text\": \"x\\u001b[2Jy\"}\n").unwrap();
    let mut ed = Editor::new(EditorOptions::for_project(dir.path(), &cwd, None));
    press(&mut ed, KeyCode::Up, NONE);
    assert_eq!(ed.text(), "x[2Jy");
}

#[test]
fn set_text_replaces_and_puts_the_cursor_at_the_end_without_a_popup() {
    let mut ed = editor();
    ed.set_commands(vec![CommandInfo::new("model", "Pick a model")]);
    ed.set_text("/mo");
    assert!(!ed.has_popup());
    typed(&mut ed, "d");
    assert!(ed.has_popup());
    assert_eq!(ed.text(), "/mod");
    ed.clear();
    assert!(ed.is_empty() && !ed.has_popup());
}

#[test]
fn the_box_scrolls_to_keep_the_cursor_visible() {
    let mut ed = editor();
    let text: Vec<String> = (1..=25).map(|i| format!("l{i}")).collect();
    ed.set_text(&text.join("\n"));
    let v = view(&ed, 40);
    assert_eq!(v.lines.len(), MAX_ROWS + 2);
    assert!(
        v.lines[0].text().contains("↑ 15 more"),
        "{}",
        v.lines[0].text()
    );
    assert_eq!(v.lines[MAX_ROWS].text(), "l25");
    assert_eq!(v.cursor, (MAX_ROWS, 3));
    for _ in 0..12 {
        press(&mut ed, KeyCode::Up, NONE);
    }
    let v = view(&ed, 40);
    assert_eq!(v.lines[1].text(), "l13", "scrolled just enough");
    assert_eq!(v.cursor.0, 1);
    assert!(v.lines[MAX_ROWS + 1].text().contains("↓ 3 more"));
}

#[test]
fn the_cursor_column_counts_wide_characters_as_two_cells() {
    let mut ed = editor();
    typed(&mut ed, "日本x");
    assert_eq!(view(&ed, 40).cursor, (1, 5));
}

#[test]
fn an_empty_editor_shows_the_placeholder_dimmed() {
    let ed = editor();
    let v = view(&ed, 80);
    assert_eq!(v.lines[1].text(), DEFAULT_PLACEHOLDER);
    assert!(v.lines[1].spans[0].style.dim);
    assert_eq!(v.cursor, (1, 0));
}

#[test]
fn the_editor_can_move_to_the_apps_task() {
    fn send<T: Send>(_: &T) {}
    send(&editor());
}
