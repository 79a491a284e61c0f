//! Which of a hook's open dialogs still matter. A dialog (`ui.confirm` and co.) may be serving
//! any of the requests the hook had outstanding when it opened it — the host cannot tell
//! which — so it is tied to all of them: once they have all ended and at least one was
//! withdrawn (its deadline, an abort, a caller that gave up), nobody waits for what the dialog
//! decides, and it is dismissed. A dialog opened with no request outstanding serves none and
//! is never dismissed this way (its own timeout and the end of the process still bound it).

use std::collections::{HashMap, HashSet};

use tokio_util::sync::CancellationToken;

/// A dialog opened while `serves` were outstanding.
struct Open {
    serves: HashSet<u64>,
    /// One of `serves` was withdrawn rather than answered.
    withdrawn: bool,
    dismiss: CancellationToken,
}

#[derive(Default)]
pub(super) struct Dialogs {
    open: HashMap<u64, Open>,
    next: u64,
}

impl Dialogs {
    /// A dialog opened while the requests `serves` are outstanding: its key (for
    /// [`close`](Self::close)) and the token cancelled when it is to be dismissed.
    pub(super) fn open(&mut self, serves: HashSet<u64>) -> (u64, CancellationToken) {
        let key = self.next;
        self.next += 1;
        let dismiss = CancellationToken::new();
        if !serves.is_empty() {
            self.open.insert(
                key,
                Open {
                    serves,
                    withdrawn: false,
                    dismiss: dismiss.clone(),
                },
            );
        }
        (key, dismiss)
    }

    /// The dialog ended by itself.
    pub(super) fn close(&mut self, key: u64) {
        self.open.remove(&key);
    }

    /// Request `id` ended, `withdrawn` or answered. Dialogs left serving no request are
    /// dismissed when one of theirs was withdrawn, and forgotten either way.
    pub(super) fn request_ended(&mut self, id: u64, withdrawn: bool) {
        self.open.retain(|_, d| {
            if d.serves.remove(&id) {
                d.withdrawn |= withdrawn;
            }
            if !d.serves.is_empty() {
                return true;
            }
            if d.withdrawn {
                d.dismiss.cancel();
            }
            false
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[u64]) -> HashSet<u64> {
        v.iter().copied().collect()
    }

    #[test]
    fn a_dialog_is_dismissed_once_every_request_it_may_serve_ended_and_one_was_withdrawn() {
        let mut d = Dialogs::default();
        let (_, token) = d.open(ids(&[1, 2]));
        d.request_ended(1, true);
        assert!(!token.is_cancelled(), "request 2 may still need the answer");
        d.request_ended(2, false);
        assert!(token.is_cancelled());
        assert!(d.open.is_empty());
    }

    #[test]
    fn a_dialog_whose_requests_were_all_answered_is_left_alone() {
        let mut d = Dialogs::default();
        let (_, token) = d.open(ids(&[1]));
        d.request_ended(1, false);
        d.request_ended(3, true);
        assert!(!token.is_cancelled());
        assert!(d.open.is_empty());
    }

    #[test]
    fn a_dialog_serving_no_request_is_never_dismissed_here() {
        let mut d = Dialogs::default();
        let (key, token) = d.open(HashSet::new());
        d.request_ended(1, true);
        assert!(!token.is_cancelled());
        d.close(key);
        let (key, token) = d.open(ids(&[5]));
        d.close(key);
        d.request_ended(5, true);
        assert!(!token.is_cancelled(), "a closed dialog is forgotten");
    }
}
