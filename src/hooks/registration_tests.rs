//! Registration checks: filter syntax, names, deadlines, and what is only noted.

use serde_json::json;

use super::*;

const T: Duration = Duration::from_secs(30);

fn register(v: serde_json::Value) -> Register {
    let mut base = json!({"protocol_version": 1, "name": "h"});
    if let (Some(b), Some(extra)) = (base.as_object_mut(), v.as_object()) {
        b.extend(extra.clone());
    }
    serde_json::from_value(base).expect("a register")
}

fn subs(tools: serde_json::Value) -> Register {
    register(json!({"subscriptions": [{"event": "tool_call", "tools": tools}]}))
}

fn err(r: Register) -> String {
    check(r, T).expect_err("refused").to_string()
}

#[test]
fn filters_are_exact_names_or_globs_with_alternation() {
    let r = check(
        subs(json!(["bash", "{write,edit}", "mcp__*", "gr?p", "l[s]"])),
        T,
    )
    .unwrap();
    let s = &r.subscriptions;
    for tool in ["bash", "write", "edit", "mcp__fs__read", "grep", "ls"] {
        assert!(s.wants("tool_call", Some(tool)).is_some(), "{tool}");
    }
    for tool in ["bash2", "read", "find", "Bash", "mcp_x"] {
        assert!(s.wants("tool_call", Some(tool)).is_none(), "{tool}");
    }
    // A tool event without a tool (never sent that way) and other events are unaffected.
    assert_eq!(s.wants("tool_call", None), Some(T));
    assert_eq!(s.wants("input", None), None);
}

#[test]
fn matching_is_case_sensitive() {
    let r = check(subs(json!(["Bash"])), T).unwrap();
    assert!(r.subscriptions.wants("tool_call", Some("bash")).is_none());
    assert!(r.subscriptions.wants("tool_call", Some("Bash")).is_some());
}

#[test]
fn bad_filters_name_the_subscription_the_filter_and_why() {
    for (tools, needle) in [
        (
            json!(["[bash"]),
            "tool filter \"[bash\" is not a valid glob: unclosed",
        ),
        (
            json!(["{bash,write"]),
            "\"{bash,write\" is not a valid glob: unclosed",
        ),
        (
            json!(["[z-a]"]),
            "\"[z-a]\" is not a valid glob: invalid range",
        ),
        (json!([""]), "\"\" can never match a tool name: it is empty"),
        (json!([" bash"]), "it contains whitespace"),
        (json!(["bash,write"]), "a comma outside `{…}`"),
        (json!([]), "an empty list of tool filters"),
    ] {
        let e = err(subs(tools.clone()));
        assert!(e.starts_with("subscription to tool_call: "), "{tools}: {e}");
        assert!(e.contains(needle), "{tools}: {e}");
    }
    // Commas inside alternation and classes are fine.
    assert!(check(subs(json!(["{bash,write}", "[,a]x"])), T).is_ok());
}

#[test]
fn a_broken_filter_is_refused_even_on_an_event_that_ignores_filters() {
    let r = register(json!({"subscriptions": [{"event": "input", "tools": ["[x"]}]}));
    assert!(err(r).contains("subscription to input"));
    let r = register(json!({"subscriptions": [{"event": "input", "tools": ["x"]}]}));
    let r = check(r, T).unwrap();
    assert!(r.notes[0].contains("not a tool event"), "{:?}", r.notes);
    assert_eq!(r.subscriptions.wants("input", Some("y")), Some(T));
}

#[test]
fn deadlines_are_capped_at_the_event_timeout_and_zero_is_refused() {
    let r = register(json!({"subscriptions": [
        {"event": "tool_call", "deadline_ms": 60000},
        {"event": "input", "deadline_ms": 250},
        {"event": "context"}]}));
    let r = check(r, Duration::from_millis(300)).unwrap();
    let s = &r.subscriptions;
    assert_eq!(
        s.wants("tool_call", Some("bash")),
        Some(Duration::from_millis(300))
    );
    assert_eq!(s.wants("input", None), Some(Duration::from_millis(250)));
    assert_eq!(s.wants("context", None), Some(Duration::from_millis(300)));
    assert!(
        r.notes.iter().any(|n| n.contains("capped")),
        "{:?}",
        r.notes
    );
    let r = register(json!({"subscriptions": [{"event": "input", "deadline_ms": 0}]}));
    assert_eq!(
        err(r),
        "subscription to input: a deadline_ms of 0 leaves the hook no time to reply"
    );
}

#[test]
fn unknown_and_duplicate_subscriptions_are_noted_and_ignored() {
    let r = register(json!({"subscriptions": [
        {"event": "tool_call", "tools": ["bash"]},
        {"event": "tool_call"},
        {"event": "tool_calls"}]}));
    let r = check(r, T).unwrap();
    assert_eq!(r.notes.len(), 2, "{:?}", r.notes);
    assert!(r.subscriptions.wants("tool_call", Some("ls")).is_none());
    assert_eq!(r.subscriptions.iter().count(), 1);
}

fn tool(name: &str) -> serde_json::Value {
    json!({"name": name, "description": "d", "parameters": {"type": "object"}})
}

#[test]
fn names_are_validated_and_unique() {
    assert!(check(register(json!({"tools": [tool("scan_secrets-2")]})), T).is_ok());
    let cases = [
        (
            json!({"tools": [tool("scan secrets")]}),
            "tool name \"scan secrets\" is invalid",
        ),
        (
            json!({"tools": [tool(&"x".repeat(65))]}),
            "tool names are 1 to 64",
        ),
        (json!({"tools": [tool("a.b")]}), "tool name \"a.b\""),
        (
            json!({"commands": [{"name": "/audit"}]}),
            "without the leading `/`",
        ),
        (
            json!({"commands": [{"name": "a"}, {"name": "a"}]}),
            "command \"a\" is registered twice",
        ),
        (
            json!({"flags": [{"name": "--strict"}]}),
            "without the leading `--`",
        ),
        (json!({"flags": [{"name": "a=b"}]}), "flag name \"a=b\""),
        (
            json!({"flags": [{"name": "n", "type": "number"}]}),
            "\"boolean\" or \"string\"",
        ),
    ];
    for (v, needle) in cases {
        let e = err(register(v.clone()));
        assert!(e.contains(needle), "{v}: {e}");
    }
    assert!(valid_name(&"x".repeat(64)));
    assert!(!valid_name(""));
    assert!(valid_flag_name("dry-run") && !valid_flag_name("-x"));
}

#[test]
fn built_ins_matched_by_a_filter() {
    let (hits, near) = builtins_matched("tool_call", "{bash,write}").unwrap();
    assert_eq!((hits, near), (vec!["bash", "write"], vec![]));
    let (hits, near) = builtins_matched("tool_call", "Bash").unwrap();
    assert!(hits.is_empty());
    assert_eq!(near, vec!["bash"]);
    assert_eq!(builtins_matched("tool_call", "*").unwrap().0.len(), 7);
    assert!(builtins_matched("tool_call", "[").is_err());
}

#[test]
fn a_tool_registered_twice_takes_the_later_definition_in_the_earlier_place() {
    let later = json!({"name": "a", "description": "later", "parameters": {"type": "object"}});
    let r = check(register(json!({"tools": [tool("a"), tool("b"), later]})), T).unwrap();
    let tools: Vec<(&str, &str)> = r
        .register
        .tools
        .iter()
        .map(|t| (t.name.as_str(), t.description.as_str()))
        .collect();
    assert_eq!(tools, [("a", "later"), ("b", "d")]);
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("\"a\" is registered twice")),
        "{:?}",
        r.notes
    );
}
