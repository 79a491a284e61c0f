//! Dynamic subscriptions: what `subscribe` and `unsubscribe` (hook → host, after `register`) do
//! to a hook's compiled subscription set. A hook can listen to a costly event
//! (`message_update`) only while it needs it, instead of paying for every delta all session.
//!
//! A change is checked whole and applied whole: either every subscription in it is valid and
//! the hook's set is replaced by the new one (for every event dispatched afterwards; an event
//! already being dispatched keeps the set it started with), or nothing changes and the hook is
//! told why. The checks are `register`'s, stricter where `register` only logs: an unknown
//! event, a tool filter on an event that is not about a tool, or an event listed twice is an
//! error here, because the hook hears about it and can fix it.
//!
//! Fail closed: the subscriptions a required (managed) hook declared in `register` are the
//! administrator's policy. A change that would drop or alter one of them is refused, so a
//! managed gate cannot be switched off (or narrowed to fewer tools) by the hook process, by a
//! bug in it, or by anything that talks it into it; such a hook may still add and drop other
//! subscriptions. Pure: no I/O.

use std::time::Duration;

use serde_json::{json, Value};

use super::events::{is_tool_event, kind_of};
use super::protocol::Subscription;
use super::registration::{compile, RegisterError, Subscribed, Subscriptions};

/// Why a `subscribe` or `unsubscribe` is refused. Nothing changes then.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubscribeError {
    #[error(transparent)]
    Register(#[from] RegisterError),
    #[error("unknown event {0:?}")]
    UnknownEvent(String),
    #[error("{0} is listed twice")]
    Twice(String),
    #[error(
        "subscription to {0}: a tool filter is only for tool events (tool_call, tool_result, \
         tool_execution_start, tool_execution_update, tool_execution_end)"
    )]
    FilterOnNonToolEvent(String),
    #[error(
        "the subscription to {0} is part of this required hook's register (the \
         administrator's policy); it cannot be changed or dropped while the hook runs"
    )]
    Pinned(String),
}

/// One requested change.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Add these subscriptions; one for an event already subscribed replaces it.
    Subscribe(Vec<Subscription>),
    /// Drop the subscriptions to these events (an event not subscribed is no change).
    Unsubscribe(Vec<String>),
}

impl Change {
    /// The protocol message's `type`, for messages to the user.
    pub fn message(&self) -> &'static str {
        match self {
            Change::Subscribe(_) => "subscribe",
            Change::Unsubscribe(_) => "unsubscribe",
        }
    }
}

fn once<'a>(names: impl Iterator<Item = &'a str>) -> Result<(), SubscribeError> {
    let mut seen: Vec<&str> = Vec::new();
    for n in names {
        if kind_of(n).is_none() {
            return Err(SubscribeError::UnknownEvent(n.to_string()));
        }
        if seen.contains(&n) {
            return Err(SubscribeError::Twice(n.to_string()));
        }
        seen.push(n);
    }
    Ok(())
}

/// The subscription set after `change`, with notes to log (a capped deadline), or why the
/// change is refused. `event_timeout` is the hook's default deadline and cap; `pinned` names
/// the events no change may touch (a required hook's registered ones).
pub fn apply(
    current: &Subscriptions,
    change: &Change,
    event_timeout: Duration,
    pinned: &[String],
) -> Result<(Subscriptions, Vec<String>), SubscribeError> {
    let is_pinned = |e: &str| pinned.iter().any(|p| p == e);
    let mut subs = current.subs.clone();
    let mut notes = Vec::new();
    match change {
        Change::Subscribe(wanted) => {
            once(wanted.iter().map(|s| s.event.as_str()))?;
            let mut compiled: Vec<Subscribed> = Vec::new();
            for s in wanted {
                if s.tools.is_some() && !is_tool_event(&s.event) {
                    return Err(SubscribeError::FilterOnNonToolEvent(s.event.clone()));
                }
                if is_pinned(&s.event) {
                    return Err(SubscribeError::Pinned(s.event.clone()));
                }
                compiled.push(compile(s, event_timeout, &mut notes)?);
            }
            for c in compiled {
                match subs.iter_mut().find(|x| x.event == c.event) {
                    Some(slot) => *slot = c,
                    None => subs.push(c),
                }
            }
        }
        Change::Unsubscribe(events) => {
            once(events.iter().map(String::as_str))?;
            if let Some(p) = events.iter().find(|e| is_pinned(e)) {
                return Err(SubscribeError::Pinned(p.clone()));
            }
            subs.retain(|s| !events.contains(&s.event));
        }
    }
    Ok((Subscriptions { subs }, notes))
}

/// The set as the hook is told it (`result.value.subscriptions`): `register`'s shape, with the
/// deadline the host applies.
pub fn describe(subs: &Subscriptions) -> Value {
    let list: Vec<Value> = subs
        .iter()
        .map(|s| {
            let mut v = json!({"event": s.event, "deadline_ms": s.deadline.as_millis() as u64});
            if let Some(f) = &s.filter {
                v["tools"] = json!(f.patterns());
            }
            v
        })
        .collect();
    json!({ "subscriptions": list })
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_secs(30);

    fn sub(event: &str, tools: Option<&[&str]>) -> Subscription {
        Subscription {
            event: event.into(),
            tools: tools.map(|t| t.iter().map(|s| s.to_string()).collect()),
            deadline_ms: None,
        }
    }

    fn events(s: &Subscriptions) -> Vec<String> {
        s.iter().map(|x| x.event.clone()).collect()
    }

    #[test]
    fn subscribe_adds_and_replaces_and_unsubscribe_drops() {
        let start = Subscriptions::default();
        let add = Change::Subscribe(vec![
            sub("message_update", None),
            sub("tool_call", Some(&["bash"])),
        ]);
        let (s, _) = apply(&start, &add, T, &[]).unwrap();
        assert_eq!(events(&s), ["message_update", "tool_call"]);
        assert!(s.wants("tool_call", Some("bash")).is_some());
        assert!(s.wants("tool_call", Some("write")).is_none());
        let widen = Change::Subscribe(vec![sub("tool_call", Some(&["*"]))]);
        let (s, _) = apply(&s, &widen, T, &[]).unwrap();
        assert!(s.wants("tool_call", Some("write")).is_some());
        let drop = Change::Unsubscribe(vec!["message_update".into(), "agent_end".into()]);
        let (s, _) = apply(&s, &drop, T, &[]).unwrap();
        assert_eq!(events(&s), ["tool_call"]);
    }

    #[test]
    fn a_bad_change_is_refused_whole() {
        let start = Subscriptions::default();
        let bad = [
            Change::Subscribe(vec![sub("message_update", None), sub("mesage_end", None)]),
            Change::Subscribe(vec![sub("agent_end", Some(&["bash"]))]),
            Change::Subscribe(vec![sub("tool_call", Some(&["[bash"]))]),
            Change::Subscribe(vec![sub("tool_call", Some(&[]))]),
            Change::Subscribe(vec![sub("agent_end", None), sub("agent_end", None)]),
            Change::Unsubscribe(vec!["no_such_event".into()]),
        ];
        for c in &bad {
            assert!(apply(&start, c, T, &[]).is_err(), "{c:?}");
        }
        let zero = Change::Subscribe(vec![Subscription {
            deadline_ms: Some(0),
            ..sub("input", None)
        }]);
        assert!(apply(&start, &zero, T, &[]).is_err());
    }

    #[test]
    fn a_required_hooks_registered_subscriptions_cannot_be_dropped_or_changed() {
        let (gate, _) = apply(
            &Subscriptions::default(),
            &Change::Subscribe(vec![sub("tool_call", Some(&["bash"]))]),
            T,
            &[],
        )
        .unwrap();
        let pinned = ["tool_call".to_string()];
        let drop = Change::Unsubscribe(vec!["tool_call".into()]);
        assert_eq!(
            apply(&gate, &drop, T, &pinned).unwrap_err(),
            SubscribeError::Pinned("tool_call".into())
        );
        let narrow = Change::Subscribe(vec![sub("tool_call", Some(&["nothing"]))]);
        assert!(apply(&gate, &narrow, T, &pinned).is_err());
        let other = Change::Subscribe(vec![sub("message_update", None)]);
        let (s, _) = apply(&gate, &other, T, &pinned).unwrap();
        let (s, _) = apply(
            &s,
            &Change::Unsubscribe(vec!["message_update".into()]),
            T,
            &pinned,
        )
        .unwrap();
        assert_eq!(events(&s), ["tool_call"]);
    }

    #[test]
    fn deadlines_are_capped_and_described() {
        let c = Change::Subscribe(vec![Subscription {
            deadline_ms: Some(90_000),
            ..sub("tool_result", Some(&["mcp_*"]))
        }]);
        let (s, notes) = apply(&Subscriptions::default(), &c, T, &[]).unwrap();
        assert_eq!(notes.len(), 1);
        assert_eq!(
            describe(&s),
            json!({"subscriptions": [{"event": "tool_result", "tools": ["mcp_*"], "deadline_ms": 30000}]})
        );
    }
}
