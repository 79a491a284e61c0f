//! The transcript's system messages as Responses `input` items, for models that take them in
//! place (see [`super::transcript`]), as pi 1.6's `convertResponsesMessages` writes them.
//!
//! The first system message is the leading prompt, each later one an update where it stands.
//! What a model can say about tools in place decides the rest (1.6's
//! `getResponsesToolSupport`): with `additional_tools` items (`changes`), every system message
//! declares the tools it adds in one, after the first preceded by a note that the update is
//! incremental (naming the tools still unavailable), and a removal is announced in words, as
//! such an item cannot remove a tool; with synthetic tool search (`additions`), the additions
//! after the request's list are a client-side `tool_search_call` and its output; otherwise
//! the request's list is the current set and system messages carry only text.

use std::borrow::Cow;

use indexmap::IndexSet;
use serde::Serialize;

use super::openai_responses_body::{converted, Flavor, Item};
use super::openai_responses_ids::short_hash;
use super::transcript::{self, ToolSupport};
use super::{ProviderError, Request};
use crate::message::system::SystemMessage;

/// A synthetic tool search's arguments.
#[derive(Debug, Serialize)]
pub struct SearchArguments {
    query: String,
    limit: usize,
}

/// 1.6's `getResponsesToolSupport`.
pub fn support(req: &Request) -> ToolSupport {
    let on = |k: &str| req.model.compat.get(k) == Some(&serde_json::Value::Bool(true));
    if on("supportsMidConvoSystemMessages") && on("supportsAdditionalTools") {
        ToolSupport::Changes
    } else if on("supportsToolSearch") {
        ToolSupport::Additions
    } else {
        ToolSupport::None
    }
}

const INCREMENTAL: &str = "This is an incremental tools update. Previously declared tools remain available unless explicitly marked unavailable. A tool declared again here is available again, and its latest definition replaces the earlier one.";

/// The state the system messages of one conversation share.
pub struct SystemItems<'a> {
    support: ToolSupport,
    /// How many system messages the request's tool list stands for.
    folded: usize,
    seen: usize,
    /// Whether an `additional_tools` item was written.
    declared: bool,
    /// Tools announced as removed and not declared again since, in the order announced.
    unavailable: IndexSet<&'a str>,
    role: &'static str,
    flavor: Flavor<'a>,
}

impl<'a> SystemItems<'a> {
    pub fn new(
        support: ToolSupport,
        folded: usize,
        role: &'static str,
        flavor: Flavor<'a>,
    ) -> Self {
        SystemItems {
            support,
            folded,
            seen: 0,
            declared: false,
            unavailable: IndexSet::new(),
            role,
            flavor,
        }
    }

    /// The items of system message `s`; `leading` when it opens the conversation, `msg_index`
    /// is 1.6's count of the messages before it (it seeds a tool search's id).
    pub fn push(
        &mut self,
        req: &Request,
        s: &'a SystemMessage,
        leading: bool,
        msg_index: usize,
        out: &mut Vec<Item<'a>>,
    ) -> Result<(), ProviderError> {
        let anchors = self.seen >= self.folded;
        self.seen += 1;
        if anchors {
            self.additions(req, s, msg_index, out)?;
        }
        let mut parts = vec![if leading {
            s.text()
        } else {
            transcript::update_text(s)
        }];
        if anchors {
            // A redefinition is a removal and an addition of one name: only true removals
            // are announced.
            let added: Vec<&str> = s
                .tools_added
                .iter()
                .flatten()
                .map(|t| t.name.as_str())
                .collect();
            let removed: Vec<&'a str> = s
                .tools_removed
                .iter()
                .flatten()
                .map(|t| t.name.as_str())
                .filter(|n| !added.contains(n))
                .collect();
            if !removed.is_empty() {
                let lines: Vec<String> = removed.iter().map(|n| format!("- {n}")).collect();
                parts.push(format!(
                    "The following tools are no longer available. Do not call them:\n{}",
                    lines.join("\n")
                ));
            }
            self.unavailable.extend(removed);
        }
        parts.retain(|p| !p.is_empty());
        let text = parts.join("\n\n");
        if !text.is_empty() {
            out.push(Item::Role {
                role: self.role,
                content: Cow::Owned(text),
            });
        }
        Ok(())
    }

    /// 1.6's `appendSystemToolAdditions`.
    fn additions(
        &mut self,
        req: &Request,
        s: &'a SystemMessage,
        msg_index: usize,
        out: &mut Vec<Item<'a>>,
    ) -> Result<(), ProviderError> {
        let added: Vec<_> = s.tools_added.iter().flatten().collect();
        for t in &added {
            self.unavailable.shift_remove(t.name.as_str());
        }
        if added.is_empty() {
            return Ok(());
        }
        match self.support {
            ToolSupport::Changes => {
                if self.declared {
                    out.push(Item::Role {
                        role: self.role,
                        content: Cow::Owned(self.incremental_notice()),
                    });
                }
                self.declared = true;
                out.push(Item::AdditionalTools {
                    ty: "additional_tools",
                    role: "developer",
                    tools: converted(req, &self.flavor, added, false)?,
                });
            }
            ToolSupport::Additions => {
                let names: Vec<&str> = added.iter().map(|t| t.name.as_str()).collect();
                let seed = format!("system:{msg_index}:{}", names.join(","));
                let call_id = format!("pi_tool_load_{}", short_hash(&seed));
                out.push(Item::ToolSearchCall {
                    ty: "tool_search_call",
                    call_id: call_id.clone(),
                    execution: "client",
                    status: "completed",
                    arguments: SearchArguments {
                        query: names.join(" "),
                        limit: names.len(),
                    },
                });
                out.push(Item::ToolSearchOutput {
                    ty: "tool_search_output",
                    call_id,
                    execution: "client",
                    status: "completed",
                    tools: converted(req, &self.flavor, added, true)?,
                });
            }
            ToolSupport::None => {}
        }
        Ok(())
    }

    fn incremental_notice(&self) -> String {
        if self.unavailable.is_empty() {
            return INCREMENTAL.to_string();
        }
        let names: Vec<&str> = self.unavailable.iter().copied().collect();
        format!("{INCREMENTAL}\nStill unavailable: {}.", names.join(", "))
    }
}
