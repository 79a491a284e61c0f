use super::*;
use crate::modes::interactive::theme::ThemeName;
use serde_json::json;

fn msg(id: &str, parent: Option<&str>, role: &str, text: &str) -> Value {
    json!({"type": "message", "id": id, "parentId": parent,
        "message": {"role": role, "content": [{"type": "text", "text": text}]}})
}

fn node(entry: Value, children: Vec<Value>) -> Value {
    json!({"entry": entry, "children": children})
}

/// The session 1.6 showed in tmux: a model and thinking change, the system message, then
/// `first question` → `answer one` → `second question` → `answer two` (titled), and a
/// second branch from the system message, `third q` → `answer three`, where the session is.
fn sample() -> Value {
    let title = json!({"type": "session_info", "id": "t", "parentId": "a2", "name": "my sess"});
    let a2 = node(
        msg("a2", Some("u2"), "assistant", "answer two"),
        vec![node(title, vec![])],
    );
    let u2 = node(msg("u2", Some("a1"), "user", "second question"), vec![a2]);
    let a1 = node(msg("a1", Some("u1"), "assistant", "answer one"), vec![u2]);
    let u1 = node(msg("u1", Some("sys"), "user", "first question"), vec![a1]);
    let a3 = node(msg("a3", Some("u3"), "assistant", "answer three"), vec![]);
    let u3 = node(msg("u3", Some("sys"), "user", "third q"), vec![a3]);
    let sys = node(msg("sys", Some("th"), "system", "You are"), vec![u1, u3]);
    let th = json!({"type": "thinking_level_change", "id": "th", "parentId": "m", "thinkingLevel": "off"});
    let m = json!({"type": "model_change", "id": "m", "parentId": null, "modelId": "mock-model"});
    json!([node(m, vec![node(th, vec![sys])])])
}

fn rows(v: &TreeView) -> Vec<String> {
    let theme = Theme::new(ThemeName::Dark, false);
    v.rows(100, &theme).iter().map(Line::text).collect()
}

fn press(v: &mut TreeView, code: KeyCode, m: KeyModifiers) -> TreeKey {
    v.handle_key(KeyEvent::new(code, m))
}

#[test]
fn the_tree_reads_as_in_pi_with_the_current_branch_first() {
    let v = TreeView::new(&sample(), Some("a3"), 30, None);
    assert_eq!(
        rows(&v),
        [
            "  • [system]",
            "  ├⊟ • user: third q",
            "› │     • assistant: answer three",
            "  └⊟ user: first question",
            "        assistant: answer one",
            "        user: second question",
            "        assistant: answer two",
            "  (3/7)",
        ]
    );
}

#[test]
fn filters_show_settings_entries_or_only_user_messages() {
    let mut v = TreeView::new(&sample(), Some("a3"), 30, None);
    press(&mut v, KeyCode::Char('a'), KeyModifiers::CONTROL);
    let all = rows(&v);
    assert_eq!(all[0], "  • [model: mock-model]");
    assert_eq!(all[1], "  • [thinking: off]");
    assert!(
        all.contains(&"        [title: my sess]".to_string()),
        "{all:#?}"
    );
    assert_eq!(all[2], "  • [system]");
    assert_eq!(all.last().map(String::as_str), Some("  (5/10) [all]"));
    press(&mut v, KeyCode::Char('u'), KeyModifiers::CONTROL);
    let user = rows(&v);
    assert_eq!(
        user.last().map(String::as_str),
        Some("  (1/3) [user]"),
        "{user:#?}"
    );
    assert!(user.iter().all(|r| !r.contains("assistant")), "{user:#?}");
    // Ctrl+O cycles on from user-only to labelled-only, where nothing is labelled.
    press(&mut v, KeyCode::Char('o'), KeyModifiers::CONTROL);
    assert_eq!(rows(&v), ["  No entries found", "  (0/0) [labeled]"]);
    // Back to the default view, still on `third q` (where user-only had moved it).
    press(&mut v, KeyCode::Char('d'), KeyModifiers::CONTROL);
    assert_eq!(rows(&v).last().map(String::as_str), Some("  (2/7)"));
}

#[test]
fn typing_searches_and_enter_answers_the_entry() {
    let mut v = TreeView::new(&sample(), Some("a3"), 30, None);
    for c in "second".chars() {
        press(&mut v, KeyCode::Char(c), KeyModifiers::NONE);
    }
    assert_eq!(rows(&v), ["› user: second question", "  (1/1)"]);
    assert_eq!(
        press(&mut v, KeyCode::Enter, KeyModifiers::NONE),
        TreeKey::Chose("u2".into())
    );
    // Esc clears the search first, then cancels.
    assert_eq!(
        press(&mut v, KeyCode::Esc, KeyModifiers::NONE),
        TreeKey::Stay
    );
    assert_eq!(rows(&v).len(), 8);
    assert_eq!(
        press(&mut v, KeyCode::Esc, KeyModifiers::NONE),
        TreeKey::Cancelled
    );
}

#[test]
fn folding_a_branch_hides_its_rows() {
    let mut v = TreeView::new(&sample(), Some("a3"), 30, Some("u1"));
    press(&mut v, KeyCode::Left, KeyModifiers::CONTROL);
    let r = rows(&v);
    assert_eq!(r[3], "› └⊞ user: first question", "{r:#?}");
    assert_eq!(r.len(), 5);
    press(&mut v, KeyCode::Right, KeyModifiers::CONTROL);
    assert_eq!(rows(&v).len(), 8);
}

#[test]
fn tool_results_compactions_and_hook_entries_have_rows() {
    let call = json!({"type": "message", "id": "a", "parentId": "u", "message": {"role": "assistant",
        "stopReason": "toolUse",
        "content": [{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls -la"}}]}});
    let result = json!({"type": "message", "id": "r", "parentId": "a", "message": {"role": "toolResult",
        "toolCallId": "c1", "toolName": "bash", "content": [{"type": "text", "text": "x"}]}});
    let comp = json!({"type": "compaction", "id": "c", "parentId": "r", "summary": "s", "tokensBefore": 12345});
    let bs = json!({"type": "branch_summary", "id": "b", "parentId": "c", "summary": "tried X"});
    let cm = json!({"type": "custom_message", "id": "cm", "parentId": "b", "customType": "note",
        "content": "hello", "display": true});
    let cu = json!({"type": "custom", "id": "cu", "parentId": "cm", "customType": "state"});
    let tree = json!([node(
        msg("u", None, "user", "go"),
        vec![node(
            call,
            vec![node(
                result,
                vec![node(
                    comp,
                    vec![node(bs, vec![node(cm, vec![node(cu, vec![])])])]
                )]
            )]
        )]
    )]);
    let mut v = TreeView::new(&tree, Some("cu"), 30, None);
    let r = rows(&v);
    // The reply that only called a tool has no row of its own; its result names the call.
    assert_eq!(
        r,
        [
            "  • user: go",
            "  • [bash: ls -la]",
            "  • [compaction: 12k tokens]",
            "  • [branch summary]: tried X",
            "› • [note]: hello",
            "  (5/5)",
        ]
    );
    press(&mut v, KeyCode::Char('a'), KeyModifiers::CONTROL);
    assert!(rows(&v).contains(&"  • [custom: state]".to_string()));
    press(&mut v, KeyCode::Char('t'), KeyModifiers::CONTROL);
    assert!(!rows(&v).iter().any(|r| r.contains("[bash:")));
}

#[test]
fn shift_l_edits_the_chosen_entrys_label_in_place_and_hands_it_to_the_app() {
    let mut v = TreeView::new(&sample(), Some("a3"), 30, None);
    press(&mut v, KeyCode::Char('L'), KeyModifiers::SHIFT);
    let theme = Theme::new(ThemeName::Dark, false);
    let shown: Vec<String> = v.render(100, &theme).iter().map(Line::text).collect();
    assert!(
        shown.iter().any(|l| l == "  Label (empty to remove):"),
        "{shown:#?}"
    );
    // Typing goes to the label, not the search; Enter saves and the tree comes back.
    for c in "keep".chars() {
        press(&mut v, KeyCode::Char(c), KeyModifiers::NONE);
    }
    assert_eq!(
        press(&mut v, KeyCode::Enter, KeyModifiers::NONE),
        TreeKey::Stay
    );
    assert_eq!(
        v.take_saved_labels(),
        [("a3".to_string(), Some("keep".to_string()))]
    );
    assert!(
        v.take_saved_labels().is_empty(),
        "each label is handed over once"
    );
    assert_eq!(rows(&v)[2], "› │     • [keep] assistant: answer three");
    assert!(v.search.is_empty());

    // Shift+T shows when it was set; editing to nothing removes it; Esc keeps it as it was.
    press(&mut v, KeyCode::Char('T'), KeyModifiers::SHIFT);
    let timed = rows(&v);
    assert!(
        timed.last().unwrap().ends_with("[+label time]"),
        "{timed:#?}"
    );
    assert!(
        timed[2].contains("[keep] ") && timed[2].contains(':'),
        "{timed:#?}"
    );
    press(&mut v, KeyCode::Char('L'), KeyModifiers::SHIFT);
    press(&mut v, KeyCode::Char('x'), KeyModifiers::NONE);
    press(&mut v, KeyCode::Esc, KeyModifiers::NONE);
    assert!(v.take_saved_labels().is_empty());
    press(&mut v, KeyCode::Char('L'), KeyModifiers::SHIFT);
    press(&mut v, KeyCode::Char('u'), KeyModifiers::CONTROL);
    press(&mut v, KeyCode::Enter, KeyModifiers::NONE);
    assert_eq!(v.take_saved_labels(), [("a3".to_string(), None)]);
    assert_eq!(rows(&v)[2], "› │     • assistant: answer three");
}
