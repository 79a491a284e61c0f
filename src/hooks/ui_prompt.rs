//! `ui_prompt_start` / `ui_prompt_end`: the notify events that tell hooks pi is waiting on a
//! person because a hook opened a dialog (`ui.confirm`, `ui.select`, `ui.input`,
//! `ui.editor`) — so an audit hook can pause its idle timers, a status hook can say "waiting
//! for you", and so on. They match TypeScript pi 1.6's `withUIPrompt`: dialogs that overlap
//! (several hooks, or one hook asking twice at once) make one pair, `start` when the first
//! opens and `end` when the last one closes, both naming the first dialog's kind and title;
//! they are notifications (nobody waits for the subscribers), never a way to stop a dialog.
//!
//! Only a dialog the front end actually shows counts: one answered `unavailable` (print and
//! json mode, or before the UI started) never waited on anybody. The end is sent however the
//! dialog ends — answered, dismissed, timed out, or abandoned because the call was dropped.

use std::sync::{Mutex, Weak};

use serde_json::{json, Value};

use super::events::NotifyEvent;
use super::runner::Runner;
use super::ui::Dialog;

/// The dialogs open right now, across every hook of one generation.
#[derive(Debug, Default)]
pub struct UiPrompts {
    state: Mutex<Open>,
}

#[derive(Debug, Default)]
struct Open {
    depth: u32,
    /// The kind and title of the dialog that opened the current pair.
    first: Option<Value>,
}

/// `{reason: "ui_prompt", kind, title?}`, the payload of both events.
pub fn payload(dialog: &Dialog) -> Value {
    let (kind, title) = match dialog {
        Dialog::Confirm { title, .. } => ("confirm", title),
        Dialog::Select { title, .. } => ("select", title),
        Dialog::Input { title, .. } => ("input", title),
        Dialog::Editor { title, .. } => ("editor", title),
    };
    let mut p = json!({"reason": "ui_prompt", "kind": kind});
    if !title.is_empty() {
        p["title"] = json!(title);
    }
    p
}

impl UiPrompts {
    /// A dialog is about to be shown; the guard marks it closed when dropped.
    pub fn begin(&self, runner: Option<Weak<Runner>>, dialog: &Dialog) -> PromptGuard<'_> {
        let start = {
            let mut open = self.state.lock().unwrap_or_else(|p| p.into_inner());
            open.depth += 1;
            if open.depth == 1 {
                let p = payload(dialog);
                open.first = Some(p.clone());
                Some(p)
            } else {
                None
            }
        };
        if let Some(p) = start {
            notify(runner.as_ref(), NotifyEvent::UiPromptStart, p);
        }
        PromptGuard {
            prompts: self,
            runner,
        }
    }

    fn end(&self, runner: Option<&Weak<Runner>>) {
        let end = {
            let mut open = self.state.lock().unwrap_or_else(|p| p.into_inner());
            open.depth = open.depth.saturating_sub(1);
            if open.depth == 0 {
                open.first.take()
            } else {
                None
            }
        };
        if let Some(p) = end {
            notify(runner, NotifyEvent::UiPromptEnd, p);
        }
    }
}

fn notify(runner: Option<&Weak<Runner>>, event: NotifyEvent, payload: Value) {
    if let Some(r) = runner.and_then(Weak::upgrade) {
        r.notify(event, None, || payload);
    }
}

/// One open dialog; dropping it closes it (and ends the pair when it was the last).
pub struct PromptGuard<'a> {
    prompts: &'a UiPrompts,
    runner: Option<Weak<Runner>>,
}

impl Drop for PromptGuard<'_> {
    fn drop(&mut self) {
        self.prompts.end(self.runner.as_ref());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_dialogs_make_one_pair_named_after_the_first() {
        let prompts = UiPrompts::default();
        let confirm = Dialog::Confirm {
            title: "Deploy?".into(),
            message: "m".into(),
        };
        let input = Dialog::Input {
            title: String::new(),
            placeholder: None,
        };
        assert_eq!(
            payload(&confirm),
            json!({"reason": "ui_prompt", "kind": "confirm", "title": "Deploy?"})
        );
        assert_eq!(
            payload(&input),
            json!({"reason": "ui_prompt", "kind": "input"})
        );
        let a = prompts.begin(None, &confirm);
        let b = prompts.begin(None, &input);
        drop(a);
        {
            let open = prompts.state.lock().unwrap();
            assert_eq!(open.depth, 1);
            assert_eq!(open.first, Some(payload(&confirm)));
        }
        drop(b);
        let open = prompts.state.lock().unwrap();
        assert_eq!((open.depth, open.first.is_none()), (0, true));
    }
}
