//! Checking a hook's `register` once, when it arrives, and compiling what the host dispatches
//! with: every subscription's tool filter as one glob set, and its reply deadline capped at the
//! hook's event timeout.
//!
//! Why it is strict: a filter that silently matches nothing is a gate that is silently skipped
//! (`{bash,write}` once never matched), and a tool or command name a provider rejects breaks
//! the session later and far from its cause. So a filter that cannot compile or can never
//! match a tool name, a bad or duplicate name (or a tool name that passes for a built-in or an
//! MCP server's tool: `tool_names`), tools past the size limits (`budget`), or a zero deadline
//! is a [`RegisterError`], which the supervisor turns into a start failure that names the
//! subscription, the filter, the name or the limit, and why.
//! Things the protocol says are "logged and ignored" (an unknown event, a duplicate
//! subscription, a filter on an event that is not about a tool, a deadline above the cap) come
//! back as notes for the caller to log. Pure: no I/O.
//!
//! Matching is case-sensitive, like tool names: `Bash` does not match `bash`.

use std::sync::Arc;
use std::time::Duration;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use super::events::{is_tool_event, kind_of};
use super::protocol::{Register, Subscription};
use crate::tools::BUILTIN_NAMES;

/// Why a `register` is refused. Each message names the subscription, filter or name at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegisterError {
    #[error("subscription to {event}: tool filter {filter:?} is not a valid glob: {reason}")]
    BadGlob {
        event: String,
        filter: String,
        reason: String,
    },
    #[error("subscription to {event}: tool filter {filter:?} can never match a tool name: {why}")]
    NeverMatches {
        event: String,
        filter: String,
        why: &'static str,
    },
    #[error(
        "subscription to {event}: an empty list of tool filters matches no tool; leave out \
         `tools` to receive the event for every tool"
    )]
    EmptyFilterList { event: String },
    #[error("subscription to {event}: a deadline_ms of 0 leaves the hook no time to reply")]
    ZeroDeadline { event: String },
    #[error(
        "{what} name {name:?} is invalid: {what} names are 1 to 64 letters, digits, `_` or `-`{}",
        if *what == "flag" { ", not starting with `-` (without the leading `--`)" }
        else if *what == "command" { " (without the leading `/`)" } else { "" }
    )]
    BadName { what: &'static str, name: String },
    #[error("{what} {name:?} is registered twice")]
    Duplicate { what: &'static str, name: String },
    #[error("flag {name:?} has type {kind:?}; a flag's type is \"boolean\" or \"string\"")]
    BadFlagType { name: String, kind: String },
    #[error(
        "tool {tool:?} has exposure {value:?}; a tool's exposure is \"direct\", \"model-only\", \
         \"deferred\" or \"hidden\""
    )]
    BadExposure { tool: String, value: String },
    #[error("tool {tool:?} has an output_schema that is not a valid JSON Schema object: {reason}")]
    BadOutputSchema { tool: String, reason: String },
    /// A tool name that would pass for a built-in or an MCP server's tool.
    #[error(transparent)]
    ReservedName(#[from] super::tool_names::ReservedName),
    /// A tool definition, or all of them together, past the size limits.
    #[error(transparent)]
    TooLarge(#[from] super::budget::TooLarge),
}

/// One declared tool's own checks beyond the shape of its name: a name that passes for no other
/// tool (`tool_names`), a known exposure and an output schema that compiles. Shared by
/// `register` and `tools.register`.
pub fn check_tool(t: &super::protocol::ToolDecl) -> Result<(), RegisterError> {
    super::tool_names::check(&t.name)?;
    if let Some(e) = &t.exposure {
        if crate::tools::Exposure::parse(e).is_none() {
            return Err(RegisterError::BadExposure {
                tool: t.name.clone(),
                value: e.clone(),
            });
        }
    }
    if let Some(schema) = &t.output_schema {
        let bad = |reason: String| RegisterError::BadOutputSchema {
            tool: t.name.clone(),
            reason,
        };
        if !schema.is_object() {
            return Err(bad(format!("it is {}", super::protocol::json_kind(schema))));
        }
        crate::tools::compile_schema(schema).map_err(|e| bad(e.to_string()))?;
    }
    Ok(())
}

/// A subscription's tool filter, compiled once.
#[derive(Debug, Clone)]
pub struct ToolFilter {
    patterns: Vec<String>,
    set: GlobSet,
}

impl ToolFilter {
    /// Compiles `patterns` (the subscription to `event`'s `tools`).
    pub fn new(event: &str, patterns: &[String]) -> Result<ToolFilter, RegisterError> {
        if patterns.is_empty() {
            return Err(RegisterError::EmptyFilterList {
                event: event.to_string(),
            });
        }
        let mut set = GlobSetBuilder::new();
        for p in patterns {
            set.add(glob(event, p)?);
        }
        let set = set.build().map_err(|e| RegisterError::BadGlob {
            event: event.to_string(),
            filter: patterns.join(","),
            reason: e.kind().to_string(),
        })?;
        Ok(ToolFilter {
            patterns: patterns.to_vec(),
            set,
        })
    }

    pub fn matches(&self, tool: &str) -> bool {
        self.set.is_match(tool)
    }

    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }
}

/// One filter entry as a glob: `*`, `?`, `[…]` and `{a,b}`, matched case-sensitively against
/// the whole tool name.
fn glob(event: &str, pattern: &str) -> Result<globset::Glob, RegisterError> {
    let never = |why| RegisterError::NeverMatches {
        event: event.to_string(),
        filter: pattern.to_string(),
        why,
    };
    if pattern.is_empty() {
        return Err(never("it is empty"));
    }
    if pattern.chars().any(char::is_whitespace) {
        return Err(never("it contains whitespace"));
    }
    if has_top_level_comma(pattern) {
        return Err(never(
            "a comma outside `{…}` is part of the name (write `{a,b}` for either a or b)",
        ));
    }
    GlobBuilder::new(pattern)
        .literal_separator(false)
        .build()
        .map_err(|e| RegisterError::BadGlob {
            event: event.to_string(),
            filter: pattern.to_string(),
            reason: e.kind().to_string(),
        })
}

/// Whether `pattern` has a `,` outside any `{…}` and `[…]`: tool names have no commas, so such
/// a filter is almost certainly a list written as one string.
fn has_top_level_comma(pattern: &str) -> bool {
    let (mut braces, mut class) = (0usize, false);
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '[' if !class => class = true,
            ']' if class => class = false,
            '{' if !class => braces += 1,
            '}' if !class => braces = braces.saturating_sub(1),
            ',' if !class && braces == 0 => return true,
            _ => {}
        }
    }
    false
}

/// The built-in tools `pattern` matches (for `pi hook check`), and those it would match if
/// case were ignored (a likely mistake, since matching is case-sensitive).
pub fn builtins_matched(
    event: &str,
    pattern: &str,
) -> Result<(Vec<&'static str>, Vec<&'static str>), RegisterError> {
    let exact = glob(event, pattern)?.compile_matcher();
    let folded = GlobBuilder::new(pattern)
        .case_insensitive(true)
        .build()
        .map(|g| g.compile_matcher())
        .ok();
    let hits: Vec<&str> = BUILTIN_NAMES
        .iter()
        .copied()
        .filter(|t| exact.is_match(t))
        .collect();
    let near = BUILTIN_NAMES
        .iter()
        .copied()
        .filter(|t| !hits.contains(t) && folded.as_ref().is_some_and(|m| m.is_match(t)))
        .collect();
    Ok((hits, near))
}

/// One subscription as the host dispatches it.
#[derive(Debug, Clone)]
pub struct Subscribed {
    pub event: String,
    /// `None`: every tool (or not a tool event).
    pub filter: Option<ToolFilter>,
    /// The subscription's `deadline_ms`, capped at the hook's event timeout.
    pub deadline: Duration,
}

/// Which events a hook gets, for which tools, with which deadline.
#[derive(Debug, Clone, Default)]
pub struct Subscriptions {
    pub(super) subs: Vec<Subscribed>,
}

impl Subscriptions {
    /// The reply deadline if the hook subscribed to `event` (for tool events, for `tool`).
    pub fn wants(&self, event: &str, tool: Option<&str>) -> Option<Duration> {
        let sub = self.subs.iter().find(|s| s.event == event)?;
        match (&sub.filter, tool) {
            (Some(f), Some(t)) if !f.matches(t) => None,
            _ => Some(sub.deadline),
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &Subscribed> {
        self.subs.iter()
    }
}

/// A checked `register`: what the hook sent, and the compiled dispatch table.
#[derive(Debug, Clone)]
pub struct Registration {
    pub register: Register,
    pub subscriptions: Arc<Subscriptions>,
    /// What was logged and ignored (unknown events, duplicates, …), for the caller to log.
    pub notes: Vec<String>,
    /// The size of `register.tools` as JSON, which counts towards the hook's tool budget.
    pub tool_bytes: usize,
}

impl Registration {
    /// The registration of a hook that has not registered (or could not): nothing at all.
    pub fn none() -> Registration {
        Registration {
            register: Register {
                protocol_version: 0,
                name: String::new(),
                version: None,
                subscriptions: Vec::new(),
                tools: Vec::new(),
                commands: Vec::new(),
                flags: Vec::new(),
                fail: None,
            },
            subscriptions: Arc::default(),
            notes: Vec::new(),
            tool_bytes: 0,
        }
    }

    /// The events `register` subscribed to (known ones; a later `subscribe` is not counted).
    pub fn subscriptions_registered(&self) -> Vec<String> {
        self.register
            .subscriptions
            .iter()
            .filter(|s| kind_of(&s.event).is_some())
            .map(|s| s.event.clone())
            .collect()
    }
}

/// Tool and command names: what providers accept as a tool name, `^[A-Za-z0-9_-]{1,64}$`.
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Flag names: as [`valid_name`], and not starting with `-` (`--name` is how they are used).
pub fn valid_flag_name(name: &str) -> bool {
    valid_name(name) && !name.starts_with('-')
}

fn unique<'a>(
    what: &'static str,
    names: impl Iterator<Item = &'a str>,
    valid: fn(&str) -> bool,
) -> Result<(), RegisterError> {
    let mut seen: Vec<&str> = Vec::new();
    for name in names {
        if !valid(name) {
            return Err(RegisterError::BadName {
                what,
                name: name.to_string(),
            });
        }
        if seen.contains(&name) {
            return Err(RegisterError::Duplicate {
                what,
                name: name.to_string(),
            });
        }
        seen.push(name);
    }
    Ok(())
}

/// A tool named twice in one `register`: the later definition replaces the earlier one in its
/// place, as a second `registerTool` of the same name does in pi (seed A §9.2), with a note.
fn later_definition_wins(
    tools: Vec<super::protocol::ToolDecl>,
    notes: &mut Vec<String>,
) -> Vec<super::protocol::ToolDecl> {
    let mut out: Vec<super::protocol::ToolDecl> = Vec::with_capacity(tools.len());
    for t in tools {
        match out.iter_mut().find(|o| o.name == t.name) {
            Some(earlier) => {
                notes.push(format!(
                    "tool {:?} is registered twice: the later definition replaces the earlier",
                    t.name
                ));
                *earlier = t;
            }
            None => out.push(t),
        }
    }
    out
}

/// One subscription compiled: its tool filter checked (even on an event that then ignores it:
/// a broken filter is a broken hook) and its deadline capped at `event_timeout` (with a note).
pub(super) fn compile(
    s: &Subscription,
    event_timeout: Duration,
    notes: &mut Vec<String>,
) -> Result<Subscribed, RegisterError> {
    let filter = s
        .tools
        .as_deref()
        .map(|p| ToolFilter::new(&s.event, p))
        .transpose()?;
    let deadline = match s.deadline_ms {
        Some(0) => {
            return Err(RegisterError::ZeroDeadline {
                event: s.event.clone(),
            })
        }
        Some(ms) if Duration::from_millis(ms) > event_timeout => {
            notes.push(format!(
                "the deadline_ms {ms} of the subscription to {} is capped at the hook's event \
                 timeout of {} ms",
                s.event,
                event_timeout.as_millis()
            ));
            event_timeout
        }
        Some(ms) => Duration::from_millis(ms),
        None => event_timeout,
    };
    Ok(Subscribed {
        event: s.event.clone(),
        filter,
        deadline,
    })
}

/// Checks `register` and compiles its subscriptions; `event_timeout` is the hook's default
/// reply deadline and the cap on any `deadline_ms` it asks for.
pub fn check(
    mut register: Register,
    event_timeout: Duration,
) -> Result<Registration, RegisterError> {
    let mut notes = Vec::new();
    if let Some(t) = register.tools.iter().find(|t| !valid_name(&t.name)) {
        return Err(RegisterError::BadName {
            what: "tool",
            name: t.name.clone(),
        });
    }
    register.tools = later_definition_wins(std::mem::take(&mut register.tools), &mut notes);
    unique(
        "command",
        register.commands.iter().map(|c| c.name.as_str()),
        valid_name,
    )?;
    unique(
        "flag",
        register.flags.iter().map(|f| f.name.as_str()),
        valid_flag_name,
    )?;
    let mut tool_bytes = 0usize;
    for t in &register.tools {
        check_tool(t)?;
        let size = super::budget::json_size(t);
        super::budget::check_tool(&t.name, size)?;
        tool_bytes = tool_bytes.saturating_add(size);
    }
    super::budget::check_registered(&register.name, tool_bytes)?;
    if let Some(f) = register
        .flags
        .iter()
        .find(|f| !matches!(f.kind.as_str(), "boolean" | "string"))
    {
        return Err(RegisterError::BadFlagType {
            name: f.name.clone(),
            kind: f.kind.clone(),
        });
    }
    let mut subs: Vec<Subscribed> = Vec::new();
    for s in &register.subscriptions {
        let Subscribed {
            filter, deadline, ..
        } = compile(s, event_timeout, &mut notes)?;
        if kind_of(&s.event).is_none() {
            notes.push(format!(
                "subscription to unknown event {:?} ignored",
                s.event
            ));
            continue;
        }
        if subs.iter().any(|x| x.event == s.event) {
            notes.push(format!(
                "duplicate subscription to {} ignored (the first one counts)",
                s.event
            ));
            continue;
        }
        let filter = if filter.is_some() && !is_tool_event(&s.event) {
            notes.push(format!(
                "the tool filter of the subscription to {} is ignored: it is not a tool event",
                s.event
            ));
            None
        } else {
            filter
        };
        subs.push(Subscribed {
            event: s.event.clone(),
            filter,
            deadline,
        });
    }
    Ok(Registration {
        register,
        subscriptions: Arc::new(Subscriptions { subs }),
        notes,
        tool_bytes,
    })
}

#[cfg(test)]
#[path = "registration_tests.rs"]
mod tests;
