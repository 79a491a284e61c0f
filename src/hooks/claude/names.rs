//! Claude Code's tool names and argument shapes, both ways: what a Claude Code hook sees of a
//! pi tool call (`Bash`, `Edit` with `file_path`/`old_string`/`new_string`, …) and how its
//! `updatedInput` becomes a patch of pi's arguments again. One table, pure, so the two
//! directions cannot drift apart.
//!
//! Keys a side does not know pass through unchanged (a hook tool's or an MCP tool's arguments
//! are the same on both sides). Paths are made absolute on the way out, as Claude Code's own
//! tools always carry absolute paths and hooks compare them with `$CLAUDE_PROJECT_DIR`; on the
//! way back a value the hook did not change keeps pi's original form.
//!
//! MCP tools are spelt as Claude Code spells them: `mcp__<server>__<tool>` from the server's and
//! the tool's own names with only characters outside `[A-Za-z0-9_-]` made `_`, so the hyphen
//! of `seq-think` stays (pi's own name, `mcp__seq_think__…`, lost it). pi's name cannot be
//! turned back into them, so whoever knows the origin of pi's tools ([`McpOrigins`]: the
//! registry, see `mcp_names`) is asked.

use std::path::Path;

use serde_json::{Map, Value};

/// pi's built-in tools and their Claude Code names. `edit` is also `MultiEdit` (several edits).
const TOOLS: &[(&str, &str)] = &[
    ("bash", "Bash"),
    ("read", "Read"),
    ("write", "Write"),
    ("edit", "Edit"),
    ("grep", "Grep"),
    ("find", "Glob"),
    ("ls", "LS"),
];

/// Argument keys renamed between the two sides, per pi tool: (pi, Claude Code).
fn renamed(pi_tool: &str) -> &'static [(&'static str, &'static str)] {
    match pi_tool {
        "read" | "write" | "edit" => &[("path", "file_path")],
        "grep" => &[
            ("ignoreCase", "-i"),
            ("context", "-C"),
            ("limit", "head_limit"),
        ],
        _ => &[],
    }
}

/// Keys holding a path that Claude Code's tools always give absolute.
fn path_keys(pi_tool: &str) -> &'static [&'static str] {
    match pi_tool {
        "read" | "write" | "edit" | "ls" => &["path"],
        _ => &[],
    }
}

/// The namespace of MCP servers' tools, on both sides.
pub const MCP_PREFIX: &str = "mcp__";

/// Who knows where pi's MCP tools come from.
pub trait McpOrigins: Send + Sync {
    /// The server's and the tool's own names behind pi's tool `pi_tool`, if it is an MCP
    /// server's.
    fn origin(&self, pi_tool: &str) -> Option<(String, String)>;
}

/// Nothing known about MCP tools: their names stay pi's.
pub struct NoMcp;

impl McpOrigins for NoMcp {
    fn origin(&self, _pi_tool: &str) -> Option<(String, String)> {
        None
    }
}

/// One part of an MCP tool name as Claude Code writes it (its `normalizeNameForMCP`): every
/// character outside `[A-Za-z0-9_-]` becomes `_`.
pub fn claude_mcp_part(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Claude Code's name of tool `tool` of MCP server `server`.
pub fn claude_mcp_name(server: &str, tool: &str) -> String {
    format!(
        "{MCP_PREFIX}{}__{}",
        claude_mcp_part(server),
        claude_mcp_part(tool)
    )
}

/// The server part of an MCP tool name (`mcp__memory__create` → `memory`); `None` for other
/// names, or one with nothing after the prefix.
pub fn mcp_server_of(name: &str) -> Option<&str> {
    let rest = name.strip_prefix(MCP_PREFIX)?;
    let server = rest.split("__").next().unwrap_or(rest);
    (!server.is_empty()).then_some(server)
}

/// Claude Code's name of pi's `pi_tool` when it is an MCP server's tool whose origin is known.
pub fn mcp_claude_name(pi_tool: &str, mcp: &dyn McpOrigins) -> Option<String> {
    if !pi_tool.starts_with(MCP_PREFIX) {
        return None;
    }
    mcp.origin(pi_tool)
        .map(|(server, tool)| claude_mcp_name(&server, &tool))
}

/// Every name a matcher may select a call of `pi_tool` by, before its arguments are known:
/// Claude Code's (`Edit` and `MultiEdit` for `edit`; an MCP tool's own spelling) and, for an
/// MCP tool whose spelling differs, pi's too — a matcher written against pi's name keeps
/// selecting it, so a gate never stops running because of how a name is spelt.
pub fn matchable_names(pi_tool: &str, mcp: &dyn McpOrigins) -> Vec<String> {
    match mcp_claude_name(pi_tool, mcp) {
        Some(cc) if cc == pi_tool => vec![cc],
        Some(cc) => vec![cc, pi_tool.to_string()],
        None => claude_names(pi_tool)
            .into_iter()
            .map(str::to_string)
            .collect(),
    }
}

/// The Claude Code name of pi tool `pi_tool`, by name alone (`edit` is `Edit`; see
/// [`to_claude`] for `MultiEdit`). Any other tool keeps its name (an MCP tool's Claude Code
/// spelling needs its origin: [`mcp_claude_name`]).
pub fn claude_name(pi_tool: &str) -> &str {
    TOOLS
        .iter()
        .find(|(p, _)| *p == pi_tool)
        .map_or(pi_tool, |(_, c)| c)
}

/// Every Claude Code name a call of `pi_tool` may carry, for matching before the arguments
/// are known.
pub fn claude_names(pi_tool: &str) -> Vec<&str> {
    if pi_tool == "edit" {
        vec!["Edit", "MultiEdit"]
    } else {
        vec![claude_name(pi_tool)]
    }
}

/// The pi tool a Claude Code name stands for (`Glob` → `find`; unknown names as they are).
pub fn pi_name(claude_tool: &str) -> &str {
    if claude_tool == "MultiEdit" {
        return "edit";
    }
    TOOLS
        .iter()
        .find(|(_, c)| *c == claude_tool)
        .map_or(claude_tool, |(p, _)| p)
}

fn absolute(cwd: &Path, p: &str) -> String {
    let path = Path::new(p);
    if path.is_absolute() || p.is_empty() {
        p.to_string()
    } else {
        cwd.join(path).display().to_string()
    }
}

fn rename_keys(
    input: &Map<String, Value>,
    pairs: &[(&str, &str)],
    out_first: bool,
) -> Map<String, Value> {
    input
        .iter()
        .map(|(k, v)| {
            let to = pairs.iter().find_map(|(pi, cc)| {
                let (from, to) = if out_first { (pi, cc) } else { (cc, pi) };
                (*from == k).then_some(*to)
            });
            (to.map_or_else(|| k.clone(), str::to_string), v.clone())
        })
        .collect()
}

/// One pi edit as Claude Code writes it.
fn claude_edit(e: &Value) -> Value {
    let mut m = Map::new();
    m.insert(
        "old_string".into(),
        e.get("oldText").cloned().unwrap_or(Value::Null),
    );
    m.insert(
        "new_string".into(),
        e.get("newText").cloned().unwrap_or(Value::Null),
    );
    Value::Object(m)
}

fn pi_edit(e: &Value) -> Value {
    let mut m = Map::new();
    m.insert(
        "oldText".into(),
        e.get("old_string").cloned().unwrap_or(Value::Null),
    );
    m.insert(
        "newText".into(),
        e.get("new_string").cloned().unwrap_or(Value::Null),
    );
    if let Some(Value::Bool(true)) = e.get("replace_all") {
        // pi's edit has no "replace all"; kept so the edit tool refuses it visibly.
        m.insert("replace_all".into(), Value::Bool(true));
    }
    Value::Object(m)
}

/// [`to_claude`], with an MCP tool named as Claude Code names it when `mcp` knows its origin:
/// what hooks see in `tool_name` and in a transcript's `tool_use` blocks.
pub fn to_claude_call(
    pi_tool: &str,
    input: &Value,
    cwd: &Path,
    mcp: &dyn McpOrigins,
) -> (String, Value) {
    let (name, tool_input) = to_claude(pi_tool, input, cwd);
    match mcp_claude_name(pi_tool, mcp) {
        Some(cc) => (cc, tool_input),
        None => (name, tool_input),
    }
}

/// A pi tool call as a Claude Code hook sees it: its name and `tool_input`.
pub fn to_claude(pi_tool: &str, input: &Value, cwd: &Path) -> (String, Value) {
    let Value::Object(obj) = input else {
        return (claude_name(pi_tool).to_string(), input.clone());
    };
    let mut obj = obj.clone();
    for k in path_keys(pi_tool) {
        if let Some(Value::String(p)) = obj.get(*k) {
            let abs = absolute(cwd, p);
            obj.insert((*k).to_string(), Value::String(abs));
        }
    }
    if pi_tool == "bash" {
        if let Some(t) = obj.get("timeout").and_then(Value::as_f64) {
            // pi's timeout is in seconds, Claude Code's in milliseconds.
            obj.insert("timeout".into(), number(t * 1000.0));
        }
    }
    let mut name = claude_name(pi_tool).to_string();
    if pi_tool == "edit" {
        let edits: Vec<Value> = match obj.remove("edits") {
            Some(Value::Array(list)) => list,
            Some(other) => vec![other],
            None => Vec::new(),
        };
        // pi also accepts a single top-level oldText/newText.
        let single = obj.contains_key("oldText").then(|| {
            let e = claude_edit(&Value::Object(obj.clone()));
            obj.remove("oldText");
            obj.remove("newText");
            e
        });
        let mut all: Vec<Value> = edits.iter().map(claude_edit).collect();
        all.extend(single);
        if all.len() == 1 {
            if let Value::Object(e) = &all[0] {
                obj.extend(e.clone());
            }
            obj.insert("replace_all".into(), Value::Bool(false));
        } else {
            name = "MultiEdit".into();
            obj.insert("edits".into(), Value::Array(all));
        }
    }
    (
        name,
        Value::Object(rename_keys(&obj, renamed(pi_tool), true)),
    )
}

/// A Claude Code `tool_input` (a hook's `updatedInput`) as pi's arguments of `pi_tool`.
pub fn from_claude(pi_tool: &str, input: &Value) -> Value {
    let Value::Object(obj) = input else {
        return input.clone();
    };
    let mut obj = rename_keys(obj, renamed(pi_tool), false);
    if pi_tool == "bash" {
        if let Some(t) = obj.get("timeout").and_then(Value::as_f64) {
            obj.insert("timeout".into(), number(t / 1000.0));
        }
    }
    if pi_tool == "edit" {
        let mut edits = Vec::new();
        if obj.contains_key("old_string") || obj.contains_key("new_string") {
            edits.push(pi_edit(&Value::Object(obj.clone())));
        }
        if let Some(Value::Array(list)) = obj.get("edits") {
            edits.extend(list.iter().map(pi_edit));
        }
        for k in ["old_string", "new_string", "replace_all"] {
            obj.remove(k);
        }
        obj.insert("edits".into(), Value::Array(edits));
    }
    Value::Object(obj)
}

/// A whole number stays an integer (`30`, not `30.0`), as a person would write it.
fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        Value::from(x as i64)
    } else {
        serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
    }
}

/// The RFC 7386 merge patch that turns `current` (pi's arguments) into what a hook's
/// `updatedInput` says. Claude Code replaces the whole input, so keys the hook left out are
/// removed; a value it returned unchanged keeps pi's form (a relative path stays relative).
/// `None` when nothing changes.
pub fn patch_for(pi_tool: &str, current: &Value, updated: &Value, cwd: &Path) -> Option<Value> {
    let mut wanted = from_claude(pi_tool, updated);
    let (_, seen) = to_claude(pi_tool, current, cwd);
    let round_trip = from_claude(pi_tool, &seen);
    if let (Value::Object(w), Value::Object(rt), Value::Object(cur)) =
        (&mut wanted, &round_trip, current)
    {
        for (k, v) in w.iter_mut() {
            if rt.get(k) == Some(v) {
                if let Some(orig) = cur.get(k) {
                    *v = orig.clone();
                }
            }
        }
    }
    let p = merge_diff(current, &wanted);
    (!matches!(&p, Value::Object(m) if m.is_empty())).then_some(p)
}

/// A merge patch `p` with `merge(old, p) == new` (for a `new` without `null` values, which a
/// merge patch cannot express).
pub fn merge_diff(old: &Value, new: &Value) -> Value {
    let (Value::Object(o), Value::Object(n)) = (old, new) else {
        return new.clone();
    };
    let mut p = Map::new();
    for k in o.keys() {
        if !n.contains_key(k) {
            p.insert(k.clone(), Value::Null);
        }
    }
    for (k, v) in n {
        match o.get(k) {
            Some(ov) if ov == v => {}
            Some(ov @ Value::Object(_)) if v.is_object() => {
                p.insert(k.clone(), merge_diff(ov, v));
            }
            _ => {
                p.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const CWD: &str = "/proj";

    fn out(tool: &str, input: Value) -> (String, Value) {
        to_claude(tool, &input, Path::new(CWD))
    }

    #[test]
    fn names_map_both_ways() {
        for (pi, cc) in TOOLS {
            assert_eq!(claude_name(pi), *cc);
            assert_eq!(pi_name(cc), *pi);
        }
        assert_eq!(
            claude_name("mcp__github__create_issue"),
            "mcp__github__create_issue"
        );
        assert_eq!(
            pi_name("mcp__github__create_issue"),
            "mcp__github__create_issue"
        );
        assert_eq!(pi_name("MultiEdit"), "edit");
        assert_eq!(claude_names("edit"), ["Edit", "MultiEdit"]);
        assert_eq!(claude_names("find"), ["Glob"]);
    }

    #[test]
    fn file_tools_get_absolute_file_paths() {
        assert_eq!(
            out(
                "read",
                json!({"path": "src/a.rs", "offset": 3, "limit": 10})
            ),
            (
                "Read".into(),
                json!({"file_path": "/proj/src/a.rs", "offset": 3, "limit": 10})
            )
        );
        assert_eq!(
            out("write", json!({"path": "/tmp/x", "content": "hi"})),
            (
                "Write".into(),
                json!({"file_path": "/tmp/x", "content": "hi"})
            )
        );
        assert_eq!(out("ls", json!({})), ("LS".into(), json!({})));
    }

    #[test]
    fn one_edit_is_edit_and_several_are_multiedit() {
        let one = json!({"path": "a.txt", "edits": [{"oldText": "x", "newText": "y"}]});
        assert_eq!(
            out("edit", one.clone()),
            (
                "Edit".into(),
                json!({"file_path": "/proj/a.txt", "old_string": "x", "new_string": "y",
                       "replace_all": false})
            )
        );
        let two = json!({"path": "a.txt", "edits": [{"oldText": "x", "newText": "y"},
                                                     {"oldText": "p", "newText": "q"}]});
        assert_eq!(
            out("edit", two),
            (
                "MultiEdit".into(),
                json!({"file_path": "/proj/a.txt", "edits": [
                    {"old_string": "x", "new_string": "y"},
                    {"old_string": "p", "new_string": "q"}]})
            )
        );
        // The legacy single-edit form reads the same.
        let legacy = json!({"path": "a.txt", "oldText": "x", "newText": "y"});
        assert_eq!(out("edit", legacy).0, "Edit");
    }

    #[test]
    fn claude_input_comes_back_in_pis_shape() {
        assert_eq!(
            from_claude(
                "edit",
                &json!({"file_path": "/p/a", "old_string": "x", "new_string": "z", "replace_all": false})
            ),
            json!({"path": "/p/a", "edits": [{"oldText": "x", "newText": "z"}]})
        );
        assert_eq!(
            from_claude(
                "edit",
                &json!({"file_path": "/p/a", "edits": [
                {"old_string": "1", "new_string": "2"}, {"old_string": "3", "new_string": "4"}]})
            ),
            json!({"path": "/p/a", "edits": [{"oldText": "1", "newText": "2"},
                                            {"oldText": "3", "newText": "4"}]})
        );
        assert_eq!(
            from_claude(
                "grep",
                &json!({"pattern": "x", "-i": true, "-C": 2, "head_limit": 5})
            ),
            json!({"pattern": "x", "ignoreCase": true, "context": 2, "limit": 5})
        );
        assert_eq!(
            out(
                "grep",
                json!({"pattern": "x", "ignoreCase": true, "context": 2, "limit": 5})
            )
            .1,
            json!({"pattern": "x", "-i": true, "-C": 2, "head_limit": 5})
        );
    }

    #[test]
    fn bash_timeouts_convert_between_seconds_and_milliseconds() {
        assert_eq!(
            out("bash", json!({"command": "ls", "timeout": 30})).1,
            json!({"command": "ls", "timeout": 30000})
        );
        assert_eq!(
            from_claude("bash", &json!({"command": "ls", "timeout": 1500})),
            json!({"command": "ls", "timeout": 1.5})
        );
    }

    #[test]
    fn unknown_tools_and_keys_pass_through() {
        let args = json!({"query": "q", "file_path": "kept"});
        assert_eq!(
            out("mcp__s__t", args.clone()),
            ("mcp__s__t".into(), args.clone())
        );
        assert_eq!(from_claude("mcp__s__t", &args), args);
        assert_eq!(out("read", json!({"path": "a", "extra": 1})).1["extra"], 1);
    }

    /// The registry of a run with a `seq-think` server (tool `sequential.thinking`).
    struct SeqThink;

    impl McpOrigins for SeqThink {
        fn origin(&self, pi_tool: &str) -> Option<(String, String)> {
            (pi_tool == "mcp__seq_think__sequential_thinking")
                .then(|| ("seq-think".into(), "sequential.thinking".into()))
        }
    }

    #[test]
    fn mcp_tools_are_spelt_as_claude_code_spells_them() {
        assert_eq!(
            claude_mcp_name("seq-think", "sequential.thinking"),
            "mcp__seq-think__sequential_thinking"
        );
        assert_eq!(
            claude_mcp_name("my server", "get-sum"),
            "mcp__my_server__get-sum"
        );
        let pi = "mcp__seq_think__sequential_thinking";
        assert_eq!(
            mcp_claude_name(pi, &SeqThink).as_deref(),
            Some("mcp__seq-think__sequential_thinking")
        );
        // Unknown origin, or not an MCP tool: no Claude Code spelling to give.
        assert_eq!(mcp_claude_name("mcp__other__x", &SeqThink), None);
        assert_eq!(mcp_claude_name("bash", &SeqThink), None);
        assert_eq!(mcp_claude_name(pi, &NoMcp), None);
    }

    #[test]
    fn a_matcher_may_select_an_mcp_tool_by_either_spelling() {
        assert_eq!(
            matchable_names("mcp__seq_think__sequential_thinking", &SeqThink),
            [
                "mcp__seq-think__sequential_thinking",
                "mcp__seq_think__sequential_thinking"
            ]
        );
        assert_eq!(matchable_names("edit", &SeqThink), ["Edit", "MultiEdit"]);
        assert_eq!(matchable_names("mcp__x__y", &NoMcp), ["mcp__x__y"]);
    }

    #[test]
    fn the_server_of_an_mcp_name() {
        assert_eq!(mcp_server_of("mcp__seq-think__run"), Some("seq-think"));
        assert_eq!(mcp_server_of("mcp__memory"), Some("memory"));
        assert_eq!(mcp_server_of("mcp__"), None);
        assert_eq!(mcp_server_of("Bash"), None);
    }

    #[test]
    fn patches_change_only_what_the_hook_changed() {
        let cwd = Path::new(CWD);
        let current = json!({"path": "a.txt", "edits": [{"oldText": "x", "newText": "y"}]});
        let (_, seen) = to_claude("edit", &current, cwd);
        // Returned unchanged: no patch, the relative path is not made absolute.
        assert_eq!(patch_for("edit", &current, &seen, cwd), None);
        let mut changed = seen.clone();
        changed["new_string"] = json!("SAFE");
        assert_eq!(
            patch_for("edit", &current, &changed, cwd),
            Some(json!({"edits": [{"oldText": "x", "newText": "SAFE"}]}))
        );
        // Whole-object replacement: a key left out is removed.
        let bash = json!({"command": "rm -rf /", "timeout": 5});
        assert_eq!(
            patch_for("bash", &bash, &json!({"command": "echo no"}), cwd),
            Some(json!({"command": "echo no", "timeout": null}))
        );
        let mut merged = bash.clone();
        json_patch::merge(&mut merged, &json!({"command": "echo no", "timeout": null}));
        assert_eq!(merged, json!({"command": "echo no"}));
    }

    #[test]
    fn merge_diff_recurses_into_objects() {
        let old = json!({"a": {"b": 1, "c": 2}, "d": 3});
        let new = json!({"a": {"b": 1, "c": 5}});
        let p = merge_diff(&old, &new);
        assert_eq!(p, json!({"a": {"c": 5}, "d": null}));
        let mut merged = old.clone();
        json_patch::merge(&mut merged, &p);
        assert_eq!(merged, new);
    }
}
