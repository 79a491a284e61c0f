use super::*;

fn buf(text: &str) -> Buffer {
    let mut b = Buffer::new();
    b.set_text(text);
    b
}

/// The text with `|` at the cursor.
fn show(b: &Buffer) -> String {
    let mut lines = b.lines().to_vec();
    let (r, c) = b.cursor();
    lines[r].insert(c, '|');
    lines.join("\n")
}

#[test]
fn insert_splits_on_newlines_and_keeps_the_tail() {
    let mut b = buf("ab");
    b.left();
    b.insert("1\n2\n3");
    assert_eq!(show(&b), "a1\n2\n3|b");
}

#[test]
fn backspace_and_delete_join_lines_at_the_edges() {
    let mut b = buf("ab\ncd");
    b.home();
    b.backspace();
    assert_eq!(show(&b), "ab|cd");
    b.end();
    b.delete();
    assert_eq!(show(&b), "abcd|");
    b.backspace();
    assert_eq!(show(&b), "abc|");
}

#[test]
fn backspace_at_the_very_start_does_nothing() {
    let mut b = buf("x");
    b.home();
    b.backspace();
    assert_eq!(show(&b), "|x");
}

#[test]
fn left_and_backspace_move_over_whole_graphemes() {
    // "e" + combining acute, a family emoji (ZWJ sequence) and a CJK character.
    let mut b = buf("e\u{301}👨‍👩‍👧日");
    b.left();
    assert_eq!(show(&b), "e\u{301}👨‍👩‍👧|日");
    b.backspace();
    assert_eq!(show(&b), "e\u{301}|日");
    b.backspace();
    assert_eq!(show(&b), "|日");
    b.right();
    assert_eq!(show(&b), "日|");
}

#[test]
fn left_and_right_cross_line_boundaries() {
    let mut b = buf("a\nb");
    b.home();
    b.left();
    assert_eq!(show(&b), "a|\nb");
    b.right();
    assert_eq!(show(&b), "a\n|b");
}

#[test]
fn word_motion_skips_spaces_then_a_word_or_a_punctuation_run() {
    let mut b = buf("foo.bar  baz");
    b.word_left();
    assert_eq!(show(&b), "foo.bar  |baz");
    b.word_left();
    assert_eq!(show(&b), "foo.|bar  baz");
    b.word_left();
    assert_eq!(show(&b), "foo|.bar  baz");
    b.word_left();
    assert_eq!(show(&b), "|foo.bar  baz");
    b.word_right();
    assert_eq!(show(&b), "foo|.bar  baz");
    b.word_right();
    b.word_right();
    assert_eq!(show(&b), "foo.bar|  baz");
    b.word_right();
    assert_eq!(show(&b), "foo.bar  baz|");
}

#[test]
fn word_motion_at_a_line_edge_moves_to_the_neighbouring_line() {
    let mut b = buf("one\ntwo");
    b.home();
    b.word_left();
    assert_eq!(show(&b), "one|\ntwo");
    b.word_right();
    assert_eq!(show(&b), "one\n|two");
}

#[test]
fn kill_word_back_deletes_the_previous_word_and_yank_restores_it() {
    let mut b = buf("git commit -m");
    b.kill_word_back();
    assert_eq!(show(&b), "git commit -|");
    b.kill_word_back();
    assert_eq!(show(&b), "git commit |");
    assert_eq!(b.killed(), "-m", "consecutive kills collect into one");
    b.kill_word_back();
    assert_eq!(show(&b), "git |");
    assert_eq!(b.killed(), "commit -m");
    b.yank();
    assert_eq!(show(&b), "git commit -m|");
}

#[test]
fn a_kill_after_another_edit_replaces_the_kill_buffer() {
    let mut b = buf("one two");
    b.kill_word_back();
    b.insert("x");
    b.kill_word_back();
    assert_eq!(b.killed(), "x");
}

#[test]
fn kill_to_line_start_and_end() {
    let mut b = buf("hello world");
    for _ in 0..5 {
        b.left();
    }
    b.kill_to_line_end();
    assert_eq!(show(&b), "hello |");
    assert_eq!(b.killed(), "world");
    b.kill_to_line_start();
    assert_eq!(show(&b), "|");
    assert_eq!(b.killed(), "hello world");
    b.yank();
    assert_eq!(show(&b), "hello world|");
}

#[test]
fn kill_to_line_end_at_the_end_joins_the_next_line() {
    let mut b = buf("a\nb");
    b.set_cursor(0, 1, false);
    b.kill_to_line_end();
    assert_eq!(show(&b), "a|b");
    assert_eq!(b.killed(), "\n");
}

#[test]
fn kill_word_forward_deletes_the_next_word() {
    let mut b = buf("alpha beta");
    b.home();
    b.kill_word_forward();
    assert_eq!(show(&b), "| beta");
    b.kill_word_forward();
    assert_eq!(show(&b), "|");
    assert_eq!(b.killed(), "alpha beta");
}

#[test]
fn an_atom_is_skipped_and_deleted_whole() {
    let mut b = buf("see [paste #1 +12 lines] ok");
    b.add_atom("[paste #1 +12 lines]".into());
    b.word_left();
    b.word_left();
    assert_eq!(show(&b), "see |[paste #1 +12 lines] ok");
    b.right();
    assert_eq!(show(&b), "see [paste #1 +12 lines]| ok");
    b.left();
    assert_eq!(show(&b), "see |[paste #1 +12 lines] ok");
    b.delete();
    assert_eq!(show(&b), "see | ok");
}

#[test]
fn backspace_or_a_word_kill_into_an_atom_removes_all_of_it() {
    let marker = "[paste #2 1200 chars]";
    let mut b = buf(&format!("x {marker}"));
    b.add_atom(marker.into());
    b.backspace();
    assert_eq!(show(&b), "x |");
    b.set_text(&format!("{marker}tail"));
    b.set_cursor(0, marker.len(), false);
    b.kill_word_back();
    assert_eq!(show(&b), "|tail");
    assert_eq!(b.killed(), marker);
}

#[test]
fn set_cursor_never_lands_inside_an_atom_or_a_grapheme() {
    let mut b = buf("ab[paste #1 +11 lines]日");
    b.add_atom("[paste #1 +11 lines]".into());
    b.set_cursor(0, 5, false);
    assert_eq!(b.cursor(), (0, 2));
    b.set_cursor(0, 5, true);
    assert_eq!(b.cursor(), (0, 22));
    b.set_cursor(0, 23, false);
    assert_eq!(b.cursor(), (0, 22));
    b.set_cursor(9, 99, false);
    assert_eq!(b.cursor(), (0, 25));
}

#[test]
fn replace_in_line_puts_the_cursor_after_the_replacement() {
    let mut b = buf("look at @sr please");
    b.set_cursor(0, 11, false);
    b.replace_in_line(8..11, "@src/ ");
    assert_eq!(show(&b), "look at @src/ | please");
}

#[test]
fn empty_means_one_empty_line() {
    let mut b = buf("\n");
    assert!(!b.is_empty());
    b.clear();
    assert!(b.is_empty());
    assert_eq!(b.text(), "");
}
