//! Tools that come and go while pi runs — an MCP server's, as it connects, changes its list
//! or drops, and a hook's `tools.register` after start-up — kept apart from the run's fixed
//! registry so a change never rebuilds it: the registry consults this layer for specs,
//! lookups and validation. Each tool has an [`Exposure`] (the one type MCP and hooks share):
//! `direct` and `model-only` ones are declared to the model, `deferred` ones only once
//! activated (by `tool_search` or `tools.set_active`), `hidden` ones never. Tools are grouped
//! (one group per MCP server, one per hook: [`hook_group`]) so a group's whole list is
//! replaced at once.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, RwLock};

use super::{LazyValidator, Tool};
use crate::provider::ToolSpec;

/// How the model, and hooks' `tools.execute`, reach a tool (the seeds' `ToolExposure`):
///
/// | exposure | offered by default | `tools.execute` |
/// |---|---|---|
/// | `direct` | yes | while offered |
/// | `model-only` | yes | never (an entry point for the model alone) |
/// | `deferred` | once activated | yes |
/// | `hidden` | never (activating it is refused) | never |
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exposure {
    /// Declared to the model like a built-in tool.
    Direct,
    /// Declared to the model; hooks cannot run it as a nested call.
    ModelOnly,
    /// Declared only after `tool_search` or `tools.set_active` activates it.
    Deferred,
    /// Never offered.
    Hidden,
}

impl Exposure {
    /// `codemode` and `codemode-deferred` mean `deferred` until codemode exists.
    pub fn parse(s: &str) -> Option<Exposure> {
        match s {
            "direct" => Some(Exposure::Direct),
            "model-only" => Some(Exposure::ModelOnly),
            "deferred" | "codemode" | "codemode-deferred" => Some(Exposure::Deferred),
            "hidden" => Some(Exposure::Hidden),
            _ => None,
        }
    }

    /// A hook tool's declared exposure: `direct` when absent or unknown (`register` refuses
    /// unknown ones, see `registration::check_tool`).
    pub fn declared(name: Option<&str>) -> Exposure {
        name.and_then(Exposure::parse).unwrap_or(Exposure::Direct)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Exposure::Direct => "direct",
            Exposure::ModelOnly => "model-only",
            Exposure::Deferred => "deferred",
            Exposure::Hidden => "hidden",
        }
    }

    /// Declared to the model without being activated first.
    pub fn offered_by_default(self) -> bool {
        matches!(self, Exposure::Direct | Exposure::ModelOnly)
    }
}

/// The group holding the tools hook `hook` registered after start-up.
pub fn hook_group(hook: &str) -> String {
    format!("{HOOK_GROUP_PREFIX}{hook}")
}

/// Hook groups' prefix: a colon cannot appear in an MCP server's name, so the two never meet.
pub const HOOK_GROUP_PREFIX: &str = "hook:";

pub(super) struct DynEntry {
    pub tool: Arc<dyn Tool>,
    pub exposure: Exposure,
    pub validator: LazyValidator,
}

#[derive(Default)]
struct State {
    /// Group → its tools, in the order the group gave them.
    groups: BTreeMap<String, Vec<String>>,
    entries: BTreeMap<String, DynEntry>,
    activated: BTreeSet<String>,
    /// Bumped by every change; the registry's cached specs carry the version they were built at.
    version: u64,
    specs: Option<Arc<[ToolSpec]>>,
}

/// A deferred tool, for `tool_search`.
#[derive(Debug, Clone)]
pub struct DeferredTool {
    pub name: String,
    pub description: String,
    pub group: String,
    pub active: bool,
}

/// The shared layer; cheap to clone by `Arc`.
#[derive(Default)]
pub struct DynamicTools {
    state: RwLock<State>,
}

impl DynamicTools {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|p| p.into_inner())
    }

    /// Replace a group's tools. Activations of tools that are still there survive.
    pub fn set_group(&self, group: &str, tools: Vec<(Arc<dyn Tool>, Exposure)>) {
        let mut s = self.write();
        if let Some(old) = s.groups.remove(group) {
            for n in old {
                s.entries.remove(&n);
            }
        }
        let mut names = Vec::with_capacity(tools.len());
        for (tool, exposure) in tools {
            let name = tool.name().to_string();
            names.push(name.clone());
            s.entries.insert(
                name,
                DynEntry {
                    tool,
                    exposure,
                    validator: LazyValidator::default(),
                },
            );
        }
        s.groups.insert(group.to_string(), names);
        let live: BTreeSet<String> = s.entries.keys().cloned().collect();
        s.activated.retain(|n| live.contains(n));
        s.version += 1;
        s.specs = None;
    }

    pub fn remove_group(&self, group: &str) {
        self.set_group(group, Vec::new());
        self.write().groups.remove(group);
    }

    /// Make deferred tools visible from the next model request on; returns the names that
    /// exist and are deferred.
    pub fn activate(&self, names: &[String]) -> Vec<String> {
        let mut s = self.write();
        let ok: Vec<String> = names
            .iter()
            .filter(|n| {
                s.entries
                    .get(*n)
                    .is_some_and(|e| e.exposure == Exposure::Deferred)
            })
            .cloned()
            .collect();
        for n in &ok {
            s.activated.insert(n.clone());
        }
        s.version += 1;
        s.specs = None;
        ok
    }

    /// Every deferred tool, in group order.
    pub fn deferred(&self) -> Vec<DeferredTool> {
        let s = self.read();
        s.groups
            .iter()
            .flat_map(|(g, names)| names.iter().map(move |n| (g, n)))
            .filter_map(|(g, n)| {
                let e = s.entries.get(n)?;
                (e.exposure == Exposure::Deferred).then(|| DeferredTool {
                    name: n.clone(),
                    description: e.tool.description().to_string(),
                    group: g.clone(),
                    active: s.activated.contains(n),
                })
            })
            .collect()
    }

    /// How many tools a group has of each exposure: (direct, deferred, hidden).
    pub fn counts(&self, group: &str) -> (usize, usize, usize) {
        let s = self.read();
        let mut c = (0, 0, 0);
        for n in s.groups.get(group).into_iter().flatten() {
            match s.entries.get(n).map(|e| e.exposure) {
                Some(Exposure::Direct | Exposure::ModelOnly) => c.0 += 1,
                Some(Exposure::Deferred) => c.1 += 1,
                Some(Exposure::Hidden) => c.2 += 1,
                None => {}
            }
        }
        c
    }

    /// The MCP servers that have tools now, in name order (hooks' groups left out).
    pub fn groups(&self) -> Vec<String> {
        self.read()
            .groups
            .keys()
            .filter(|g| !g.starts_with(HOOK_GROUP_PREFIX))
            .cloned()
            .collect()
    }

    /// The names of a group's tools, in the order it gave them.
    pub fn group_tools(&self, group: &str) -> Vec<String> {
        self.read().groups.get(group).cloned().unwrap_or_default()
    }

    /// The group a tool belongs to.
    pub fn group_of(&self, name: &str) -> Option<String> {
        let s = self.read();
        s.groups
            .iter()
            .find(|(_, names)| names.iter().any(|n| n == name))
            .map(|(g, _)| g.clone())
    }

    /// A tool's exposure, whether or not it is visible now.
    pub fn exposure(&self, name: &str) -> Option<Exposure> {
        self.read().entries.get(name).map(|e| e.exposure)
    }

    /// The server's and the tool's own names of MCP tool `name` (see `Tool::mcp_origin`).
    pub fn mcp_origin(&self, name: &str) -> Option<(String, String)> {
        let s = self.read();
        let (server, tool) = s.entries.get(name)?.tool.mcp_origin()?;
        Some((server.to_string(), tool.to_string()))
    }

    /// Whether a deferred tool was activated.
    pub fn is_activated(&self, name: &str) -> bool {
        self.read().activated.contains(name)
    }

    pub fn version(&self) -> u64 {
        self.read().version
    }

    fn visible(s: &State, e: &DynEntry, name: &str) -> bool {
        match e.exposure {
            Exposure::Direct | Exposure::ModelOnly => true,
            Exposure::Deferred => s.activated.contains(name),
            Exposure::Hidden => false,
        }
    }

    /// The tools the model may see and call now, in group order.
    pub fn specs(&self) -> Arc<[ToolSpec]> {
        if let Some(s) = self.read().specs.clone() {
            return s;
        }
        let mut s = self.write();
        let specs: Arc<[ToolSpec]> = s
            .groups
            .values()
            .flatten()
            .filter_map(|n| s.entries.get(n).map(|e| (n, e)))
            .filter(|(n, e)| Self::visible(&s, e, n))
            .map(|(_, e)| ToolSpec::of(e.tool.as_ref()))
            .collect();
        s.specs = Some(specs.clone());
        specs
    }

    /// Any tool of the layer, visible or not, with its validator and exposure.
    pub(super) fn get_any(&self, name: &str) -> Option<(Arc<dyn Tool>, LazyValidator, Exposure)> {
        let s = self.read();
        let e = s.entries.get(name)?;
        Some((e.tool.clone(), e.validator.clone(), e.exposure))
    }

    /// Names of every tool that is not hidden, visible now or not, in group order.
    pub fn all_names(&self) -> Vec<String> {
        let s = self.read();
        s.groups
            .values()
            .flatten()
            .filter(|n| {
                s.entries
                    .get(*n)
                    .is_some_and(|e| e.exposure != Exposure::Hidden)
            })
            .cloned()
            .collect()
    }

    /// Names of the visible tools, in group order.
    pub fn names(&self) -> Vec<String> {
        let s = self.read();
        s.groups
            .values()
            .flatten()
            .filter(|n| s.entries.get(*n).is_some_and(|e| Self::visible(&s, e, n)))
            .cloned()
            .collect()
    }
}
