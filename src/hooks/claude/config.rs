//! Reading Claude Code's hook configuration unchanged: the `hooks` object of a Claude Code
//! `settings.json` (`--claude-hooks FILE`) or the same object under pi's `commandHooks` key,
//! `{"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "…",
//! "timeout": 30}]}], …}`, into one [`ClaudeSpec`] per command, in configuration order.
//!
//! What pi cannot run the way Claude Code would (an event with no counterpart here, `http`
//! or `prompt` handlers) is left out with a warning naming it, so an unmodified file still
//! loads; what is malformed is an error naming the file, the event and the entry.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value};

use super::hook_env::EnvRequest;
use super::matcher::{Matcher, MatcherError};
use super::plugin::{HooksAt, Plugin};
use crate::hooks::events::{
    AwaitedEvent, BoundaryEvent, CancelableEvent, ChainEvent, Event, GateEvent, NotifyEvent,
};
use crate::hooks::protocol::{json_kind, FailPolicy};
use crate::hooks::spec::HookSource;

/// The Claude Code events pi runs: most as a participant in one of pi's own events, the rest
/// fired by pi where the moment happens (see [`ClaudeEvent::pi_event`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClaudeEvent {
    PreToolUse,
    PermissionRequest,
    PostToolUse,
    PostToolUseFailure,
    UserPromptSubmit,
    Setup,
    SessionStart,
    SessionEnd,
    InstructionsLoaded,
    ConfigChange,
    Stop,
    SubagentStart,
    SubagentStop,
    PreCompact,
    Notification,
}

impl ClaudeEvent {
    pub const ALL: &'static [ClaudeEvent] = &[
        ClaudeEvent::PreToolUse,
        ClaudeEvent::PermissionRequest,
        ClaudeEvent::PostToolUse,
        ClaudeEvent::PostToolUseFailure,
        ClaudeEvent::UserPromptSubmit,
        ClaudeEvent::Setup,
        ClaudeEvent::SessionStart,
        ClaudeEvent::SessionEnd,
        ClaudeEvent::InstructionsLoaded,
        ClaudeEvent::ConfigChange,
        ClaudeEvent::Stop,
        ClaudeEvent::SubagentStart,
        ClaudeEvent::SubagentStop,
        ClaudeEvent::PreCompact,
        ClaudeEvent::Notification,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ClaudeEvent::PreToolUse => "PreToolUse",
            ClaudeEvent::PermissionRequest => "PermissionRequest",
            ClaudeEvent::PostToolUse => "PostToolUse",
            ClaudeEvent::PostToolUseFailure => "PostToolUseFailure",
            ClaudeEvent::UserPromptSubmit => "UserPromptSubmit",
            ClaudeEvent::Setup => "Setup",
            ClaudeEvent::SessionStart => "SessionStart",
            ClaudeEvent::SessionEnd => "SessionEnd",
            ClaudeEvent::InstructionsLoaded => "InstructionsLoaded",
            ClaudeEvent::ConfigChange => "ConfigChange",
            ClaudeEvent::Stop => "Stop",
            ClaudeEvent::SubagentStart => "SubagentStart",
            ClaudeEvent::SubagentStop => "SubagentStop",
            ClaudeEvent::PreCompact => "PreCompact",
            ClaudeEvent::Notification => "Notification",
        }
    }

    pub fn parse(name: &str) -> Option<ClaudeEvent> {
        Self::ALL.iter().copied().find(|e| e.name() == name)
    }

    /// pi's event this one runs in as a participant (Notification also runs at
    /// `agent_settled`, see `endpoint`); `None` for the events pi fires itself where the
    /// moment happens ([`ClaudeEvent::fires_at`] says where), and for SubagentStart and
    /// SubagentStop, which never fire: pi has no subagents.
    pub fn pi_event(self) -> Option<Event> {
        Some(match self {
            ClaudeEvent::PreToolUse => GateEvent::ToolCall.into(),
            ClaudeEvent::PostToolUse | ClaudeEvent::PostToolUseFailure => {
                ChainEvent::ToolResult.into()
            }
            ClaudeEvent::UserPromptSubmit => ChainEvent::Input.into(),
            ClaudeEvent::SessionStart => AwaitedEvent::SessionStart.into(),
            ClaudeEvent::SessionEnd => AwaitedEvent::SessionShutdown.into(),
            ClaudeEvent::Stop => BoundaryEvent::AgentBeforeSettle.into(),
            ClaudeEvent::PreCompact => CancelableEvent::SessionBeforeCompact.into(),
            ClaudeEvent::Notification => NotifyEvent::UiPromptStart.into(),
            ClaudeEvent::PermissionRequest
            | ClaudeEvent::Setup
            | ClaudeEvent::InstructionsLoaded
            | ClaudeEvent::ConfigChange
            | ClaudeEvent::SubagentStart
            | ClaudeEvent::SubagentStop => return None,
        })
    }

    /// Where in pi the event fires, for listings (`pi hooks`).
    pub fn fires_at(self) -> &'static str {
        match self {
            ClaudeEvent::PermissionRequest => "a PreToolUse `ask`, before the person is asked",
            ClaudeEvent::PostToolUseFailure => "tool_result of a failed call, or a blocked call",
            ClaudeEvent::Setup => "pi started with --init, --init-only or --maintenance",
            ClaudeEvent::InstructionsLoaded => "each context file loaded",
            ClaudeEvent::ConfigChange => "/reload, for each configuration file changed since read",
            ClaudeEvent::SubagentStart | ClaudeEvent::SubagentStop => "never: pi has no subagents",
            other => other.pi_event().map_or("", |e| e.name()),
        }
    }

    /// Claude Code's default timeout for a command hook of this event.
    pub fn default_timeout(self) -> Duration {
        match self {
            ClaudeEvent::UserPromptSubmit => Duration::from_secs(30),
            _ => Duration::from_secs(600),
        }
    }
}

/// How the command is started.
#[derive(Debug, Clone, PartialEq)]
pub enum Program {
    /// `command` through a shell (`/bin/sh -c`, or bash with `"shell": "bash"`).
    Shell { shell: PathBuf, command: String },
    /// Claude Code's exec form: `command` is the program, `args` its arguments, no shell.
    Exec { program: String, args: Vec<String> },
}

/// Why an exit code other than 0 and 2 is a failure of this hook rather than Claude Code's
/// non-blocking error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StrictExit {
    /// Its own `onFailure: "block"`, as in Claude Code.
    OnFailure,
    /// `commandHooksStrictExit` (PreToolUse hooks), set where this says.
    Setting(String),
}

impl StrictExit {
    /// Said after the failure, so the user knows which switch made the exit count.
    pub fn because(&self) -> String {
        match self {
            StrictExit::OnFailure => {
                "its `onFailure: \"block\"` makes an unexpected exit a failure".into()
            }
            StrictExit::Setting(by) => format!(
                "{} ({by}) makes an unexpected exit of a PreToolUse hook a failure",
                super::sources::STRICT_EXIT_KEY
            ),
        }
    }
}

/// One Claude Code command hook.
#[derive(Debug, Clone)]
pub struct ClaudeSpec {
    /// Unique among the run's hooks: `claude:<Event>:<label>` (see [`assign_names`]).
    pub name: String,
    pub event: ClaudeEvent,
    pub matcher: Matcher,
    /// The matcher as written (`None` when absent).
    pub matcher_text: Option<String>,
    pub program: Program,
    pub timeout: Duration,
    /// `async: true`: started and not waited for; it cannot block, its output is logged and
    /// its context goes with the next prompt (see `endpoint`).
    pub background: bool,
    /// `fail` (pi's) or `onFailure: "block"` (Claude Code's); `None` is pi's default, closed.
    pub fail: Option<FailPolicy>,
    pub source: HookSource,
    /// Where it was configured: `FILE: PreToolUse[0].hooks[1]`.
    pub origin: String,
    /// The plugin it comes from (`${CLAUDE_PLUGIN_ROOT}`, `${CLAUDE_PLUGIN_DATA}`).
    pub plugin: Option<Plugin>,
    /// `env`: variables set for it, literally (its own over its hooks object's).
    pub env: Vec<(String, String)>,
    /// `envPassthrough`: names or globs of pi's environment it is given (`hook_env`).
    pub env_passthrough: Vec<String>,
    /// Variables of pi's environment it asked for and is not given (a project hook's
    /// request the user's `projectEnv` does not grant); shown at start-up and in `pi hooks`.
    pub env_withheld: Vec<String>,
    /// Whether an exit other than 0 and 2 is a failure (under `fail`) and why.
    pub strict_exit: Option<StrictExit>,
}

impl ClaudeSpec {
    /// The command as configured, for listings and latency records.
    pub fn command_line(&self) -> String {
        match &self.program {
            Program::Shell { command, .. } => command.clone(),
            Program::Exec { program, args } => {
                let mut words = vec![program.clone()];
                words.extend(args.iter().cloned());
                shell_words::join(words)
            }
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ClaudeConfigError {
    #[error("cannot read Claude Code settings {file}: {source}")]
    Read {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("Claude Code settings {file} are not valid JSON: {source}")]
    Json {
        file: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("{file} has no `hooks` object (Claude Code keeps its hooks under \"hooks\")")]
    NoHooks { file: String },
    #[error(
        "{dir} is a directory without hooks/hooks.json: --claude-hooks takes a settings file, a \
         plugin's hooks/hooks.json, or a plugin directory holding one"
    )]
    NotAPlugin { dir: String },
    #[error("invalid Claude Code hooks in {file}: {at}: {message}")]
    Entry {
        file: String,
        at: String,
        message: String,
    },
}

/// The `hooks` object of a Claude Code settings file (`--claude-hooks FILE`), of a plugin's
/// `hooks/hooks.json`, or of a plugin directory (`plugin`); a plugin's hooks know their plugin.
pub fn from_file(
    path: &std::path::Path,
    source: HookSource,
) -> Result<(Vec<ClaudeSpec>, Vec<String>), ClaudeConfigError> {
    let (at, plugin) = super::plugin::locate(path)?;
    let (mut specs, warnings) = match at {
        HooksAt::Inline { manifest, hooks } => {
            from_value(&hooks, &manifest.display().to_string(), source)?
        }
        HooksAt::File(path) => {
            let file = path.display().to_string();
            let text = std::fs::read_to_string(&path).map_err(|e| ClaudeConfigError::Read {
                file: file.clone(),
                source: e,
            })?;
            let v: Value = serde_json::from_str(&text).map_err(|e| ClaudeConfigError::Json {
                file: file.clone(),
                source: e,
            })?;
            let hooks = v
                .get("hooks")
                .ok_or_else(|| ClaudeConfigError::NoHooks { file: file.clone() })?;
            from_value(hooks, &file, source)?
        }
    };
    for s in &mut specs {
        s.plugin = plugin.clone();
    }
    Ok((specs, warnings))
}

/// A Claude Code `hooks` object (`commandHooks` in pi's settings); `file` names it in errors.
pub fn from_value(
    hooks: &Value,
    file: &str,
    source: HookSource,
) -> Result<(Vec<ClaudeSpec>, Vec<String>), ClaudeConfigError> {
    let Value::Object(events) = hooks else {
        return Err(entry_error(
            file,
            "hooks".into(),
            format!("must be an object of event names, not {}", json_kind(hooks)),
        ));
    };
    // `env` and `envPassthrough` beside the events are for every hook of the object.
    let shared = EnvRequest::parse(events).map_err(|m| entry_error(file, "hooks".into(), m))?;
    let reading = Reading {
        file,
        source,
        shared: &shared,
    };
    let mut out = (Vec::new(), Vec::new());
    for (event_name, groups) in events {
        if EnvRequest::KEYS.contains(&event_name.as_str()) {
            continue;
        }
        let Value::Array(groups) = groups else {
            return Err(reading.bad(
                event_name.clone(),
                format!(
                    "must be a list of matcher groups, not {}",
                    json_kind(groups)
                ),
            ));
        };
        let Some(event) = ClaudeEvent::parse(event_name) else {
            out.1.push(format!(
                "{file}: Claude Code event {event_name:?} has no counterpart in pi; its {} hook(s) do not run (pi runs {})",
                hook_count(groups),
                ClaudeEvent::ALL
                    .iter()
                    .map(|e| e.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            continue;
        };
        for (gi, group) in groups.iter().enumerate() {
            reading.group(event, &format!("{event_name}[{gi}]"), group, &mut out)?;
        }
    }
    Ok(out)
}

fn entry_error(file: &str, at: String, message: String) -> ClaudeConfigError {
    ClaudeConfigError::Entry {
        file: file.to_string(),
        at,
        message,
    }
}

/// One `hooks` object being read: where it comes from, and the `env` requests beside its
/// events that every hook of it gets.
struct Reading<'a> {
    file: &'a str,
    source: HookSource,
    shared: &'a EnvRequest,
}

/// What reading gathers: the hooks that run, and the warnings about those that do not.
type Gathered = (Vec<ClaudeSpec>, Vec<String>);

impl Reading<'_> {
    fn bad(&self, at: String, message: String) -> ClaudeConfigError {
        entry_error(self.file, at, message)
    }

    /// A matcher group `{matcher?, hooks: [handler]}` at `at`.
    fn group(
        &self,
        event: ClaudeEvent,
        at: &str,
        group: &Value,
        out: &mut Gathered,
    ) -> Result<(), ClaudeConfigError> {
        let Value::Object(group) = group else {
            return Err(self.bad(
                at.to_string(),
                format!("a matcher group is an object, not {}", json_kind(group)),
            ));
        };
        let matcher_text = match group.get("matcher") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                return Err(self.bad(
                    format!("{at}.matcher"),
                    format!("must be a string, not {}", json_kind(other)),
                ))
            }
        };
        let matcher = Matcher::parse(matcher_text.as_deref())
            .map_err(|e: MatcherError| self.bad(format!("{at}.matcher"), e.to_string()))?;
        let handlers = match group.get("hooks") {
            Some(Value::Array(h)) => h,
            Some(other) => {
                return Err(self.bad(
                    format!("{at}.hooks"),
                    format!("must be a list of hook handlers, not {}", json_kind(other)),
                ))
            }
            None => return Err(self.bad(at.to_string(), "has no `hooks` list".into())),
        };
        for (hi, h) in handlers.iter().enumerate() {
            let at = format!("{at}.hooks[{hi}]");
            self.handler(event, (&matcher, &matcher_text), at, h, out)?;
        }
        Ok(())
    }

    /// One hook handler of a group: a hook that runs, or a warning saying why it does not.
    fn handler(
        &self,
        event: ClaudeEvent,
        (matcher, matcher_text): (&Matcher, &Option<String>),
        at: String,
        h: &Value,
        out: &mut Gathered,
    ) -> Result<(), ClaudeConfigError> {
        let Value::Object(h) = h else {
            return Err(self.bad(
                at,
                format!("a hook handler is an object, not {}", json_kind(h)),
            ));
        };
        let origin = format!("{}: {at}", self.file);
        let (program, timeout, background, fail, strict_exit) =
            match handler(h, event, &at).map_err(|m| self.bad(at.clone(), m))? {
                Handler::Skip(why) => {
                    out.1.push(format!("{origin}: {why}; it does not run"));
                    return Ok(());
                }
                Handler::Run {
                    program,
                    timeout,
                    background,
                    fail,
                    strict_exit,
                    notes,
                } => {
                    out.1
                        .extend(notes.into_iter().map(|n| format!("{origin}: {n}")));
                    (program, timeout, background, fail, strict_exit)
                }
            };
        let own = EnvRequest::parse(h).map_err(|m| self.bad(at.clone(), m))?;
        let env = self.shared.clone().then(own);
        out.0.push(ClaudeSpec {
            name: String::new(),
            event,
            matcher: matcher.clone(),
            matcher_text: matcher_text.clone(),
            program,
            timeout,
            background,
            fail,
            source: self.source,
            origin,
            plugin: None,
            env: env.set,
            env_passthrough: env.passthrough,
            env_withheld: Vec::new(),
            strict_exit,
        });
        Ok(())
    }
}

/// How many hook handlers an event's matcher groups hold.
fn hook_count(groups: &[Value]) -> usize {
    groups
        .iter()
        .map(|g| g.get("hooks").and_then(Value::as_array).map_or(0, Vec::len))
        .sum()
}

enum Handler {
    Skip(String),
    Run {
        program: Program,
        timeout: Duration,
        background: bool,
        fail: Option<FailPolicy>,
        strict_exit: Option<StrictExit>,
        notes: Vec<String>,
    },
}

fn str_field<'a>(h: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, String> {
    match h.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(format!(
            "`{key}` must be a string, not {}",
            json_kind(other)
        )),
    }
}

fn handler(h: &Map<String, Value>, event: ClaudeEvent, _at: &str) -> Result<Handler, String> {
    let kind = str_field(h, "type")?.unwrap_or("command");
    if kind != "command" {
        return Ok(Handler::Skip(format!(
            "a {kind:?} hook handler (pi runs Claude Code's \"command\" hooks)"
        )));
    }
    let command = str_field(h, "command")?
        .filter(|c| !c.trim().is_empty())
        .ok_or("a command hook needs a non-empty `command`")?;
    let timeout = match h.get("timeout") {
        None | Some(Value::Null) => event.default_timeout(),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(s) if s > 0.0 && s.is_finite() => {
                Duration::try_from_secs_f64(s).map_err(|e| format!("`timeout`: {e}"))?
            }
            _ => {
                return Err(format!(
                    "`timeout` must be a positive number of seconds, not {n}"
                ))
            }
        },
        Some(other) => {
            return Err(format!(
                "`timeout` must be a number of seconds, not {}",
                json_kind(other)
            ))
        }
    };
    let mut fail = match str_field(h, "fail")? {
        None => None,
        Some("open") => Some(FailPolicy::Open),
        Some("closed") => Some(FailPolicy::Closed),
        Some(other) => {
            return Err(format!(
                "`fail` must be \"open\" or \"closed\", not {other:?}"
            ))
        }
    };
    let mut notes = Vec::new();
    let mut strict_exit = None;
    match str_field(h, "onFailure")? {
        None => {}
        Some("block") => {
            fail = fail.or(Some(FailPolicy::Closed));
            strict_exit = Some(StrictExit::OnFailure);
        }
        Some(other) => notes.push(format!(
            "`onFailure: {other:?}` is not understood (only \"block\"); pi's `fail` policy applies"
        )),
    }
    if h.get("if").is_some() {
        notes.push(
            "`if` (a permission-rule filter) is not supported; the hook runs for every call its matcher selects"
                .into(),
        );
    }
    let background = match h.get("async") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(format!(
                "`async` must be true or false, not {}",
                json_kind(other)
            ))
        }
    };
    let shell = match str_field(h, "shell")? {
        None | Some("sh") => PathBuf::from("/bin/sh"),
        Some("bash") => crate::tools::process::default_shell(),
        Some(other) => {
            return Ok(Handler::Skip(format!(
                "`shell: {other:?}` is not available here"
            )))
        }
    };
    let program = match h.get("args") {
        None | Some(Value::Null) => Program::Shell {
            shell,
            command: command.to_string(),
        },
        Some(Value::Array(a)) => {
            let args = a
                .iter()
                .map(|x| x.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or("`args` must be a list of strings")?;
            Program::Exec {
                program: command.to_string(),
                args,
            }
        }
        Some(other) => {
            return Err(format!(
                "`args` must be a list of strings, not {}",
                json_kind(other)
            ))
        }
    };
    Ok(Handler::Run {
        program,
        timeout,
        background,
        fail,
        strict_exit,
        notes,
    })
}

/// Gives every spec its display name, `claude:<Event>:<label>` (`label`: the script, or the
/// start of an inline command), numbered (`#2`, …) where two would be alike. `taken` are
/// names already in use.
pub fn assign_names(specs: &mut [ClaudeSpec], taken: &[String]) {
    let mut used: Vec<String> = taken.to_vec();
    for s in specs.iter_mut() {
        let base = format!(
            "claude:{}:{}",
            s.event.name(),
            super::label::label(&s.command_line())
        );
        let mut name = base.clone();
        let mut n = 2;
        while used.contains(&name) {
            name = format!("{base}#{n}");
            n += 1;
        }
        used.push(name.clone());
        s.name = name;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<(Vec<ClaudeSpec>, Vec<String>), ClaudeConfigError> {
        from_value(&v, "settings.json", HookSource::User)
    }

    #[test]
    fn reads_claude_codes_shape_in_configuration_order() {
        let (mut specs, warnings) = parse(json!({
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [
                    {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/check.py", "timeout": 5},
                    {"type": "command", "command": "python3 -u guard.py"}]},
                {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "lint.sh"}]}
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "check.py", "onFailure": "block"}]}]
        }))
        .unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assign_names(&mut specs, &[]);
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "claude:PreToolUse:check.py",
                "claude:PreToolUse:guard.py",
                "claude:PreToolUse:lint.sh",
                "claude:Stop:check.py"
            ]
        );
        assert_eq!(specs[0].timeout, Duration::from_secs(5));
        assert_eq!(specs[1].timeout, Duration::from_secs(600));
        assert!(specs[2].matcher.matches("Write") && !specs[2].matcher.matches("Read"));
        assert_eq!(specs[3].fail, Some(FailPolicy::Closed));
        assert_eq!(specs[0].origin, "settings.json: PreToolUse[0].hooks[0]");
    }

    #[test]
    fn what_pi_cannot_run_is_skipped_with_a_warning() {
        let (specs, warnings) = parse(json!({
            "TeammateIdle": [{"hooks": [{"type": "command", "command": "x"}]}],
            "PreToolUse": [{"hooks": [
                {"type": "http", "url": "http://localhost"},
                {"type": "command", "command": "ok.sh", "if": "Bash(git *)"}]}]
        }))
        .unwrap();
        assert_eq!(specs.len(), 1);
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert!(warnings.iter().any(|w| w.contains("TeammateIdle")));
        let (known, unrun) = parse(json!({
            "ConfigChange": [{"hooks": [{"type": "command", "command": "x"}]}],
            "Setup": [{"matcher": "init", "hooks": [{"type": "command", "command": "y"}]}],
            "SubagentStart": [{"hooks": [{"type": "command", "command": "z"}]}]
        }))
        .unwrap();
        assert!(warnings.iter().any(|w| w.contains("\"http\"")));
        assert!(warnings.iter().any(|w| w.contains("`if`")));
        assert_eq!(
            known.len(),
            3,
            "ConfigChange, Setup and SubagentStart are accepted"
        );
        assert!(unrun.is_empty(), "{unrun:?}");
    }

    #[test]
    fn malformed_entries_are_errors_naming_the_place() {
        let e = parse(json!({"PreToolUse": [{"matcher": "Bash"}]})).unwrap_err();
        assert!(e.to_string().contains("PreToolUse[0]"), "{e}");
        let e = parse(
            json!({"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": "5"}]}]}),
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("Stop[0].hooks[0]") && e.to_string().contains("timeout"),
            "{e}"
        );
        let e = parse(json!({"PreToolUse": [{"matcher": "Bash(", "hooks": []}]})).unwrap_err();
        assert!(e.to_string().contains("regular expression"), "{e}");
        assert!(parse(json!([])).is_err());
    }

    #[test]
    fn exec_form_and_names_are_unique() {
        let (mut specs, _) = parse(json!({
            "PostToolUse": [{"hooks": [
                {"type": "command", "command": "/opt/fmt", "args": ["--check", "x y"]},
                {"type": "command", "command": "/opt/fmt"}]}]
        }))
        .unwrap();
        assign_names(&mut specs, &["claude:PostToolUse:fmt".to_string()]);
        assert_eq!(specs[0].name, "claude:PostToolUse:fmt#2");
        assert_eq!(specs[1].name, "claude:PostToolUse:fmt#3");
        assert_eq!(specs[0].command_line(), "/opt/fmt --check 'x y'");
    }
}
