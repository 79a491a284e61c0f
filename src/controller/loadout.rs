//! The tool loadout a session carries from one run to the next, restored as pi 1.6's
//! `_restoreToolsFromTranscript` restores it. The branch's system messages (those before a
//! compaction included: its snapshot derives from them) replay to the tools the model was last
//! offered; a resumed, switched-to or forked session starts with those, so a loadout a hook or
//! `--tools` narrowed stays narrowed. Tools the branch never added or removed that are
//! registered now (a hook's, an MCP server's) are new to it and start active, as a tool joining
//! does; built-ins follow the record. `--tools +name`/`-name` changes the restored loadout; an
//! allowlist, `--no-tools` or `--no-builtin-tools` decide it instead (pi's `usesDefaultTools`).
//!
//! A recorded tool that is not registered yet (an MCP server still connecting) waits in the
//! list and is offered once it registers; the run's first request drops what is still missing,
//! as pi drops its pending tools when a run starts. A recorded tool that no longer exists is
//! left out, and the next request declares it removed.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::options::ControllerOptions;
use super::tools::{apply_modifiers, follows_transcript, tool_modifiers};
use super::{lock, Core};
use crate::message::system;
use crate::message::Message;
use crate::session::Session;
use crate::tools::{ToolRegistry, BUILTIN_NAMES};

/// What a branch's system messages say about the tools.
pub(super) struct Recorded {
    /// The tools declared after replaying them all, in declaration order.
    current: Vec<String>,
    /// Every tool one of them added or removed.
    mentioned: BTreeSet<String>,
}

/// The loadout `session`'s branch records, or `None` when it has no system message.
pub(super) fn recorded(session: &Session) -> Option<Recorded> {
    let messages: Vec<Arc<Message>> = session
        .branch(None)
        .iter()
        .filter_map(|e| e.message())
        .filter(|m| m.role() == "system")
        .filter_map(|m| m.to_message())
        .collect();
    if messages.is_empty() {
        return None;
    }
    let mut mentioned = BTreeSet::new();
    for m in &messages {
        if let Message::System(s) = m.as_ref() {
            let added = s.tools_added.iter().flatten().map(|t| &t.name);
            let removed = s.tools_removed.iter().flatten().map(|t| &t.name);
            mentioned.extend(added.chain(removed).cloned());
        }
    }
    let current = system::current_tools(messages.iter().map(Arc::as_ref))
        .into_iter()
        .map(|t| t.name)
        .collect();
    Some(Recorded { current, mentioned })
}

/// The `+name`/`-name` changes of `--tools` a restore applies (none for an allowlist).
fn modifiers(options: &ControllerOptions) -> Vec<String> {
    tool_modifiers(options).unwrap_or_default()
}

/// The built-ins `session`'s loadout activates, for the registry to hold: empty when the
/// command line decides the loadout.
pub(super) fn restored_builtins(session: &Session, options: &ControllerOptions) -> Vec<String> {
    if !follows_transcript(options) {
        return Vec::new();
    }
    let Some(rec) = recorded(session) else {
        return Vec::new();
    };
    apply_modifiers(rec.current, &modifiers(options))
        .into_iter()
        .filter(|n| BUILTIN_NAMES.contains(&n.as_str()))
        .collect()
}

/// The active list `rec` restores over `registry`: the recorded tools and the new ones, with
/// `changes` applied, that the user's selection admits (registered or still to come).
fn restore(rec: &Recorded, registry: &ToolRegistry, changes: &[String]) -> Vec<String> {
    let new = registry.all_names().into_iter().filter(|n| {
        !rec.mentioned.contains(n)
            && !BUILTIN_NAMES.contains(&n.as_str())
            && registry.exposure(n).is_some_and(|e| e.offered_by_default())
    });
    let names = rec.current.iter().cloned().chain(new).collect();
    let mut names = apply_modifiers(names, changes);
    names.retain(|n| registry.admits(n));
    names
}

/// `list` as the handle holds it: `None` when it offers exactly what nothing narrowing the
/// tools would, so tools joining later are offered as they are without a list.
pub(super) fn normalized(registry: &ToolRegistry, list: Vec<String>) -> Option<Vec<String>> {
    let registered = list.iter().all(|n| registry.exposure(n).is_some());
    let set = |names: Vec<String>| names.into_iter().collect::<BTreeSet<_>>();
    let same = set(registry.offered_names(Some(&list))) == set(registry.offered_names(None));
    (!registered || !same).then_some(list)
}

impl Core {
    /// The loadout the session now in place starts with, over `registry`, as a session pi
    /// builds anew starts: the command line's tools, or the branch's record when it decides
    /// (see the module comment).
    pub(super) fn start_loadout(&self, registry: &ToolRegistry) {
        let options = self.fixed.options.clone();
        let restored = follows_transcript(&options)
            .then(|| recorded(&self.session.lock()))
            .flatten()
            .map(|rec| restore(&rec, registry, &modifiers(&options)));
        self.handle
            .set_active_tools(restored.and_then(|l| normalized(registry, l)));
        self.remember_joined(registry);
    }

    /// After a move in the tree: the new branch's record, if it has one, whatever decided the
    /// loadout at the start (pi's `navigateTree` restores without `--tools` changes).
    pub(super) fn follow_branch_loadout(&self) {
        let Some(rec) = recorded(&self.session.lock()) else {
            return;
        };
        let registry = self.handle.tools();
        let list = restore(&rec, &registry, &[]);
        self.handle.set_active_tools(normalized(&registry, list));
        self.remember_joined(&registry);
        self.refresh_system_prompt();
    }

    /// A run starts: restored tools that did not register by now are dropped.
    pub(super) fn drop_missing_tools(&self) {
        let Some(mut list) = self.handle.active_tools() else {
            return;
        };
        let registry = self.handle.tools();
        list.retain(|n| registry.exposure(n).is_some());
        self.handle.set_active_tools(normalized(&registry, list));
    }

    /// The MCP tools registered now, so [`Core::adopt_joined_tools`] tells joining ones apart.
    fn remember_joined(&self, registry: &ToolRegistry) {
        *lock(&self.mcp_known) = mcp_tools(registry);
    }

    /// MCP tools that joined since last looked are offered even while a list narrows the
    /// tools: pi activates a tool when it registers, whatever the loadout.
    pub(super) fn adopt_joined_tools(&self) {
        let registry = self.handle.tools();
        let now = mcp_tools(&registry);
        let joined: Vec<String> = {
            let mut known = lock(&self.mcp_known);
            let joined = now
                .difference(&known)
                .filter(|n| registry.exposure(n).is_some_and(|e| e.offered_by_default()))
                .cloned()
                .collect();
            *known = now;
            joined
        };
        if !joined.is_empty() {
            self.handle.extend_active_tools(&joined);
        }
    }
}

/// The names of the MCP servers' tools in `registry` (hooks' groups left out: a hook's
/// `tools.register` activates what it registers itself).
fn mcp_tools(registry: &ToolRegistry) -> BTreeSet<String> {
    let Some(d) = registry.dynamic() else {
        return BTreeSet::new();
    };
    d.groups().iter().flat_map(|g| d.group_tools(g)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::system::{RemovedTool, SystemMessage, ToolDeclaration};
    use crate::message::UserContent;
    use serde_json::json;

    fn decl(name: &str) -> ToolDeclaration {
        ToolDeclaration {
            name: name.into(),
            description: name.into(),
            parameters: json!({"type": "object"}),
            constrained_sampling: None,
        }
    }

    fn sys(added: &[&str], removed: &[&str]) -> Message {
        Message::System(SystemMessage {
            content: UserContent::Text(String::new()),
            sections: None,
            timestamp: 1,
            tools_added: (!added.is_empty()).then(|| added.iter().map(|n| decl(n)).collect()),
            tools_removed: (!removed.is_empty()).then(|| {
                removed
                    .iter()
                    .map(|n| RemovedTool {
                        name: n.to_string(),
                    })
                    .collect()
            }),
        })
    }

    fn session(messages: Vec<Message>) -> Session {
        let mut s = Session::in_memory("/w");
        for m in messages {
            s.append_message(Arc::new(m)).unwrap();
        }
        s
    }

    fn registry(names: &[&str]) -> ToolRegistry {
        let mut r = ToolRegistry::default();
        for n in names {
            r.register(crate::tools::builtin(n).unwrap());
        }
        r
    }

    #[test]
    fn the_replayed_record_restores_and_tools_that_are_gone_are_left_out() {
        let s = session(vec![
            sys(&["read", "bash", "edit", "write"], &[]),
            Message::user("hi"),
            sys(&["grep"], &["bash", "edit", "write"]),
        ]);
        let rec = recorded(&s).unwrap();
        assert_eq!(rec.current, ["read", "grep"]);
        let reg = registry(&["read", "bash", "edit", "write"]);
        let list = restore(&rec, &reg, &[]);
        assert_eq!(list, ["read", "grep"], "grep waits for its registration");
        assert_eq!(reg.offered_names(Some(&list)), ["read"]);
        let changed = restore(&rec, &reg, &["+bash".into(), "-read".into()]);
        assert_eq!(changed, ["grep", "bash"]);
        assert!(recorded(&session(vec![Message::user("hi")])).is_none());
    }

    #[test]
    fn a_list_offering_what_no_list_would_is_no_list() {
        let reg = registry(&["read", "bash"]);
        assert_eq!(normalized(&reg, vec!["bash".into(), "read".into()]), None);
        assert_eq!(
            normalized(&reg, vec!["read".into()]),
            Some(vec!["read".to_string()])
        );
        let pending = vec!["read".to_string(), "bash".into(), "mcp__s__t".into()];
        assert_eq!(normalized(&reg, pending.clone()), Some(pending));
    }

    #[test]
    fn the_builtins_a_record_activates_are_registered_unless_the_command_line_decides() {
        let s = session(vec![sys(&["read", "grep", "mine"], &[])]);
        let options = ControllerOptions::default();
        assert_eq!(restored_builtins(&s, &options), ["read", "grep"]);
        let changes = ControllerOptions {
            tools: Some(vec!["-grep".into(), "+ls".into()]),
            ..Default::default()
        };
        assert_eq!(restored_builtins(&s, &changes), ["read", "ls"]);
        let allow = ControllerOptions {
            tools: Some(vec!["read".into()]),
            ..Default::default()
        };
        assert!(restored_builtins(&s, &allow).is_empty());
    }
}
