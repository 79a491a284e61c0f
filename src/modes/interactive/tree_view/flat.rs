//! The tree flattened into rows, as 1.6's tree selector lays it out: depth first with the
//! branch holding the current leaf first, the filter and search applied, and then the
//! indentation, connectors and gutters worked out again over the rows left (a hidden entry's
//! children hang from its nearest shown ancestor).

use std::collections::{HashMap, HashSet};

use serde_json::Value;

/// Which entries `/tree` shows (1.6's filter modes, in its cycling order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    Default,
    NoTools,
    UserOnly,
    LabeledOnly,
    All,
}

impl Filter {
    pub const CYCLE: [Filter; 5] = [
        Filter::Default,
        Filter::NoTools,
        Filter::UserOnly,
        Filter::LabeledOnly,
        Filter::All,
    ];

    /// What the status line adds after the count.
    pub fn status(self) -> &'static str {
        match self {
            Filter::Default => "",
            Filter::NoTools => " [no-tools]",
            Filter::UserOnly => " [user]",
            Filter::LabeledOnly => " [labeled]",
            Filter::All => " [all]",
        }
    }
}

/// One entry of the tree in display order, and where it sits among the shown rows.
#[derive(Debug, Clone)]
pub struct Node {
    pub entry: Value,
    pub id: String,
    pub parent: Option<String>,
    pub label: Option<String>,
    pub indent: usize,
    pub connector: bool,
    pub last: bool,
    /// (level, drawn) of the vertical lines of the branches this row hangs under.
    pub gutters: Vec<(usize, bool)>,
    pub virtual_root_child: bool,
}

/// The shown rows' tree: each row's shown parent and each row's shown children.
#[derive(Debug, Default)]
pub struct Shape {
    pub parent: HashMap<String, Option<String>>,
    pub children: HashMap<Option<String>, Vec<String>>,
    pub multiple_roots: bool,
}

/// All entries in display order: roots and children with the current leaf's branch first.
pub fn flatten(tree: &Value, leaf: Option<&str>) -> Vec<Node> {
    let roots: Vec<&Value> = tree
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let mut active: HashSet<*const Value> = HashSet::new();
    for r in &roots {
        mark_active(r, leaf, &mut active);
    }
    let first = |list: &mut Vec<&Value>| {
        // Stable: the branch holding the leaf first, the others in their order.
        list.sort_by_key(|n| !active.contains(&(*n as *const Value)));
    };
    let mut roots = roots;
    first(&mut roots);
    let mut out = Vec::new();
    let mut stack: Vec<&Value> = roots.into_iter().rev().collect();
    while let Some(n) = stack.pop() {
        let entry = n["entry"].clone();
        out.push(Node {
            id: entry["id"].as_str().unwrap_or_default().to_string(),
            parent: entry["parentId"].as_str().map(str::to_string),
            label: n["label"].as_str().map(str::to_string),
            entry,
            indent: 0,
            connector: false,
            last: false,
            gutters: Vec::new(),
            virtual_root_child: false,
        });
        let mut kids: Vec<&Value> = n["children"]
            .as_array()
            .map(|a| a.iter().collect())
            .unwrap_or_default();
        first(&mut kids);
        stack.extend(kids.into_iter().rev());
    }
    out
}

/// Whether `node`'s subtree holds the leaf; marks every such node (iteratively).
fn mark_active(root: &Value, leaf: Option<&str>, active: &mut HashSet<*const Value>) {
    let Some(leaf) = leaf else { return };
    // Post-order over an explicit stack: (node, children done).
    let mut stack = vec![(root, false)];
    while let Some((n, done)) = stack.pop() {
        let kids = n["children"].as_array().map(Vec::as_slice).unwrap_or(&[]);
        if !done {
            stack.push((n, true));
            stack.extend(kids.iter().map(|k| (k, false)));
            continue;
        }
        let here = n["entry"]["id"].as_str() == Some(leaf);
        if here || kids.iter().any(|k| active.contains(&(k as *const Value))) {
            active.insert(n as *const Value);
        }
    }
}

/// The ids from the leaf up to the root.
pub fn active_path(nodes: &[Node], leaf: Option<&str>) -> HashSet<String> {
    let by_id: HashMap<&str, &Node> = nodes.iter().map(|n| (n.id.as_str(), n)).collect();
    let mut out = HashSet::new();
    let mut at = leaf;
    while let Some(id) = at {
        if !out.insert(id.to_string()) {
            break;
        }
        at = by_id.get(id).and_then(|n| n.parent.as_deref());
    }
    out
}

/// Whether the filter lets `node` through (before the search).
pub fn passes(node: &Node, filter: Filter, leaf: Option<&str>) -> bool {
    let e = &node.entry;
    let kind = e["type"].as_str().unwrap_or("");
    if kind == "usage" {
        return false;
    }
    let role = e["message"]["role"].as_str().unwrap_or("");
    // A reply that only called tools says nothing on its own, unless it failed or is where
    // the session is.
    if kind == "message" && role == "assistant" && leaf != Some(node.id.as_str()) {
        let stop = e["message"]["stopReason"].as_str().unwrap_or("stop");
        let failed = !matches!(stop, "stop" | "toolUse");
        if !super::text::has_text(&e["message"]["content"]) && !failed {
            return false;
        }
    }
    let settings = matches!(
        kind,
        "label"
            | "context_edit"
            | "custom"
            | "model_change"
            | "thinking_level_change"
            | "session_info"
    );
    match filter {
        Filter::UserOnly => kind == "message" && role == "user",
        Filter::NoTools => !(settings || kind == "message" && role == "toolResult"),
        Filter::LabeledOnly => node.label.is_some(),
        Filter::All => true,
        Filter::Default => !settings,
    }
}

/// Indentation, connectors and gutters for the shown rows (`shown` indexes `nodes`), the same
/// rules as the full tree's: a branch point's children and the first generation after a
/// branch move one level right, single-child chains stay flat.
pub fn lay_out(nodes: &mut [Node], shown: &[usize]) -> Shape {
    let visible: HashSet<String> = shown.iter().map(|&i| nodes[i].id.clone()).collect();
    let by_id: HashMap<String, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id.clone(), i))
        .collect();
    let mut shape = Shape::default();
    shape.children.insert(None, Vec::new());
    for &i in shown {
        let mut at = nodes[i].parent.as_deref();
        while let Some(p) = at {
            if visible.contains(p) {
                break;
            }
            at = by_id.get(p).and_then(|&j| nodes[j].parent.as_deref());
        }
        let parent = at.map(str::to_string);
        shape.parent.insert(nodes[i].id.clone(), parent.clone());
        shape
            .children
            .entry(parent)
            .or_default()
            .push(nodes[i].id.clone());
    }
    let roots = shape.children.get(&None).cloned().unwrap_or_default();
    let multi = roots.len() > 1;
    shape.multiple_roots = multi;
    // (id, indent, just branched, connector, last, gutters, virtual root child)
    type Frame = (String, usize, bool, bool, bool, Vec<(usize, bool)>, bool);
    let mut stack: Vec<Frame> = Vec::new();
    for (k, id) in roots.iter().enumerate().rev() {
        let last = k + 1 == roots.len();
        stack.push((
            id.clone(),
            usize::from(multi),
            multi,
            multi,
            last,
            vec![],
            multi,
        ));
    }
    while let Some((id, indent, branched, connector, last, gutters, vroot)) = stack.pop() {
        let Some(&i) = by_id.get(&id) else {
            continue;
        };
        let n = &mut nodes[i];
        n.indent = indent;
        n.connector = connector;
        n.last = last;
        n.gutters = gutters.clone();
        n.virtual_root_child = vroot;
        let kids = shape.children.get(&Some(id)).cloned().unwrap_or_default();
        let many = kids.len() > 1;
        let child_indent = if many || (branched && indent > 0) {
            indent + 1
        } else {
            indent
        };
        let display = if multi {
            indent.saturating_sub(1)
        } else {
            indent
        };
        let child_gutters = if connector && !vroot {
            let mut g = gutters;
            g.push((display.saturating_sub(1), !last));
            g
        } else {
            gutters
        };
        for (k, kid) in kids.iter().enumerate().rev() {
            let kid_last = k + 1 == kids.len();
            stack.push((
                kid.clone(),
                child_indent,
                many,
                many,
                kid_last,
                child_gutters.clone(),
                false,
            ));
        }
    }
    shape
}
