use super::*;

fn ctx(text: &str) -> Option<Context> {
    // `|` marks the cursor.
    let lines: Vec<String> = text.split('\n').map(|l| l.replace('|', "")).collect();
    let (row, col) = text
        .split('\n')
        .enumerate()
        .find_map(|(r, l)| l.find('|').map(|c| (r, c)))
        .expect("a cursor");
    context_at(&lines, (row, col))
}

fn file(query: &str, range: Range<usize>) -> Option<Context> {
    Some(Context {
        trigger: Trigger::File {
            query: query.into(),
        },
        range,
    })
}

#[test]
fn at_sign_at_a_word_start_asks_for_files() {
    assert_eq!(ctx("look at @src/ma|"), file("src/ma", 8..15));
    assert_eq!(ctx("@|"), file("", 0..1));
    assert_eq!(
        ctx("x\n  @re|adme"),
        file("re", 2..9),
        "the whole word is replaced"
    );
}

#[test]
fn an_at_sign_inside_a_word_is_not_a_file_reference() {
    assert_eq!(ctx("mail me@example.com|"), None);
    assert_eq!(ctx("@src/main.rs |"), None, "the word is finished");
}

#[test]
fn a_quoted_file_query_may_hold_spaces() {
    assert_eq!(ctx("see @\"my dir/no|"), file("my dir/no", 4..15));
    assert_eq!(
        ctx("see @\"my d|ir\" then"),
        file("my d", 4..13),
        "up to the closing quote"
    );
    assert_eq!(ctx("see @\"my dir\" |"), None);
}

#[test]
fn slash_at_the_start_asks_for_commands() {
    let cmd = |p: &str, r: Range<usize>| {
        Some(Context {
            trigger: Trigger::Command { prefix: p.into() },
            range: r,
        })
    };
    assert_eq!(ctx("/|"), cmd("", 0..1));
    assert_eq!(ctx("/mo|"), cmd("mo", 0..3));
    assert_eq!(ctx("/mo|del"), cmd("mo", 0..6));
    assert_eq!(ctx("/skill:re|"), cmd("skill:re", 0..9));
}

#[test]
fn slash_elsewhere_or_a_path_is_not_a_command() {
    assert_eq!(ctx(" /mo|"), None);
    assert_eq!(ctx("text\n/mo|"), None, "only on the first line");
    assert_eq!(ctx("/usr/bi|"), None);
}

#[test]
fn after_the_command_and_a_space_arguments_are_asked_for() {
    assert_eq!(
        ctx("/model cl|"),
        Some(Context {
            trigger: Trigger::Argument {
                command: "model".into(),
                prefix: "cl".into()
            },
            range: 7..9,
        })
    );
    assert_eq!(
        ctx("/compact keep the |"),
        Some(Context {
            trigger: Trigger::Argument {
                command: "compact".into(),
                prefix: "keep the ".into()
            },
            range: 9..18,
        })
    );
    assert_eq!(ctx("/ x|"), None, "no command name");
    assert_eq!(
        ctx("/review @src/li|"),
        file("src/li", 8..15),
        "a file reference wins inside arguments"
    );
}

fn commands() -> Vec<CommandInfo> {
    vec![
        CommandInfo::new("model", "Pick a model"),
        CommandInfo::new("new", "Start a new session"),
        CommandInfo::new("name", "Name this session"),
        CommandInfo::new("skill:review", "Review code"),
        CommandInfo::new("compact", "Compact the context"),
    ]
}

fn labels(items: &[CompletionItem]) -> Vec<&str> {
    items.iter().map(|i| i.label.as_str()).collect()
}

#[test]
fn commands_matching_the_prefix_come_first_in_the_apps_order() {
    let items = rank_commands(&commands(), "n");
    assert_eq!(&labels(&items)[..2], ["/new", "/name"]);
    assert_eq!(items[0].description.as_deref(), Some("Start a new session"));
    assert_eq!(items[0].value, "/new");
}

#[test]
fn a_command_typed_in_full_comes_before_longer_ones() {
    let cmds = vec![
        CommandInfo::new("model-list", "List models"),
        CommandInfo::new("model", "Pick a model"),
    ];
    assert_eq!(
        labels(&rank_commands(&cmds, "model")),
        ["/model", "/model-list"]
    );
    assert_eq!(
        labels(&rank_commands(&cmds, "mo")),
        ["/model-list", "/model"]
    );
}

#[test]
fn an_empty_prefix_lists_every_command() {
    assert_eq!(rank_commands(&commands(), "").len(), 5);
}

#[test]
fn commands_also_match_fuzzily_and_case_blind() {
    assert_eq!(
        labels(&rank_commands(&commands(), "rev")),
        ["/skill:review"]
    );
    assert_eq!(labels(&rank_commands(&commands(), "MOD")), ["/model"]);
    assert!(rank_commands(&commands(), "xyz").is_empty());
}

#[test]
fn popup_selection_wraps_and_pages_stop_at_the_ends() {
    let items = (0..5).map(|i| CompletionItem::new(i.to_string())).collect();
    let mut p = Popup::new(PopupKind::File, 0, 0..0, items);
    p.step(-1);
    assert_eq!(p.selected, 4);
    p.step(1);
    assert_eq!(p.selected, 0);
    p.page(10);
    assert_eq!(p.selected, 4);
    p.page(-10);
    assert_eq!(p.selected, 0);
}

#[test]
fn a_rerank_keeps_the_selected_item_when_it_is_still_listed() {
    let mk = |v: &[&str]| {
        v.iter()
            .map(|s| CompletionItem::new(*s))
            .collect::<Vec<_>>()
    };
    let mut p = Popup::new(PopupKind::File, 0, 0..0, mk(&["a", "b", "c"]));
    p.step(1);
    p.replace_items(mk(&["x", "b"]));
    assert_eq!(p.selected_item().map(|i| i.value.as_str()), Some("b"));
    p.replace_items(mk(&["y"]));
    assert_eq!(p.selected, 0);
}

#[test]
fn file_insertions_quote_spaces_and_leave_directories_open() {
    assert_eq!(file_insertion("src/main.rs"), "@src/main.rs ");
    assert_eq!(file_insertion("my notes.md"), "@\"my notes.md\" ");
    assert_eq!(file_insertion("src/"), "@src/");
    assert_eq!(file_insertion("my dir/"), "@\"my dir/");
}
