//! The table of hook events: every event's name and the semantics kind that decides how the
//! runner waits for and combines replies. The runner, `pi hook check`, and the protocol
//! document's test all read this one table.

/// How replies to an event combine (SPEC 4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Sent in order without waiting; no reply.
    Notify,
    /// Sent and acknowledged (an empty reply) before the host goes on.
    AwaitedNotify,
    /// In load order; each hook sees earlier patches; the first block wins; failure blocks.
    Gate,
    /// Each hook gets the accumulated value; a failing hook is skipped.
    Chain,
    /// The first definite answer wins.
    FirstDecider,
    /// `cancel` stops at once; otherwise the last non-empty result wins.
    Cancelable,
    /// Results are concatenated.
    Collect,
    /// Each hook sees the proposal so far (entries, continue) and may replace it.
    Boundary,
}

impl Kind {
    /// Whether the host sends an `id` and waits for a `reply`.
    pub fn expects_reply(self) -> bool {
        !matches!(self, Kind::Notify)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Notify => "notify",
            Kind::AwaitedNotify => "awaited notify",
            Kind::Gate => "gate",
            Kind::Chain => "chain",
            Kind::FirstDecider => "first decider",
            Kind::Cancelable => "cancelable",
            Kind::Collect => "collect",
            Kind::Boundary => "boundary",
        }
    }
}

/// Every event a hook can subscribe to, with its kind.
pub const EVENTS: &[(&str, Kind)] = &[
    ("agent_start", Kind::Notify),
    ("agent_end", Kind::Notify),
    ("agent_settled", Kind::Notify),
    ("turn_start", Kind::Notify),
    ("message_start", Kind::Notify),
    ("message_update", Kind::Notify),
    ("tool_execution_start", Kind::Notify),
    ("tool_execution_update", Kind::Notify),
    ("tool_execution_end", Kind::Notify),
    ("session_compact", Kind::Notify),
    ("session_tree", Kind::Notify),
    ("session_info_changed", Kind::Notify),
    ("model_select", Kind::Notify),
    ("thinking_level_select", Kind::Notify),
    ("after_provider_response", Kind::Notify),
    ("ui_prompt_start", Kind::Notify),
    ("ui_prompt_end", Kind::Notify),
    ("session_start", Kind::AwaitedNotify),
    ("session_shutdown", Kind::AwaitedNotify),
    ("tool_call", Kind::Gate),
    ("input", Kind::Chain),
    ("context", Kind::Chain),
    ("before_agent_start", Kind::Chain),
    ("before_provider_request", Kind::Chain),
    ("before_provider_headers", Kind::Chain),
    ("message_end", Kind::Chain),
    ("tool_result", Kind::Chain),
    ("project_trust", Kind::FirstDecider),
    ("user_bash", Kind::FirstDecider),
    ("session_before_switch", Kind::Cancelable),
    ("session_before_fork", Kind::Cancelable),
    ("session_before_compact", Kind::Cancelable),
    ("session_before_tree", Kind::Cancelable),
    ("resources_discover", Kind::Collect),
    ("turn_end", Kind::Boundary),
    ("agent_before_settle", Kind::Boundary),
];

/// The kind of an event, or `None` for a name the host does not know.
pub fn kind_of(name: &str) -> Option<Kind> {
    EVENTS.iter().find(|(n, _)| *n == name).map(|(_, k)| *k)
}

/// Events whose subscriptions may carry a tool-name filter.
pub fn is_tool_event(name: &str) -> bool {
    matches!(
        name,
        "tool_call"
            | "tool_result"
            | "tool_execution_start"
            | "tool_execution_update"
            | "tool_execution_end"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_is_listed_once() {
        let mut names: Vec<_> = EVENTS.iter().map(|(n, _)| *n).collect();
        names.sort();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len());
        assert_eq!(kind_of("tool_call"), Some(Kind::Gate));
        assert_eq!(kind_of("nope"), None);
    }
}
