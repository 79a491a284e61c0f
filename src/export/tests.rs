//! Rendering tests: every entry kind, hostile text in every field, images, an empty session,
//! each page parsed by a real HTML parser that must report no error and find nothing that
//! loads or runs.

use scraper::{ElementRef, Html, Selector};
use serde_json::json;

use super::test_support::{assistant, chain, header, msg, parse_checked, result, session_of};
use super::{render_html, ExportExtras};
use crate::provider::ToolSpec;
use crate::session::Session;

fn render(s: &Session) -> String {
    let mut out = Vec::new();
    render_html(s, &ExportExtras::default(), &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn select<'a>(doc: &'a Html, css: &str) -> Vec<ElementRef<'a>> {
    let sel = Selector::parse(css).unwrap();
    doc.select(&sel).collect()
}

fn text_of(el: &ElementRef<'_>) -> String {
    el.text().collect()
}

const HOSTILE: &str = "</script><script>alert(1)</script><img src=x onerror=\"alert(2)\">\
                       <a href='https://evil.example/'>x</a> &amp; </style></textarea>\u{1b}]0;t\u{7}";

#[test]
fn hostile_text_in_every_field_renders_as_text() {
    let h = HOSTILE;
    let mut lines = vec![header(h, h)];
    lines.extend(chain(vec![
        json!({"type": "model_change", "provider": h, "modelId": h}),
        json!({"type": "thinking_level_change", "thinkingLevel": h}),
        json!({"type": "message", "id": h, "message": {"role": "user", "content": h, "timestamp": 1}}),
        msg(assistant(json!([
            {"type": "thinking", "thinking": h},
            {"type": "text", "text": h},
            {"type": "toolCall", "id": h, "name": "bash", "arguments": {"command": h}},
            {"type": "toolCall", "id": "c2", "name": h, "arguments": {"x": h}},
            {"type": "toolCall", "id": "c3", "name": "read", "arguments": {"path": h}},
            {"type": h}
        ]))),
        msg(result(h, "bash", h, false)),
        msg(result("c2", h, h, true)),
        msg(json!({"role": "toolResult", "toolCallId": "c3", "toolName": "read",
                   "content": [{"type": "image", "data": h, "mimeType": h},
                               {"type": "image", "data": h, "mimeType": "image/png"}],
                   "isError": false, "timestamp": 1})),
        msg(json!({"role": "bashExecution", "command": h, "output": h, "exitCode": 1,
                   "cancelled": false, "truncated": true, "fullOutputPath": h, "timestamp": 1})),
        msg(json!({"role": h, "content": h, "customType": h, "timestamp": 1})),
        json!({"type": "custom_message", "customType": h, "content": h, "display": true}),
        json!({"type": "compaction", "summary": h, "firstKeptEntryId": "e1", "tokensBefore": 5}),
        json!({"type": "branch_summary", "fromId": "e1", "summary": h}),
        json!({"type": "label", "targetId": h, "label": h}),
        json!({"type": "session_info", "name": h}),
        msg(json!({"role": "assistant", "content": [], "api": h, "provider": h, "model": h,
                   "stopReason": "error", "errorMessage": h, "timestamp": 1})),
    ]));
    let html = render(&session_of(&lines));
    let doc = parse_checked(&html);
    assert_eq!(
        select(&doc, "img").len(),
        0,
        "the hostile image is not embedded"
    );
    assert_eq!(
        select(&doc, "a")
            .iter()
            .filter(|a| text_of(a) == "x")
            .count(),
        0
    );
    // Every field's text is on the page as written (controls made visible).
    let shown = HOSTILE
        .replace('\u{1b}', "\u{241b}")
        .replace('\u{7}', "\u{2407}");
    let body = text_of(&select(&doc, "body")[0]);
    let count = body.matches(&shown).count();
    assert!(count >= 17, "the hostile text shows {count} times:\n{body}");
    assert_eq!(text_of(&select(&doc, "title")[0]), shown);
    // Ids end up only inside attribute values, escaped.
    assert!(
        html.contains(" id=\"entry-&lt;/script&gt;&lt;script&gt;"),
        "{html}"
    );
}

/// The page's CSP allows exactly its one style element, whatever the style holds.
fn assert_csp_allows_only_its_style(doc: &scraper::Html) -> String {
    let csp = select(doc, "meta[http-equiv]")[0]
        .value()
        .attr("content")
        .unwrap()
        .to_string();
    let styles = select(doc, "style");
    assert_eq!(styles.len(), 1);
    use base64::Engine as _;
    use sha2::Digest as _;
    let hash = base64::engine::general_purpose::STANDARD
        .encode(sha2::Sha256::digest(text_of(&styles[0]).as_bytes()));
    assert_eq!(
        csp,
        format!("default-src 'none'; style-src 'sha256-{hash}'; img-src data:; base-uri 'none'; form-action 'none'")
    );
    text_of(&styles[0])
}

#[test]
fn a_themed_page_is_dressed_in_the_theme_and_its_policy_still_allows_only_its_style() {
    let dark = crate::resources::themes::builtin_spec("dark");
    let extras = ExportExtras {
        theme: Some(&dark),
        ..Default::default()
    };
    let mut out = Vec::new();
    render_html(&session_of(&[header("s", "/w")]), &extras, &mut out).unwrap();
    let html = String::from_utf8(out).unwrap();
    let css = assert_csp_allows_only_its_style(&parse_checked(&html));
    let (r, g, b) = dark.color("userMessageBg").rgb().unwrap();
    assert!(
        css.contains(&format!("--user: #{r:02x}{g:02x}{b:02x};"))
            && css.contains("color-scheme: dark;"),
        "{css}"
    );
    // `system` is the terminal's palette, which a page cannot know: the page's own looks.
    let system = crate::resources::themes::builtin_spec(crate::resources::themes::SYSTEM);
    let extras = ExportExtras {
        theme: Some(&system),
        ..Default::default()
    };
    let mut out = Vec::new();
    render_html(&session_of(&[header("s", "/w")]), &extras, &mut out).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        render(&session_of(&[header("s", "/w")]))
    );
}

#[test]
fn the_page_allows_only_its_own_style_and_data_images() {
    let html = render(&session_of(&[header("s", "/w")]));
    let doc = parse_checked(&html);
    // Nothing in the stylesheet fetches anything.
    let css = assert_csp_allows_only_its_style(&doc);
    assert!(!css.contains("url(") && !css.contains("@import"), "{css}");
    assert!(css.contains("prefers-color-scheme: dark") && css.contains("@media print"));
    assert!(html.starts_with(super::page::MARKER));
}

#[test]
fn an_empty_session_renders_a_page_that_says_so() {
    let html = render(&session_of(&[header("0194c2a1", "/home/me/proj")]));
    let doc = parse_checked(&html);
    assert_eq!(text_of(&select(&doc, "h1")[0]), "Session 0194c2a1");
    assert_eq!(
        text_of(&select(&doc, ".empty")[0]),
        "This session has no messages yet."
    );
    assert_eq!(select(&doc, ".entry").len(), 0);
    let info = text_of(&select(&doc, ".info")[0]);
    for fact in [
        "Directory/home/me/proj",
        "Messages0",
        "Tokens0",
        "Cost$0.000",
        "Date2025-02-01 10:00:00 UTC",
    ] {
        assert!(info.contains(fact), "{fact:?} not in {info:?}");
    }
}

#[test]
fn every_entry_kind_is_shown_where_pi_shows_it() {
    let mut lines = vec![header("s", "/w")];
    lines.extend(chain(vec![
        json!({"type": "model_change", "provider": "anthropic", "modelId": "claude-sonnet-4-5"}),
        json!({"type": "thinking_level_change", "thinkingLevel": "high"}),
        msg(json!({"role": "user", "content": "Fix the bug", "timestamp": 1})),
        msg(assistant(json!([
            {"type": "thinking", "thinking": "Let me look."},
            {"type": "text", "text": "Reading it."},
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "src/main.rs", "offset": 10, "limit": 5}}
        ]))),
        msg(result("c1", "read", "fn main() {}", false)),
        msg(json!({"role": "bashExecution", "command": "cargo test", "output": "ok", "exitCode": 0,
                   "cancelled": false, "truncated": false, "timestamp": 1})),
        json!({"type": "custom_message", "customType": "reminder", "content": "shown", "display": true}),
        json!({"type": "custom_message", "customType": "hidden", "content": "not shown", "display": false}),
        msg(json!({"role": "custom", "customType": "todo", "content": "Remember", "display": true, "timestamp": 1})),
        json!({"type": "custom", "customType": "state", "data": {"secret": "extension state"}}),
        json!({"type": "compaction", "summary": "## Goal\nFix it.", "firstKeptEntryId": "e3", "tokensBefore": 48210}),
        json!({"type": "branch_summary", "fromId": "e4", "summary": "Tried another way."}),
        json!({"type": "label", "targetId": "e3", "label": "start"}),
        json!({"type": "session_info", "name": "Fix main"}),
        json!({"type": "future_thing", "payload": "unknown type"}),
    ]));
    let html = render(&session_of(&lines));
    let doc = parse_checked(&html);
    let entry = |id: &str| {
        select(&doc, &format!("#entry-{id}"))
            .first()
            .map(text_of)
            .unwrap_or_default()
    };
    assert!(entry("e1").contains("Switched to model anthropic/claude-sonnet-4-5"));
    assert!(entry("e2").contains("Thinking level high"));
    assert!(
        entry("e3").contains("Fix the bug") && entry("e3").contains("start"),
        "{}",
        entry("e3")
    );
    let e4 = entry("e4");
    for part in [
        "Let me look.",
        "Reading it.",
        "read src/main.rs:10-14",
        "fn main() {}",
    ] {
        assert!(e4.contains(part), "{part:?} not in {e4:?}");
    }
    assert_eq!(
        entry("e5"),
        "",
        "the result is shown with its call, not again"
    );
    assert!(entry("e6").contains("$ cargo test") && entry("e6").contains("ok"));
    assert!(entry("e7").contains("reminder") && entry("e7").contains("shown"));
    assert_eq!(entry("e8"), "", "display: false is not shown");
    assert!(entry("e9").contains("todo") && entry("e9").contains("Remember"));
    assert!(!html.contains("extension state"));
    assert!(
        entry("e11").contains("Compacted from 48,210 tokens") && entry("e11").contains("Fix it.")
    );
    assert!(entry("e12").contains("Branch summary") && entry("e12").contains("Tried another way."));
    assert!(!html.contains("unknown type"));
    assert_eq!(text_of(&select(&doc, "h1")[0]), "Fix main");
    let info = text_of(&select(&doc, ".info")[0]);
    for fact in [
        "Modelsanthropic/claude-sonnet-4-5",
        "Messages1 user, 1 assistant, 1 tool results, 2 custom, 1 compactions, 1 branch summaries",
        "Tool calls1",
        "Tokens↑1.2k ↓85",
        "Cost$0.005",
    ] {
        assert!(info.contains(fact), "{fact:?} not in {info:?}");
    }
    // Thinking is folded but open; the compaction's summary is folded closed.
    assert!(select(&doc, "details.thinking[open]").len() == 1);
    assert!(select(&doc, ".compaction details:not([open])").len() == 1);
}

#[test]
fn tool_calls_show_their_results_status_and_folded_output() {
    let long: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    let mut lines = vec![header("s", "/w")];
    lines.extend(chain(vec![
        msg(assistant(json!([
            {"type": "toolCall", "id": "ok", "name": "bash", "arguments": {"command": "seq 30"}},
            {"type": "toolCall", "id": "bad", "name": "edit", "arguments": {"path": "a.rs"}},
            {"type": "toolCall", "id": "diff", "name": "edit", "arguments": {"path": "b.rs"}},
            {"type": "toolCall", "id": "none", "name": "my_tool", "arguments": {"depth": 2}},
            {"type": "toolCall", "id": "w", "name": "write", "arguments": {"path": "c.rs", "content": "x"}}
        ]))),
        msg(result("ok", "bash", &long, false)),
        msg(result("bad", "edit", "No match for oldText", true)),
        msg(json!({"role": "toolResult", "toolCallId": "diff", "toolName": "edit",
                   "content": [{"type": "text", "text": "Edited"}], "details": {"diff": " 1 a\n-2 b\n+2 c"},
                   "isError": false, "timestamp": 1})),
        msg(result("w", "write", "Wrote c.rs", false)),
        msg(result("elsewhere", "grep", "orphan output", false)),
    ]));
    let html = render(&session_of(&lines));
    let doc = parse_checked(&html);
    let tools = select(&doc, ".tool");
    let classes: Vec<_> = tools
        .iter()
        .map(|t| t.value().attr("class").unwrap())
        .collect();
    assert_eq!(
        classes,
        [
            "tool ok",
            "tool error",
            "tool ok",
            "tool pending",
            "tool ok",
            "tool ok"
        ]
    );
    let bash = text_of(&tools[0]);
    assert!(bash.contains("line 5") && bash.contains("25 more lines") && bash.contains("line 30"));
    assert_eq!(select(&doc, ".tool details").len(), 1);
    assert!(text_of(&tools[1]).contains("No match for oldText"));
    assert_eq!(select(&doc, ".output.error").len(), 1);
    assert_eq!(select(&doc, ".diff .add").len(), 1);
    assert_eq!(select(&doc, ".diff .del").len(), 1);
    assert!(text_of(&tools[3]).contains("\"depth\": 2"));
    assert!(text_of(&tools[3]).contains("No result was recorded"));
    assert!(text_of(&tools[4]).contains("Wrote c.rs"));
    assert!(
        text_of(&tools[5]).contains("grep result of call elsewhere")
            && text_of(&tools[5]).contains("orphan output")
    );
}

#[test]
fn images_are_embedded_as_data_uris() {
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    let mut lines = vec![header("s", "/w")];
    lines.extend(chain(vec![
        msg(json!({"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image", "data": png, "mimeType": "image/png"}], "timestamp": 1})),
        msg(assistant(json!([{"type": "toolCall", "id": "r", "name": "read", "arguments": {"path": "shot.jpg"}}]))),
        msg(json!({"role": "toolResult", "toolCallId": "r", "toolName": "read",
                   "content": [{"type": "text", "text": "Read image file [image/jpeg]"}, {"type": "image", "data": "/9j/4AAQ", "mimeType": "image/jpeg"}],
                   "isError": false, "timestamp": 1})),
        json!({"type": "custom_message", "customType": "snap", "display": true,
               "content": [{"type": "image", "data": "R0lGODlh", "mimeType": "image/gif"}]}),
    ]));
    let doc = parse_checked(&render(&session_of(&lines)));
    let srcs: Vec<_> = select(&doc, "img")
        .iter()
        .map(|i| i.value().attr("src").unwrap().to_string())
        .collect();
    assert_eq!(
        srcs,
        [
            format!("data:image/png;base64,{png}"),
            "data:image/jpeg;base64,/9j/4AAQ".to_string(),
            "data:image/gif;base64,R0lGODlh".to_string()
        ]
    );
}

#[test]
fn only_the_active_branch_is_shown() {
    let mut lines = vec![header("s", "/w")];
    lines.extend(chain(vec![
        msg(json!({"role": "user", "content": "root question", "timestamp": 1})),
        msg(json!({"role": "user", "content": "abandoned path", "timestamp": 1})),
    ]));
    lines.push(json!({"type": "message", "id": "k", "parentId": "e1", "timestamp": "2025-02-01T10:01:00.000Z",
                      "message": {"role": "user", "content": "kept path", "timestamp": 1}}));
    let html = render(&session_of(&lines));
    let doc = parse_checked(&html);
    assert!(html.contains("root question") && html.contains("kept path"));
    assert!(!html.contains("abandoned path"));
    assert!(text_of(&select(&doc, ".info")[0]).contains("the active branch: 2 of 3 entries"));
}

#[test]
fn a_skill_invocation_is_folded_and_the_users_words_shown() {
    let text = "<skill name=\"review\" location=\"/s/SKILL.md\">\nStep one.\n</skill>\n\nReview my change.";
    let mut lines = vec![header("s", "/w")];
    lines.extend(chain(vec![msg(
        json!({"role": "user", "content": text, "timestamp": 1}),
    )]));
    let doc = parse_checked(&render(&session_of(&lines)));
    let skill = select(&doc, "details.skill");
    assert_eq!(skill.len(), 1);
    assert!(
        text_of(&skill[0]).contains("Skill review") && text_of(&skill[0]).contains("Step one.")
    );
    assert!(text_of(&select(&doc, "#entry-e1")[0]).contains("Review my change."));
}

/// The page for `fixtures/sessions/export-html.jsonl` (a fix-a-bug session with every kind of
/// entry, a branch, images and hostile text) is `export-html.golden.html`, byte for byte.
/// After an intended change, `PI_UPDATE_GOLDEN=1 cargo test --lib export` rewrites it; review
/// the diff and look at the page in a browser before committing it.
#[test]
fn the_fixture_session_renders_as_the_golden_page() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sessions");
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("export-html.jsonl");
    std::fs::copy(fixtures.join("export-html.jsonl"), &copy).unwrap();
    let (session, warnings) = Session::open(&copy, "/w").unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let tools = [ToolSpec {
        name: "read".into(),
        description: "Read a file.".into(),
        parameters: json!({"type": "object", "required": ["path"], "properties": {
            "path": {"type": "string", "description": "Path to the file"},
            "offset": {"type": "number", "description": "Line to start at"}}}),
        constrained_sampling: None,
    }];
    let extras = ExportExtras {
        system_prompt: Some("You are pi, a coding agent.\nWork in /home/me/proj."),
        tools: &tools,
        theme: None,
    };
    let mut out = Vec::new();
    render_html(&session, &extras, &mut out).unwrap();
    let html = String::from_utf8(out).unwrap();
    parse_checked(&html);
    let golden = fixtures.join("export-html.golden.html");
    if std::env::var_os("PI_UPDATE_GOLDEN").is_some() {
        std::fs::write(&golden, &html).unwrap();
    }
    let expected = std::fs::read_to_string(&golden).unwrap();
    if html != expected {
        let line = html
            .lines()
            .zip(expected.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| html.lines().count().min(expected.lines().count()));
        panic!(
            "the page differs from {} from line {}:\n got: {:?}\nwant: {:?}\n\
             (PI_UPDATE_GOLDEN=1 rewrites it after an intended change)",
            golden.display(),
            line + 1,
            html.lines().nth(line),
            expected.lines().nth(line)
        );
    }
}

#[test]
fn a_live_sessions_system_prompt_and_tools_are_shown_folded() {
    let tools = [
        ToolSpec {
            name: "bash".into(),
            description: format!("Run a command {HOSTILE}"),
            parameters: json!({"type": "object", "required": ["command"], "properties": {
                "command": {"type": "string", "description": "The command"},
                "timeout": {"type": ["number", "null"]},
                HOSTILE: {"description": HOSTILE}}}),
            constrained_sampling: None,
        },
        ToolSpec {
            name: "noop".into(),
            description: "Does nothing.".into(),
            parameters: json!({"type": "object", "properties": {}}),
            constrained_sampling: None,
        },
    ];
    let prompt = format!("You are pi.\n{HOSTILE}");
    let extras = ExportExtras {
        system_prompt: Some(&prompt),
        tools: &tools,
        theme: None,
    };
    let mut out = Vec::new();
    render_html(&session_of(&[header("s", "/w")]), &extras, &mut out).unwrap();
    let doc = parse_checked(&String::from_utf8(out).unwrap());
    let prompt_box = select(&doc, "details.prompt:not([open])");
    assert_eq!(prompt_box.len(), 1);
    assert!(text_of(&prompt_box[0]).starts_with("System prompt · 2 lines"));
    let shown = HOSTILE
        .replace('\u{1b}', "\u{241b}")
        .replace('\u{7}', "\u{2407}");
    assert!(text_of(&prompt_box[0]).contains(&shown));
    let list = text_of(&select(&doc, "details.tools-list:not([open])")[0]);
    for part in [
        "Available tools · 2",
        "command string, required — The command",
        "timeout number | null, optional",
        "Does nothing.",
    ] {
        assert!(list.contains(part), "{part:?} not in {list:?}");
    }
    assert_eq!(list.matches(&shown).count(), 3, "{list}");
    assert_eq!(
        select(&doc, ".params").len(),
        1,
        "no list for a tool without parameters"
    );

    // Without them (an export from a file), neither is there.
    let mut out = Vec::new();
    render_html(
        &session_of(&[header("s", "/w")]),
        &ExportExtras::default(),
        &mut out,
    )
    .unwrap();
    let doc = parse_checked(&String::from_utf8(out).unwrap());
    assert!(select(&doc, ".prompt, .tools-list").is_empty());
}

/// pi 1.6's system messages: the first on the branch is the whole prompt with its tools, a
/// later one an update naming what it changes; the live prompt is not shown again on top.
#[test]
fn a_sessions_declared_prompt_shows_where_it_was_declared_and_each_change_as_an_update() {
    let mut lines = vec![header("s", "/w")];
    lines.extend(chain(vec![
        msg(
            json!({"role": "system", "content": "", "sections": {"preamble": "You are pi.",
            "cwd": "<cwd>\n/w\n</cwd>"}, "timestamp": 1, "toolsAdded": [
            {"name": "read", "description": "Read", "parameters": {"type": "object"}}]}),
        ),
        msg(json!({"role": "user", "content": "hi", "timestamp": 2})),
        msg(
            json!({"role": "system", "content": "", "sections": {"cwd": "<cwd>\n/x\n</cwd>",
            "skills": null}, "timestamp": 3, "toolsAdded": [
            {"name": "grep", "description": "Find", "parameters": {"type": "object"}}],
            "toolsRemoved": [{"name": "read"}]}),
        ),
    ]));
    let extras = ExportExtras {
        system_prompt: Some("LIVE PROMPT"),
        tools: &[],
        theme: None,
    };
    let mut out = Vec::new();
    render_html(&session_of(&lines), &extras, &mut out).unwrap();
    let html = String::from_utf8(out).unwrap();
    let doc = parse_checked(&html);
    assert!(
        !html.contains("LIVE PROMPT"),
        "the declared prompt replaces the live one"
    );
    let boxes = select(&doc, "details.prompt");
    assert_eq!(boxes.len(), 2);
    let first = text_of(&boxes[0]);
    assert!(first.starts_with("System prompt"), "{first}");
    assert!(
        first.contains("You are pi.") && first.contains("Available tools: read"),
        "{first}"
    );
    let update = text_of(&boxes[1]);
    assert!(
        update.starts_with("System prompt update: cwd, -skills, tools +grep -read"),
        "{update}"
    );
    assert!(
        update.contains("Updated system prompt section \"cwd\":"),
        "{update}"
    );
    assert!(
        update.contains("Removed system prompt section \"skills\"."),
        "{update}"
    );
}
