//! Which names a hook may give the tools it provides, beyond the shape every name has
//! (`registration::valid_name`): none that passes for a tool it is not.
//!
//! Refused, in `register` and in `tools.register` alike: a name that differs from a built-in
//! (`read bash edit write grep find ls`) only by case (`Read`, `BASH`); Claude Code's name for a
//! built-in (`Glob`, `MultiEdit`, in any case); and any name in the `mcp__` namespace (in any
//! case), where pi names MCP servers' tools (`mcp__<server>__<tool>`). Each would be taken for
//! something else: Claude Code hooks and policies matching `Read` or `mcp__fs__.*` would judge
//! the hook's tool as pi's `read` or a server's, and a person reading the transcript or an
//! approval dialog would too. A hook may still replace a built-in under its exact name (a
//! documented feature, visible as what it is). Pure.

use crate::hooks::claude::names::claude_names;
use crate::tools::BUILTIN_NAMES;

/// The namespace of MCP servers' tools.
const MCP_PREFIX: &str = "mcp__";

/// Why a hook's tool name is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReservedName {
    #[error(
        "tool name {name:?} differs from the built-in tool {builtin:?} only by case, so it would \
         pass for it; a hook may replace a built-in only under its exact name"
    )]
    CaseOfBuiltin { name: String, builtin: &'static str },
    #[error(
        "tool name {name:?} is Claude Code's name for the built-in tool {builtin:?}, so hooks and \
         policies would take it for that tool; pick another name"
    )]
    ClaudeName { name: String, builtin: &'static str },
    #[error(
        "tool name {name:?} is in the `mcp__` namespace, which is reserved for MCP servers' tools \
         (`mcp__<server>__<tool>`, in any case); pick another name"
    )]
    McpNamespace { name: String },
}

/// Whether a hook may call a tool it provides `name`.
pub fn check(name: &str) -> Result<(), ReservedName> {
    let owned = || name.to_string();
    if name
        .get(..MCP_PREFIX.len())
        .is_some_and(|p| p.eq_ignore_ascii_case(MCP_PREFIX))
    {
        return Err(ReservedName::McpNamespace { name: owned() });
    }
    if BUILTIN_NAMES.contains(&name) {
        return Ok(());
    }
    for builtin in BUILTIN_NAMES {
        if name.eq_ignore_ascii_case(builtin) {
            return Err(ReservedName::CaseOfBuiltin {
                name: owned(),
                builtin,
            });
        }
        if claude_names(builtin)
            .iter()
            .any(|c| name.eq_ignore_ascii_case(c))
        {
            return Err(ReservedName::ClaudeName {
                name: owned(),
                builtin,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_pass_for_a_built_in_or_an_mcp_tool_are_refused() {
        for n in ["Read", "BASH", "wRite", "LS", "Ls", "Find", "GREP", "Edit"] {
            assert!(
                matches!(check(n), Err(ReservedName::CaseOfBuiltin { .. })),
                "{n}"
            );
        }
        for (n, builtin) in [("Glob", "find"), ("glob", "find"), ("MultiEdit", "edit")] {
            assert_eq!(
                check(n),
                Err(ReservedName::ClaudeName {
                    name: n.into(),
                    builtin
                })
            );
        }
        for n in ["mcp__fs__read_file", "MCP__x", "Mcp__", "mcP__a__b"] {
            assert!(
                matches!(check(n), Err(ReservedName::McpNamespace { .. })),
                "{n}"
            );
        }
    }

    #[test]
    fn exact_built_in_names_and_ordinary_names_are_allowed() {
        for n in BUILTIN_NAMES {
            assert_eq!(check(n), Ok(()), "{n}");
        }
        for n in [
            "read_notes",
            "scan_secrets",
            "mcp_x",
            "mcp",
            "Reader",
            "bash2",
            "WebFetch",
        ] {
            assert_eq!(check(n), Ok(()), "{n}");
        }
    }

    #[test]
    fn the_refusal_names_the_tool_and_says_why() {
        let e = check("Read").unwrap_err().to_string();
        assert!(e.contains("\"Read\"") && e.contains("\"read\"") && e.contains("only by case"));
        let e = check("mcp__fs__x").unwrap_err().to_string();
        assert!(e.contains("\"mcp__fs__x\"") && e.contains("reserved for MCP"));
    }
}
