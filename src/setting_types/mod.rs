//! The types of settings the loop and the tools read (`steeringMode`/`followUpMode`,
//! `shellEnvironment`). They live in this leaf module, below both `config` (which parses
//! settings.json into them) and `agent`/`tools` (which act on them), so settings know
//! neither the loop nor the tools and neither of those imports `config`.

pub mod shell_env;

/// How queued steering / follow-up messages are delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueueMode {
    /// One queued message per turn boundary.
    #[default]
    OneAtATime,
    /// Everything queued at once.
    All,
}

impl QueueMode {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "one-at-a-time" => Some(Self::OneAtATime),
            "all" => Some(Self::All),
            _ => None,
        }
    }

    /// pi's name for the mode (`get_state`, settings).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OneAtATime => "one-at-a-time",
            Self::All => "all",
        }
    }
}
