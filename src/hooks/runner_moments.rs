//! Moments pi has no hook event for, which only Claude Code command hooks see: a manual
//! `/compact` with nothing to compact (PreCompact), each context file pi loads
//! (InstructionsLoaded), start-up with `--init`, `--init-only` or `--maintenance` (Setup) and a changed
//! settings file at `/reload` (ConfigChange). A hook process never answers one (its protocol
//! has no such event), so adding them changes nothing for pi's own hooks.
//!
//! Every hook is asked in load order until one blocks (context a hook adds goes with the next
//! prompt, as the hook delivers it at `before_agent_start`). A hook that
//! fails is reported (`hook_error`) and, under a closed `fail` policy, blocks with the host's
//! reason, as a gate would.

use serde_json::Value;

use super::Runner;
use crate::hooks::protocol::FailPolicy;

/// A moment only Claude Code hooks see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moment {
    /// A manual compaction with nothing to compact (`reason`, `custom_instructions`).
    NothingToCompact,
    /// A context file about to be loaded (`file_path`, `memory_type`, `load_reason`).
    InstructionsLoaded,
    /// Start-up with `--init-only` or `--maintenance` (`trigger`).
    Setup,
    /// A settings file changed at `/reload` (`source`, `file_path`).
    ConfigChange,
}

impl Moment {
    /// How it is named in `hook_error` lines.
    pub fn name(self) -> &'static str {
        match self {
            Moment::NothingToCompact => "PreCompact",
            Moment::InstructionsLoaded => "InstructionsLoaded",
            Moment::Setup => "Setup",
            Moment::ConfigChange => "ConfigChange",
        }
    }
}

/// The combined answer: the first block (and the hook that made it), if any.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MomentVerdict {
    pub blocked: Option<(String, String)>,
}

impl Runner {
    /// Asks every hook about `moment` in load order until one blocks.
    pub async fn moment(&self, moment: Moment, payload: &Value) -> MomentVerdict {
        for h in &self.hooks {
            match h.moment(moment, payload).await {
                Ok(Some(why)) => {
                    return MomentVerdict {
                        blocked: Some((h.name(), why)),
                    }
                }
                Ok(None) => {}
                Err(e) => {
                    self.report_error(&h.name(), moment.name(), &e);
                    if h.fail_policy() == FailPolicy::Closed {
                        let why = format!(
                            "hook {} failed ({}) and its policy fails closed",
                            h.name(),
                            e.message
                        );
                        return MomentVerdict {
                            blocked: Some((h.name(), why)),
                        };
                    }
                }
            }
        }
        MomentVerdict::default()
    }

    /// Whether any hook would be asked about `moment` (to skip building its payload).
    pub fn any_at(&self, moment: Moment) -> bool {
        self.hooks.iter().any(|h| h.at(moment))
    }
}
