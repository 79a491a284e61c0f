//! Property tests of the editor: any sequence of keys and pastes, on text mixing wide, combining
//! and zero-width characters, tabs and paste markers, must leave the editor drawable. The
//! rows cover the text exactly, no drawn line is wider than the terminal, the cursor is inside
//! the box, and the soft-wrap mapping goes from cursor to cell and back. Case counts are fixed
//! and inputs small, so this runs with every `cargo test` in about two seconds.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use proptest::prelude::*;
use unicode_segmentation::UnicodeSegmentation;

use super::layout::{self, str_width};
use super::*;
use crate::modes::interactive::theme::ThemeName;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Pieces that are hard to lay out: wide, combining, ZWJ emoji, tabs, spaces, newlines.
fn piece() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "a",
        "b",
        "Z",
        " ",
        "  ",
        "\t",
        "\n",
        "日",
        "本",
        "e\u{301}",
        "👨‍👩‍👧",
        "é",
        "@",
        "/",
        ".",
        "\\",
        "[paste #1 +12 lines]",
    ])
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 0..40).prop_map(|p| p.concat())
}

#[derive(Debug, Clone)]
enum Input {
    Key(KeyCode, KeyModifiers),
    Paste(String),
    Render(usize),
}

fn input() -> impl Strategy<Value = Input> {
    let none = KeyModifiers::NONE;
    let ctrl = KeyModifiers::CONTROL;
    let alt = KeyModifiers::ALT;
    let shift = KeyModifiers::SHIFT;
    let keys = prop::sample::select(vec![
        (KeyCode::Enter, none),
        (KeyCode::Enter, shift),
        (KeyCode::Enter, alt),
        (KeyCode::Backspace, none),
        (KeyCode::Backspace, alt),
        (KeyCode::Delete, none),
        (KeyCode::Left, none),
        (KeyCode::Right, none),
        (KeyCode::Up, none),
        (KeyCode::Down, none),
        (KeyCode::Left, ctrl),
        (KeyCode::Right, alt),
        (KeyCode::Home, none),
        (KeyCode::End, none),
        (KeyCode::PageUp, none),
        (KeyCode::PageDown, none),
        (KeyCode::Tab, none),
        (KeyCode::Esc, none),
        (KeyCode::Char('w'), ctrl),
        (KeyCode::Char('u'), ctrl),
        (KeyCode::Char('k'), ctrl),
        (KeyCode::Char('y'), ctrl),
        (KeyCode::Char('d'), ctrl),
        (KeyCode::Char('d'), alt),
        (KeyCode::Char('j'), ctrl),
    ]);
    let chars = prop::sample::select(vec!['a', ' ', '日', '@', '/', '\\', 'é', '.']);
    prop_oneof![
        4 => keys.prop_map(|(c, m)| Input::Key(c, m)),
        4 => chars.prop_map(|c| Input::Key(KeyCode::Char(c), KeyModifiers::NONE)),
        1 => text().prop_map(Input::Paste),
        1 => (1usize..12).prop_map(|n| Input::Paste("line\n".repeat(n))),
        1 => (1usize..50).prop_map(Input::Render),
    ]
}

fn check_view(ed: &Editor, width: usize) -> Result<(), TestCaseError> {
    let v = ed.render(width, &Theme::new(ThemeName::Dark, true));
    // A double-width character cannot be cut: a 1-column terminal still gets it whole.
    let limit = width.max(2);
    for l in v.lines.iter().chain(&v.popup) {
        prop_assert!(
            l.width() <= limit,
            "{} > {width}: {:?}",
            l.width(),
            l.text()
        );
        let raw = l.text().contains(['\n', '\t', '\u{1b}']);
        prop_assert!(
            !raw,
            "a control character reaches the screen: {:?}",
            l.text()
        );
    }
    prop_assert!(v.lines.len() <= MAX_ROWS + 2);
    prop_assert!(
        v.cursor.0 > 0 && v.cursor.0 < v.lines.len() - 1,
        "{:?}",
        v.cursor
    );
    prop_assert!(
        v.cursor.1 <= limit,
        "cursor {:?} at width {width}",
        v.cursor
    );
    Ok(())
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn rows_cover_the_text_and_the_cursor_maps_both_ways(t in text(), width in 1usize..20) {
        let lines: Vec<String> = t.split('\n').map(str::to_string).collect();
        let li = lines.len() - 1;
        let cursor = (li, lines[li].len());
        let rows = layout::rows(&lines, width, cursor);
        for (i, line) in lines.iter().enumerate() {
            let mine: Vec<_> = rows.iter().filter(|r| r.line == i).collect();
            prop_assert!(!mine.is_empty());
            prop_assert_eq!(mine[0].start, 0);
            for pair in mine.windows(2) {
                prop_assert_eq!(pair[0].end, pair[1].start, "rows are contiguous");
            }
            prop_assert_eq!(mine[mine.len() - 1].end, line.len());
            for r in &mine {
                let cells = str_width(&line[r.start..r.end], width);
                let one = line[r.start..r.end].graphemes(true).count() <= 1;
                prop_assert!(cells <= width || one, "row {:?} is {} cells", &line[r.start..r.end], cells);
            }
        }
        // Every cursor position is drawn somewhere and found again from its cell.
        for (i, line) in lines.iter().enumerate() {
            let mut stops: Vec<usize> = line.grapheme_indices(true).map(|(b, _)| b).collect();
            stops.push(line.len());
            for b in stops {
                let rows = layout::rows(&lines, width, (i, b));
                let (row, col) = layout::locate(&rows, &lines, (i, b), width);
                prop_assert!(col <= width.max(2));
                prop_assert_eq!(layout::position_at(&rows, &lines, row, col, width), (i, b));
            }
        }
    }
}

proptest! {
    #![proptest_config(config(128))]

    #[test]
    fn any_keys_and_pastes_leave_a_drawable_editor(inputs in prop::collection::vec(input(), 0..60)) {
        let mut ed = Editor::new(EditorOptions {
            cwd: std::path::PathBuf::from("/nonexistent-pi-props"),
            home: None,
            history_file: None,
            notify: None,
        });
        ed.set_commands(vec![CommandInfo::new("model", "Pick"), CommandInfo::new("new", "New")]);
        let mut width = 20;
        for input in inputs {
            match input {
                Input::Key(code, m) => {
                    if let EditorOutcome::Submit(t) | EditorOutcome::FollowUp(t) =
                        ed.handle_key(&KeyEvent::new(code, m))
                    {
                        prop_assert!(!t.is_empty() && t.trim() == t);
                        prop_assert!(ed.is_empty());
                    }
                }
                Input::Paste(p) => ed.handle_paste(&p),
                Input::Render(w) => width = w,
            }
            check_view(&ed, width)?;
        }
    }
}
