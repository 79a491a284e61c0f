use proptest::prelude::*;
use unicode_width::UnicodeWidthStr;

use super::*;
use crate::modes::interactive::text::Style;
use crate::modes::interactive::theme::ThemeName;

fn dark() -> Theme {
    Theme::new(ThemeName::Dark, true)
}

fn texts(lines: &[Line]) -> Vec<String> {
    lines.iter().map(Line::text).collect()
}

fn md(text: &str, width: usize) -> Vec<String> {
    texts(&render(text, width, &dark()))
}

/// The style of the first span whose text contains `needle`.
fn style_of(lines: &[Line], needle: &str) -> Style {
    lines
        .iter()
        .flat_map(|l| &l.spans)
        .find(|s| s.text().contains(needle))
        .map(|s| s.style)
        .unwrap_or_else(|| panic!("{needle:?} not in {:?}", texts(lines)))
}

#[test]
fn headings_paragraphs_and_emphasis_use_theme_roles() {
    let t = dark();
    let lines = render(
        "# Title\n\nSome *soft* and **strong** and ~~gone~~ `code`.\n\n### Third",
        80,
        &t,
    );
    assert_eq!(
        texts(&lines),
        [
            "# Title",
            "",
            "Some soft and strong and gone code.",
            "",
            "### Third"
        ]
    );
    assert_eq!(style_of(&lines, "Title"), t.heading.underline());
    assert_eq!(style_of(&lines, "Third"), t.heading);
    assert!(style_of(&lines, "soft").italic);
    assert!(style_of(&lines, "strong").bold);
    assert!(style_of(&lines, "gone").strike);
    assert_eq!(style_of(&lines, "code"), t.inline_code);
}

#[test]
fn paragraphs_reflow_soft_breaks_and_keep_hard_breaks() {
    assert_eq!(
        md("one\ntwo  \nthree\\\nfour", 80),
        ["one two", "three", "four"]
    );
    assert_eq!(
        md("alpha beta gamma delta", 11),
        ["alpha beta", "gamma delta"]
    );
}

#[test]
fn links_show_the_address_dimmed_only_when_it_differs() {
    let t = dark();
    let lines = render(
        "see [the docs](https://x.dev/d) or <https://y.dev> or <a@b.c>",
        80,
        &t,
    );
    assert_eq!(
        texts(&lines),
        ["see the docs (https://x.dev/d) or https://y.dev or a@b.c"]
    );
    assert_eq!(style_of(&lines, "the docs"), t.link);
    assert_eq!(style_of(&lines, "(https://x.dev/d)"), t.muted);
}

#[test]
fn images_show_their_alt_text_and_address() {
    assert_eq!(md("![a cat](cat.png)", 80), ["[image: a cat] (cat.png)"]);
}

#[test]
fn block_quotes_have_a_bar_on_every_row_including_wrapped_ones() {
    let t = dark();
    let lines = render("> quoted words that wrap\n>\n> second", 12, &t);
    assert_eq!(
        texts(&lines),
        ["│ quoted", "│ words that", "│ wrap", "│", "│ second"]
    );
    assert!(style_of(&lines, "quoted").italic);
    // The theme's quote colour, not body text's; the bar is `mdQuoteBorder`.
    assert_eq!(style_of(&lines, "quoted").fg, t.quote.fg);
    assert_eq!(style_of(&lines, "│").fg, t.quote_border.fg);
}

#[test]
fn lists_nest_with_hanging_indentation() {
    let text = "- first item that wraps\n  - nested one\n- second\n\n3. three\n4. four";
    assert_eq!(
        md(text, 16),
        [
            "• first item",
            "  that wraps",
            "  ◦ nested one",
            "• second",
            "",
            "3. three",
            "4. four",
        ]
    );
}

#[test]
fn ordered_markers_are_aligned_so_item_text_lines_up() {
    let text: String = (1..=10).map(|n| format!("{n}. item\n")).collect();
    let lines = md(&text, 80);
    assert_eq!(lines[0], " 1. item");
    assert_eq!(lines[9], "10. item");
}

#[test]
fn loose_lists_keep_a_blank_line_between_items() {
    assert_eq!(md("- a\n\n- b", 80), ["• a", "", "• b"]);
}

#[test]
fn task_lists_show_their_boxes() {
    assert_eq!(
        md("- [x] done\n- [ ] todo", 80),
        ["• [x] done", "• [ ] todo"]
    );
}

#[test]
fn rules_span_the_width() {
    assert_eq!(md("a\n\n---\n\nb", 5), ["a", "", "─────", "", "b"]);
}

#[test]
fn fenced_code_has_a_border_and_gutter_and_is_highlighted() {
    let t = dark();
    let lines = render("```rust\nfn main() {\n    let x = 1;\n}\n```", 80, &t);
    assert_eq!(
        texts(&lines),
        ["╭─ rust", "│ fn main() {", "│     let x = 1;", "│ }", "╰─"]
    );
    let coloured = lines[1..4]
        .iter()
        .flat_map(|l| &l.spans)
        .filter(|s| !s.text().starts_with('│'))
        .filter(|s| matches!(s.style.fg, Some(crossterm::style::Color::Rgb { .. })))
        .count();
    assert!(coloured >= 2, "{lines:?}");
    assert_eq!(style_of(&lines, "╭─"), t.code_border);
}

#[test]
fn unknown_language_and_indented_code_use_the_plain_code_style() {
    let t = dark();
    let lines = render("```klingon\nqapla'\n```\n\n    indented\n", 80, &t);
    assert_eq!(
        texts(&lines),
        ["╭─ klingon", "│ qapla'", "╰─", "", "╭─", "│ indented", "╰─"]
    );
    assert_eq!(style_of(&lines, "qapla"), t.code_block);
    assert_eq!(style_of(&lines, "indented"), t.code_block);
}

#[test]
fn long_code_lines_wrap_under_the_gutter_and_tabs_expand() {
    let lines = md("```\nabcdefghij\n\tx\n```", 6);
    assert_eq!(
        lines,
        ["╭─", "│ abcd", "│ efgh", "│ ij", "│     ", "│ x", "╰─"]
    );
}

#[test]
fn no_color_output_has_no_colour_at_all() {
    let t = Theme::new(ThemeName::Dark, false);
    let text = "# H\n\n[l](u) `c` > q\n\n```rust\nfn main() {}\n```\n\n| a |\n|---|\n| b |\n";
    for line in render(text, 40, &t) {
        for s in &line.spans {
            assert!(s.style.fg.is_none() && s.style.bg.is_none(), "{s:?}");
        }
    }
    // Code is still told apart without colour: the gutter is there.
    assert!(md("```rust\nfn x() {}\n```", 40).contains(&"│ fn x() {}".to_string()));
}

#[test]
fn tables_fit_their_columns_and_bold_the_header() {
    let t = dark();
    let lines = render("| name | n |\n|:-----|--:|\n| ab | 1 |\n| c | 22 |", 80, &t);
    assert_eq!(
        texts(&lines),
        ["name │  n", "─────┼───", "ab   │  1", "c    │ 22"]
    );
    assert!(style_of(&lines, "name").bold);
    assert!(!style_of(&lines, "ab").bold);
    assert_eq!(style_of(&lines, "─┼─"), t.table_border);
}

#[test]
fn tables_wider_than_the_terminal_wrap_their_cells() {
    let text = "| key | description |\n|---|---|\n| a | one two three four five six |";
    let lines = md(text, 20);
    assert!(
        lines
            .iter()
            .all(|l| UnicodeWidthStr::width(l.as_str()) <= 20),
        "{lines:?}"
    );
    assert_eq!(lines[0], "key │ description");
    assert!(lines.len() > 3, "{lines:?}");
    let body: String = lines[2..].join(" ");
    for w in ["one", "two", "three", "four", "five", "six"] {
        assert!(body.contains(w), "{w} lost: {lines:?}");
    }
}

#[test]
fn tables_too_narrow_for_their_columns_are_cut_with_an_ellipsis() {
    let lines = md("| a | b | c |\n|---|---|---|\n| 1 | 2 | 3 |", 6);
    assert!(lines
        .iter()
        .all(|l| UnicodeWidthStr::width(l.as_str()) <= 6));
    assert!(lines[0].ends_with('…'), "{lines:?}");
}

#[test]
fn raw_html_is_shown_as_text() {
    assert_eq!(
        md("<div>\nhi\n</div>\n\na <b>bold</b> word", 80),
        ["<div>", "hi", "</div>", "", "a <b>bold</b> word"]
    );
}

#[test]
fn control_characters_are_shown_not_sent_to_the_terminal() {
    let lines = md("evil \u{1b}[2J text\n\n```\n\u{1b}]0;x\u{7}\n```", 80);
    let all = lines.join("\n");
    assert!(!all.chars().any(|c| c.is_control() && c != '\n'), "{all:?}");
    assert!(all.contains("␛[2J"));
}

#[test]
fn rows_stay_within_the_width_where_wrap_and_width_disagree() {
    // U+FE0F makes the heart two columns wide for `Line::width` but not for per-character
    // widths, which `text::wrap` uses.
    let text = "\u{2764}\u{FE0F}".repeat(30);
    for width in 1..12 {
        for l in render(&text, width, &dark()) {
            assert!(l.width() <= width, "{:?} at {width}", l.text());
        }
    }
}

#[test]
fn crlf_input_renders_like_lf() {
    assert_eq!(
        md("# a\r\n\r\n- b\r\n- c\r\n", 80),
        md("# a\n\n- b\n- c\n", 80)
    );
}

#[test]
fn reference_links_resolve_from_earlier_blocks_and_definitions_stay_visible() {
    let lines = md("[d]: https://d.dev\n\nsee [docs][d]", 80);
    assert_eq!(
        lines,
        ["[d]: https://d.dev", "", "see docs (https://d.dev)"]
    );
}

#[test]
fn render_code_previews_a_file_with_its_language() {
    let t = dark();
    let lang = crate::modes::interactive::highlight::language_for_path("x.py");
    let lines = render_code("def f():\n    return 1\n", lang.as_deref(), 40, &t);
    assert_eq!(
        texts(&lines),
        ["╭─ python", "│ def f():", "│     return 1", "╰─"]
    );
    assert!(lines[1]
        .spans
        .iter()
        .any(|s| s.style.fg.is_some() && s.text() == "def"));
}

// ---- streaming ----

fn stream_all(
    text: &str,
    cuts: &[usize],
    width: usize,
    theme: &Theme,
) -> (Vec<Line>, MarkdownStream) {
    let mut s = MarkdownStream::new();
    let mut out = Vec::new();
    let mut prev = 0;
    for &c in cuts {
        let c = c.min(text.len());
        if c < prev || !text.is_char_boundary(c) {
            continue;
        }
        s.push(&text[prev..c]);
        out.extend(s.take_stable(width, theme));
        for l in s.render_tail(width, theme) {
            assert!(l.width() <= width);
        }
        prev = c;
    }
    s.push(&text[prev..]);
    out.extend(s.finish(width, theme));
    (out, s)
}

#[test]
fn a_paragraph_is_held_back_until_the_next_block_starts() {
    let t = dark();
    let mut s = MarkdownStream::new();
    s.push("Title\n");
    assert!(s.take_stable(80, &t).is_empty());
    assert_eq!(texts(&s.render_tail(80, &t)), ["Title"]);
    // It became a setext heading: nothing of the paragraph went out. The heading itself goes
    // out once a line of the next block is complete.
    s.push("===\n\nbody");
    assert!(s.take_stable(80, &t).is_empty());
    assert_eq!(texts(&s.render_tail(80, &t)), ["# Title", "", "body"]);
    s.push("\n");
    assert_eq!(texts(&s.take_stable(80, &t)), ["# Title"]);
    assert_eq!(texts(&s.render_tail(80, &t)), ["", "body"]);
    assert_eq!(texts(&s.finish(80, &t)), ["", "body"]);
}

#[test]
fn a_list_stays_open_across_blank_lines_until_something_else_starts() {
    let t = dark();
    let mut s = MarkdownStream::new();
    s.push("- a\n\n");
    assert!(s.take_stable(80, &t).is_empty());
    s.push("- b\n\nafter\n");
    assert_eq!(texts(&s.take_stable(80, &t)), ["• a", "", "• b"]);
    assert_eq!(texts(&s.finish(80, &t)), ["", "after"]);
}

#[test]
fn code_block_lines_go_out_as_they_complete() {
    let t = dark();
    let mut s = MarkdownStream::new();
    s.push("Intro:\n```python\nx = 1\ny = ");
    assert_eq!(
        texts(&s.take_stable(80, &t)),
        ["Intro:", "", "╭─ python", "│ x = 1"]
    );
    assert_eq!(texts(&s.render_tail(80, &t)), ["│ y = ", "╰─"]);
    s.push("2\n``");
    assert_eq!(texts(&s.take_stable(80, &t)), ["│ y = 2"]);
    // "``" is not a closing fence yet and may never be one.
    assert_eq!(texts(&s.render_tail(80, &t)), ["│ ``", "╰─"]);
    s.push("`\nbye");
    assert_eq!(texts(&s.take_stable(80, &t)), ["╰─"]);
    assert_eq!(texts(&s.render_tail(80, &t)), ["", "bye"]);
    assert_eq!(texts(&s.finish(80, &t)), ["", "bye"]);
}

#[test]
fn streamed_code_is_highlighted_like_the_whole_render() {
    let t = dark();
    let text = "```rust\nfn a() {}\n/* open\nstill comment */\nlet x = 1;\n```\n";
    let (streamed, _) = stream_all(text, &(1..text.len()).collect::<Vec<_>>(), 40, &t);
    assert_eq!(streamed, render(text, 40, &t));
}

#[test]
fn each_block_is_handed_out_once() {
    let t = dark();
    let mut s = MarkdownStream::new();
    s.push("# A\n\npara\n\n# B\n");
    let first = texts(&s.take_stable(80, &t));
    assert_eq!(first, ["# A", "", "para"]);
    assert!(s.take_stable(80, &t).is_empty());
    assert_eq!(texts(&s.finish(80, &t)), ["", "# B"]);
}

#[test]
fn streaming_a_100kb_answer_parses_each_byte_a_bounded_number_of_times() {
    let t = dark();
    let mut doc = String::new();
    let mut k = 0;
    while doc.len() < 100_000 {
        k += 1;
        doc.push_str(&format!(
            "## Section {k}\n\nSome *prose* with `code` and a [link](https://e.com/{k}) that \
             runs on for a while so the paragraph wraps at least once or twice.\n\n\
             - item one\n- item two\n  - nested\n\n\
             | a | b |\n|---|---|\n| {k} | x |\n\n\
             ```rust\nfn f{k}() -> u32 {{\n    {k}\n}}\n```\n\n"
        ));
    }
    let mut s = MarkdownStream::new();
    let mut streamed = Vec::new();
    let bytes = doc.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        let mut end = (at + 20).min(bytes.len());
        while !doc.is_char_boundary(end) {
            end += 1;
        }
        s.push(&doc[at..end]);
        streamed.extend(s.take_stable(100, &t));
        let _ = s.render_tail(100, &t);
        at = end;
    }
    streamed.extend(s.finish(100, &t));
    let parsed = s.parsed_bytes();
    // Re-parsing everything per delta would be ~5,000 × 50 KB; a parse per block is a few × 100 KB.
    assert!(
        parsed <= 16 * doc.len() as u64,
        "parsed {parsed} bytes for a {} byte answer",
        doc.len()
    );
    // Code lines are highlighted once each, never per delta.
    assert!(s.highlighted_bytes() <= 2 * doc.len() as u64);
    assert_eq!(streamed, render(&doc, 100, &t));
}

fn check_invariant(text: &str, cuts: &[usize], width: usize) -> Result<(), TestCaseError> {
    let t = dark();
    let whole = render(text, width, &t);
    for l in &whole {
        prop_assert!(l.width() <= width, "{:?} wider than {width}", l.text());
        prop_assert!(!l.text().contains('\n'));
    }
    let (streamed, _) = stream_all(text, cuts, width, &t);
    prop_assert_eq!(
        texts(&streamed),
        texts(&whole),
        "text {:?} cuts {:?}",
        text,
        cuts
    );
    prop_assert_eq!(streamed, whole);
    Ok(())
}

/// Markdown-ish text: the characters and line starts that make block structure.
fn markdownish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("\n".to_string()),
        Just("\n\n".to_string()),
        Just("```".to_string()),
        Just("~~~".to_string()),
        Just("```rust\n".to_string()),
        Just("- ".to_string()),
        Just("1. ".to_string()),
        Just("> ".to_string()),
        Just("# ".to_string()),
        Just("  ".to_string()),
        Just("    ".to_string()),
        Just("---".to_string()),
        Just("===".to_string()),
        Just("| a | b |".to_string()),
        Just("|---|---|".to_string()),
        Just("[x]: /u".to_string()),
        Just("[x]".to_string()),
        Just("\"t".to_string()),
        Just("<div>".to_string()),
        Just("*".to_string()),
        Just("`".to_string()),
        Just("\t".to_string()),
        Just("\r".to_string()),
        Just("  - ".to_string()),
        Just("   ```".to_string()),
        Just("\\".to_string()),
        Just("**".to_string()),
        Just("_".to_string()),
        Just("<!--".to_string()),
        Just("-->".to_string()),
        Just("[l](u)".to_string()),
        Just("<https://a.b>".to_string()),
        Just("| - |".to_string()),
        Just("[x]:\n/u\n\"t\"".to_string()),
        Just("* * *".to_string()),
        Just("2) ".to_string()),
        Just("- [ ] ".to_string()),
        "[a-z ]{1,8}",
        "[日本語é😀]{1,2}",
    ];
    prop::collection::vec(piece, 0..40).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn streaming_matches_the_whole_render_for_markdownish_text(
        text in markdownish(),
        mut cuts in prop::collection::vec(0usize..400, 0..12),
        width in 1usize..60,
    ) {
        cuts.sort_unstable();
        check_invariant(&text, &cuts, width)?;
    }

    #[test]
    fn arbitrary_text_never_panics_and_never_overflows_the_width(
        text in any::<String>(),
        mut cuts in prop::collection::vec(0usize..200, 0..8),
        width in 1usize..100,
    ) {
        cuts.sort_unstable();
        check_invariant(&text, &cuts, width)?;
    }
}

#[test]
fn a_stream_can_move_to_another_thread() {
    // The app may render on a worker so a first highlight of a language never stalls input.
    fn send<T: Send>(t: T) -> T {
        t
    }
    let mut s = send(MarkdownStream::new());
    s.push("x");
    let handle = std::thread::spawn(move || s.finish(10, &dark()));
    let lines = handle.join().unwrap_or_default();
    assert_eq!(texts(&lines), ["x"]);
}

#[test]
fn a_definition_right_after_a_list_does_not_reach_back_into_it() {
    // pulldown-cmark's range for a list runs on over the definitions after it; the list was
    // handed out before the definition was complete, so the whole render must not use it.
    let text = "- a\n  - b [x]\n  ```\n[x]:\n/u\nz";
    let t = dark();
    let (streamed, _) = stream_all(text, &[text.find("/u").unwrap_or(0)], 40, &t);
    assert_eq!(texts(&streamed), texts(&render(text, 40, &t)));
    assert_eq!(md(text, 40)[1], "  ◦ b [x]");
}
