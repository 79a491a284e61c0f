//! The hook events as types: every event's wire name and the semantics kind that decides how
//! the runner waits for and combines replies. Each kind has its own enum and the runner has one
//! method per kind taking that enum, so an event's semantics are fixed here, in one place, and
//! the compiler refuses an event sent with the wrong ones. `pi hook check`, registration and
//! the protocol document's test read the same types through [`Event::all`].

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
    /// Every hook is asked; the last one that gives an answer wins over pi's own.
    LastOverride,
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
            Kind::LastOverride => "last override",
        }
    }
}

/// Declares one semantics kind's events: an enum whose variants are the events, their wire
/// names, and the [`Event`] variant that wraps them. An event's kind is which of these enums it
/// is in, so the runner's methods (one per kind) cannot be handed an event of another kind.
macro_rules! events_of_kind {
    ($(#[$doc:meta])* $enum:ident => $wrap:ident { $($variant:ident = $name:literal,)* }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $enum {
            $($variant,)*
        }

        impl $enum {
            /// Every event of this kind, in the order of the protocol document.
            pub const ALL: &'static [$enum] = &[$($enum::$variant,)*];

            /// The event's name on the wire.
            pub fn name(self) -> &'static str {
                match self {
                    $($enum::$variant => $name,)*
                }
            }
        }

        impl From<$enum> for Event {
            fn from(e: $enum) -> Event {
                Event::$wrap(e)
            }
        }
    };
}

events_of_kind! {
    /// Sent in order, no reply.
    NotifyEvent => Notify {
        AgentStart = "agent_start",
        AgentEnd = "agent_end",
        AgentSettled = "agent_settled",
        TurnStart = "turn_start",
        MessageStart = "message_start",
        MessageUpdate = "message_update",
        ToolExecutionStart = "tool_execution_start",
        ToolExecutionUpdate = "tool_execution_update",
        ToolExecutionEnd = "tool_execution_end",
        SessionCompact = "session_compact",
        SessionTree = "session_tree",
        SessionInfoChanged = "session_info_changed",
        ModelSelect = "model_select",
        ThinkingLevelSelect = "thinking_level_select",
        AfterProviderResponse = "after_provider_response",
        ProviderStreamEvent = "provider_stream_event",
        UiPromptStart = "ui_prompt_start",
        UiPromptEnd = "ui_prompt_end",
    }
}

events_of_kind! {
    /// Acknowledged by every subscriber before the host goes on.
    AwaitedEvent => AwaitedNotify {
        SessionStart = "session_start",
        SessionShutdown = "session_shutdown",
    }
}

events_of_kind! {
    /// Load order, patches seen by later hooks, first block wins, failure blocks.
    GateEvent => Gate {
        ToolCall = "tool_call",
    }
}

events_of_kind! {
    /// Each hook transforms the value the previous one produced.
    ChainEvent => Chain {
        Input = "input",
        Context = "context",
        ContextWithSystem = "context_with_system",
        BeforeAgentStart = "before_agent_start",
        BeforeProviderRequest = "before_provider_request",
        BeforeProviderHeaders = "before_provider_headers",
        MessageEnd = "message_end",
        PrepareArguments = "prepare_arguments",
        ToolResult = "tool_result",
    }
}

events_of_kind! {
    /// The first definite answer wins.
    DeciderEvent => FirstDecider {
        ProjectTrust = "project_trust",
        UserBash = "user_bash",
    }
}

events_of_kind! {
    /// `cancel` stops at once; otherwise the last non-empty result wins.
    CancelableEvent => Cancelable {
        SessionBeforeSwitch = "session_before_switch",
        SessionBeforeFork = "session_before_fork",
        SessionBeforeCompact = "session_before_compact",
        SessionBeforeTree = "session_before_tree",
    }
}

events_of_kind! {
    /// Every hook's results are concatenated.
    CollectEvent => Collect {
        ResourcesDiscover = "resources_discover",
    }
}

events_of_kind! {
    /// Each hook sees the proposal so far and may replace it.
    BoundaryEvent => Boundary {
        TurnEnd = "turn_end",
        AgentBeforeSettle = "agent_before_settle",
    }
}

events_of_kind! {
    /// Every hook is asked; the last explicit answer overrides pi's.
    OverrideEvent => LastOverride {
        CacheWarmingDecision = "cache_warming_decision",
    }
}

/// Any hook event: the kind is the variant, the event the kind's own enum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Event {
    Notify(NotifyEvent),
    AwaitedNotify(AwaitedEvent),
    Gate(GateEvent),
    Chain(ChainEvent),
    FirstDecider(DeciderEvent),
    Cancelable(CancelableEvent),
    Collect(CollectEvent),
    Boundary(BoundaryEvent),
    LastOverride(OverrideEvent),
}

impl Event {
    /// Every event a hook can subscribe to.
    pub fn all() -> impl Iterator<Item = Event> {
        let notify = NotifyEvent::ALL.iter().map(|&e| Event::from(e));
        let awaited = AwaitedEvent::ALL.iter().map(|&e| Event::from(e));
        let gate = GateEvent::ALL.iter().map(|&e| Event::from(e));
        let chain = ChainEvent::ALL.iter().map(|&e| Event::from(e));
        let decider = DeciderEvent::ALL.iter().map(|&e| Event::from(e));
        let cancelable = CancelableEvent::ALL.iter().map(|&e| Event::from(e));
        let collect = CollectEvent::ALL.iter().map(|&e| Event::from(e));
        let boundary = BoundaryEvent::ALL.iter().map(|&e| Event::from(e));
        let last_override = OverrideEvent::ALL.iter().map(|&e| Event::from(e));
        notify
            .chain(awaited)
            .chain(gate)
            .chain(chain)
            .chain(decider)
            .chain(cancelable)
            .chain(collect)
            .chain(boundary)
            .chain(last_override)
    }

    /// The event of this wire name, if the host knows it.
    pub fn parse(name: &str) -> Option<Event> {
        Event::all().find(|e| e.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Event::Notify(e) => e.name(),
            Event::AwaitedNotify(e) => e.name(),
            Event::Gate(e) => e.name(),
            Event::Chain(e) => e.name(),
            Event::FirstDecider(e) => e.name(),
            Event::Cancelable(e) => e.name(),
            Event::Collect(e) => e.name(),
            Event::Boundary(e) => e.name(),
            Event::LastOverride(e) => e.name(),
        }
    }

    pub fn kind(self) -> Kind {
        match self {
            Event::Notify(_) => Kind::Notify,
            Event::AwaitedNotify(_) => Kind::AwaitedNotify,
            Event::Gate(_) => Kind::Gate,
            Event::Chain(_) => Kind::Chain,
            Event::FirstDecider(_) => Kind::FirstDecider,
            Event::Cancelable(_) => Kind::Cancelable,
            Event::Collect(_) => Kind::Collect,
            Event::Boundary(_) => Kind::Boundary,
            Event::LastOverride(_) => Kind::LastOverride,
        }
    }

    /// Whether a subscription to this event may carry a tool-name filter.
    pub fn filters_tools(self) -> bool {
        matches!(
            self,
            Event::Gate(GateEvent::ToolCall)
                | Event::Chain(ChainEvent::ToolResult | ChainEvent::PrepareArguments)
                | Event::Notify(
                    NotifyEvent::ToolExecutionStart
                        | NotifyEvent::ToolExecutionUpdate
                        | NotifyEvent::ToolExecutionEnd
                )
        )
    }
}

/// The kind of an event, or `None` for a name the host does not know.
pub fn kind_of(name: &str) -> Option<Kind> {
    Event::parse(name).map(Event::kind)
}

/// Events whose subscriptions may carry a tool-name filter.
pub fn is_tool_event(name: &str) -> bool {
    Event::parse(name).is_some_and(Event::filters_tools)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_is_listed_once() {
        let mut names: Vec<_> = Event::all().map(Event::name).collect();
        names.sort();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len());
        assert_eq!(kind_of("tool_call"), Some(Kind::Gate));
        assert_eq!(kind_of("nope"), None);
        assert!(is_tool_event("tool_result"));
        assert!(!is_tool_event("input"));
        assert_eq!(kind_of("cache_warming_decision"), Some(Kind::LastOverride));
    }
}
