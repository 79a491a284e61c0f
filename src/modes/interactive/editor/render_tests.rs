use super::*;
use crate::modes::interactive::editor::completion::CompletionItem;
use crate::modes::interactive::theme::ThemeName;

fn theme(color: bool) -> Theme {
    Theme::new(ThemeName::Dark, color)
}

fn texts(lines: &[Line]) -> Vec<String> {
    lines.iter().map(Line::text).collect()
}

fn buf(text: &str) -> Buffer {
    let mut b = Buffer::new();
    b.set_text(text);
    b
}

#[test]
fn the_box_is_a_border_the_rows_and_a_border() {
    let b = buf("hello\nworld");
    let (lines, cursor) = render_box(&b, "", 10, &theme(true), &Cell::new(0));
    assert_eq!(
        texts(&lines),
        ["──────────", "hello", "world", "──────────"]
    );
    assert_eq!(cursor, (2, 5));
    assert!(lines.iter().all(|l| l.width() <= 10));
    assert_eq!(lines[0].spans[0].style, theme(true).editor_border);
}

#[test]
fn long_lines_soft_wrap_to_the_width() {
    let b = buf("the quick brown fox");
    let (lines, cursor) = render_box(&b, "", 10, &theme(true), &Cell::new(0));
    assert_eq!(texts(&lines[1..3]), ["the quick ", "brown fox"]);
    assert_eq!(cursor, (2, 9));
}

#[test]
fn a_cursor_after_a_full_row_is_drawn_on_the_next_row_not_off_the_edge() {
    let b = buf("abcdefghij");
    let (lines, cursor) = render_box(&b, "", 10, &theme(true), &Cell::new(0));
    assert_eq!(
        texts(&lines),
        ["──────────", "abcdefghij", "", "──────────"]
    );
    assert_eq!(cursor, (2, 0));
}

#[test]
fn scrolling_only_moves_when_the_cursor_would_leave_the_view() {
    let text: Vec<String> = (0..30).map(|i| i.to_string()).collect();
    let mut b = buf(&text.join("\n"));
    let scroll = Cell::new(0);
    render_box(&b, "", 20, &theme(false), &scroll);
    assert_eq!(scroll.get(), 20);
    b.set_cursor(25, 0, false);
    let (lines, cursor) = render_box(&b, "", 20, &theme(false), &scroll);
    assert_eq!(scroll.get(), 20, "still visible: no jump");
    assert_eq!(cursor, (6, 0));
    assert_eq!(lines[0].text(), "── ↑ 20 more ───────");
    b.set_cursor(3, 0, false);
    let (lines, _) = render_box(&b, "", 20, &theme(false), &scroll);
    assert_eq!(scroll.get(), 3);
    assert_eq!(lines[1].text(), "3");
    assert_eq!(lines[MAX_ROWS + 1].text(), "── ↓ 17 more ───────");
}

#[test]
fn paste_markers_are_drawn_in_the_accent_style() {
    let mut b = buf("a [paste #1 +20 lines] b");
    b.add_atom("[paste #1 +20 lines]".into());
    let t = theme(true);
    let (lines, _) = render_box(&b, "", 80, &t, &Cell::new(0));
    let marker = lines[1]
        .spans
        .iter()
        .find(|s| s.text().contains("paste"))
        .expect("a marker span");
    assert_eq!(marker.text(), "[paste #1 +20 lines]");
    assert_eq!(marker.style, t.accent);
}

#[test]
fn a_narrow_terminal_still_gets_lines_no_wider_than_itself() {
    let b = buf("日本語 and more");
    for width in 1..6 {
        let (lines, (row, col)) = render_box(&b, "placeholder", width, &theme(true), &Cell::new(0));
        assert!(
            lines.iter().all(|l| l.width() <= width.max(2)),
            "{width}: {lines:?}"
        );
        assert!(row < lines.len() && col <= width, "{width}");
    }
}

fn popup(n: usize, selected: usize) -> Popup {
    let items = (0..n)
        .map(|i| CompletionItem::new(format!("item{i}")).with_description(format!("about {i}")))
        .collect();
    let mut p = Popup::new(PopupKind::Command, 0, 0..0, items);
    p.selected = selected;
    p
}

#[test]
fn the_popup_shows_at_most_eight_items_around_the_selection_and_counts() {
    let lines = render_popup(&popup(20, 12), 40, &theme(true));
    assert_eq!(lines.len(), MAX_POPUP_ITEMS + 1);
    assert_eq!(lines[0].text(), "  item5   about 5");
    assert_eq!(lines[7].text(), "› item12  about 12");
    assert_eq!(lines[8].text(), "  13/20");
}

#[test]
fn the_selected_item_is_highlighted_and_descriptions_dimmed() {
    let t = theme(false);
    let lines = render_popup(&popup(2, 1), 40, &t);
    let sel = &lines[1];
    assert!(sel.spans[0].style.bold, "selected style under NO_COLOR too");
    let desc = sel.spans.last().unwrap();
    assert_eq!(desc.text(), "about 1");
    assert!(desc.style.dim);
}

#[test]
fn long_descriptions_are_cut_to_the_width_and_flattened() {
    let mut p = popup(1, 0);
    p.items[0].description = Some("a very long\ndescription that goes on and on".into());
    let lines = render_popup(&p, 30, &theme(true));
    assert_eq!(lines[0].width(), 30);
    assert!(lines[0].text().ends_with('…'));
    assert!(!lines[0].text().contains('\n'));
}

#[test]
fn long_labels_keep_their_end() {
    let items = vec![CompletionItem::new(
        "a/very/deeply/nested/path/to/the/file.rs",
    )];
    let p = Popup::new(PopupKind::File, 0, 0..0, items);
    let lines = render_popup(&p, 24, &theme(true));
    assert_eq!(lines[0].text(), "› …d/path/to/the/file.rs");
    assert_eq!(lines[0].width(), 24, "the whole width, no more");
}

#[test]
fn popup_notes_follow_the_items() {
    let mut p = Popup::new(PopupKind::File, 0, 0..0, Vec::new());
    p.note = Some(PopupNote::Searching);
    assert_eq!(
        texts(&render_popup(&p, 40, &theme(true))),
        ["  searching files…"]
    );
}
