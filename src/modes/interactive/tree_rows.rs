//! `/tree`'s rows: the session tree (pi's `get_tree` shape, `[{entry, children, label?}]`)
//! flattened depth-first into one line per message, indented where the conversation
//! branches, with labels, and `●` on the entry the session is at.

use serde_json::Value;

/// (row text, entry id) in display order. Row texts are unique (numbered). `●` marks the
/// leaf, or the nearest entry above it that has a row (the leaf may be bookkeeping, such as
/// a label).
pub fn rows(tree: &Value, leaf: Option<&str>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let here = leaf.and_then(|l| tree.as_array().and_then(|r| shown_ancestor(r, l, None)));
    let leaf = here.as_deref();
    if let Some(roots) = tree.as_array() {
        let branching = roots.len() > 1;
        for r in roots {
            walk(r, usize::from(branching), leaf, &mut out);
        }
    }
    out
}

fn walk(node: &Value, depth: usize, leaf: Option<&str>, out: &mut Vec<(String, String)>) {
    let entry = &node["entry"];
    let id = entry["id"].as_str().unwrap_or("").to_string();
    if let Some(text) = describe(entry) {
        let here = if leaf == Some(id.as_str()) {
            "● "
        } else {
            "  "
        };
        let label = node["label"]
            .as_str()
            .map(|l| format!(" [{l}]"))
            .unwrap_or_default();
        let n = out.len() + 1;
        let row = format!("{n:>3}. {}{here}{text}{label}", "  ".repeat(depth));
        out.push((row, id));
    }
    let children = node["children"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let branching = children.len() > 1;
    for c in children {
        walk(c, depth + usize::from(branching), leaf, out);
    }
}

/// The id of the deepest entry with a row on the path to `leaf`.
fn shown_ancestor(nodes: &[Value], leaf: &str, above: Option<String>) -> Option<String> {
    for n in nodes {
        let id = n["entry"]["id"].as_str().unwrap_or("");
        let here = if describe(&n["entry"]).is_some() {
            Some(id.to_string())
        } else {
            above.clone()
        };
        if id == leaf {
            return here;
        }
        let children = n["children"].as_array().map(Vec::as_slice).unwrap_or(&[]);
        if let Some(found) = shown_ancestor(children, leaf, here) {
            return Some(found);
        }
    }
    None
}

/// One line for an entry worth a row (messages, summaries); `None` for bookkeeping entries.
fn describe(entry: &Value) -> Option<String> {
    let flat = |s: &str| {
        let one = s.split_whitespace().collect::<Vec<_>>().join(" ");
        if one.chars().count() > 80 {
            format!("{}…", one.chars().take(79).collect::<String>())
        } else {
            one
        }
    };
    match entry["type"].as_str()? {
        "message" => {
            let m = &entry["message"];
            let text = match &m["content"] {
                Value::String(s) => s.clone(),
                Value::Array(blocks) => blocks
                    .iter()
                    .filter_map(|b| b["text"].as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                _ => String::new(),
            };
            match m["role"].as_str()? {
                "user" => Some(format!("› {}", flat(&text))),
                "assistant" if !text.trim().is_empty() => Some(flat(&text)),
                _ => None,
            }
        }
        "compaction" => Some("[compaction]".into()),
        "branch_summary" => Some(format!(
            "[branch summary] {}",
            flat(entry["summary"].as_str().unwrap_or(""))
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn user(id: &str, text: &str) -> Value {
        json!({"type": "message", "id": id, "message": {"role": "user", "content": text}})
    }

    #[test]
    fn branches_are_indented_and_the_current_entry_marked() {
        let tree = json!([{
            "entry": user("a", "first"),
            "children": [
                {"entry": user("b", "left way"), "children": [], "label": "tried"},
                {"entry": user("c", "right way"), "children": []}
            ]
        }]);
        let r = rows(&tree, Some("c"));
        let text: Vec<&str> = r.iter().map(|x| x.0.as_str()).collect();
        assert_eq!(
            text,
            [
                "  1.   › first",
                "  2.     › left way [tried]",
                "  3.   ● › right way"
            ]
        );
        assert_eq!(r[2].1, "c");
    }

    #[test]
    fn a_leaf_without_a_row_marks_the_entry_above_it() {
        let tree = json!([{
            "entry": user("a", "first"),
            "children": [{"entry": {"type": "label", "id": "l"}, "children": []}]
        }]);
        let r = rows(&tree, Some("l"));
        assert_eq!(r[0].0, "  1. ● › first");
    }
}
