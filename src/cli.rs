//! Command-line arguments (clap), matching the TypeScript pi's flags for everything we
//! implement. pi spells some flags as multi-letter single-dash options (`-nbt`, `-xt`); clap
//! has no such thing, so [`normalize`] rewrites them to their long forms before parsing.

use std::path::PathBuf;

use clap::{Parser, ValueEnum};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    Text,
    Json,
    /// JSONL commands on stdin, responses and events on stdout (pi 1.6's RPC protocol).
    Rpc,
}

#[derive(Debug, Parser)]
#[command(
    name = "pi",
    about = "A terminal coding agent whose extensions run out of process",
    disable_version_flag = true,
    // As pi 1.6's parser: a flag given twice takes its last value (`--provider a --provider b`).
    args_override_self = true,
    override_usage = "pi [options] [@files...] [messages...]",
    after_help = "Commands (each with its own --help):\n  \
        pi hooks              the hooks this run would load, and why\n  \
        pi hook check|test    exercise one hook outside a session\n  \
        pi mcp list|get|add|add-json|remove   manage MCP servers (mcp.json)"
)]
pub struct Cli {
    /// One-shot: run the prompt(s), print the final assistant text, exit
    #[arg(short = 'p', long = "print")]
    pub print: bool,

    /// Run Claude Code `Setup` hooks (trigger `init`) before the session starts
    #[arg(long = "init", conflicts_with = "maintenance")]
    pub init: bool,

    /// Run Claude Code `Setup` hooks (trigger `init`) and `SessionStart`, then exit (non-zero
    /// if one failed under a closed `fail` policy or blocked)
    #[arg(long = "init-only", conflicts_with = "maintenance")]
    pub init_only: bool,

    /// Run Claude Code `Setup` hooks (trigger `maintenance`) before the session starts
    #[arg(long = "maintenance")]
    pub maintenance: bool,

    /// Output mode: text, json (one JSON event per line), or rpc (JSONL commands on stdin)
    #[arg(long, value_enum)]
    pub mode: Option<Mode>,

    /// Provider name (anthropic, openai, faux, or one from models.json)
    #[arg(long)]
    pub provider: Option<String>,

    /// Model: exact id, fuzzy id, provider/id, with an optional :thinking suffix
    #[arg(long)]
    pub model: Option<String>,

    /// Comma-separated model patterns for Ctrl+P cycling: globs (`anthropic/*`, `*sonnet*`),
    /// `provider/id`, fuzzy ids, each with an optional `:thinking` suffix
    #[arg(long = "models", value_name = "PATTERNS")]
    pub models: Option<String>,

    /// API key for this run (not stored)
    #[arg(long = "api-key")]
    pub api_key: Option<String>,

    /// Thinking level: off, minimal, low, medium, high, xhigh, max
    #[arg(long)]
    pub thinking: Option<String>,

    /// Allowlist of tools (comma-separated), or `+name`/`-name` entries changing the default set
    #[arg(
        short = 't',
        long = "tools",
        value_delimiter = ',',
        allow_hyphen_values = true
    )]
    pub tools: Option<Vec<String>>,

    /// Denylist of tools (comma-separated); also -xt
    #[arg(long = "exclude-tools", value_delimiter = ',')]
    pub exclude_tools: Option<Vec<String>>,

    /// No built-in tools (extension tools stay); also -nbt
    #[arg(long = "no-builtin-tools")]
    pub no_builtin_tools: bool,

    /// No tools at all; also -nt
    #[arg(long = "no-tools")]
    pub no_tools: bool,

    /// Replace the system prompt (text, or the contents of a file if the value names one)
    #[arg(long = "system-prompt")]
    pub system_prompt: Option<String>,

    /// Append to the system prompt (text or file); repeatable
    #[arg(long = "append-system-prompt")]
    pub append_system_prompt: Vec<String>,

    /// Do not save the session
    #[arg(long = "no-session")]
    pub no_session: bool,

    /// Continue the most recent session of this directory
    #[arg(short = 'c', long = "continue")]
    pub continue_session: bool,

    /// Use a session: a file path, an exact id, or a unique id prefix
    #[arg(
        long = "session",
        value_name = "PATH|ID",
        conflicts_with = "continue_session"
    )]
    pub session: Option<String>,

    /// Pick a session of this directory to resume from a numbered list (needs a terminal)
    #[arg(
        short = 'r',
        long = "resume",
        conflicts_with_all = ["continue_session", "session"]
    )]
    pub resume: bool,

    /// Use this exact session id: this directory's session with it, or a new one with it
    #[arg(
        long = "session-id",
        value_name = "ID",
        value_parser = crate::session::paths::parse_session_id,
        conflicts_with_all = ["session", "continue_session", "resume"]
    )]
    pub session_id: Option<String>,

    /// Copy a session (a file path, an exact id or a unique id prefix) into a new session here
    #[arg(
        long = "fork",
        value_name = "PATH|ID",
        conflicts_with_all = ["session", "continue_session", "resume", "no_session"]
    )]
    pub fork: Option<String>,

    /// Set the session's display name
    #[arg(short = 'n', long = "name", value_name = "NAME")]
    pub name: Option<String>,

    /// Trust this project for this run (load its settings, hooks, skills, templates, SYSTEM.md)
    #[arg(short = 'a', long = "approve", conflicts_with = "no_approve")]
    pub approve: bool,

    /// Do not trust this project for this run (its resources are ignored)
    #[arg(long = "no-approve")]
    pub no_approve: bool,

    /// Where sessions are stored (default ~/.pi/agent/sessions; also PI_CODING_AGENT_SESSION_DIR)
    #[arg(long = "session-dir", value_name = "DIR")]
    pub session_dir: Option<std::path::PathBuf>,

    /// List available models (optionally filtered) and exit
    #[arg(long = "list-models", num_args = 0..=1, value_name = "SEARCH")]
    pub list_models: Option<Option<String>>,

    /// Script for the offline faux provider (also PI_FAUX_SCRIPT)
    #[arg(long = "faux-script", value_name = "FILE")]
    pub faux_script: Option<PathBuf>,

    /// Load a skill file or directory (repeatable; loads even with -ns)
    #[arg(long = "skill", value_name = "PATH")]
    pub skills: Vec<std::path::PathBuf>,

    /// Do not discover skills; also -ns
    #[arg(long = "no-skills")]
    pub no_skills: bool,

    /// Do not load AGENTS.md / CLAUDE.md context files; also -nc
    #[arg(long = "no-context-files")]
    pub no_context_files: bool,

    /// Load a prompt template file or directory (repeatable; loads even with -np)
    #[arg(long = "prompt-template", value_name = "PATH")]
    pub prompt_templates: Vec<std::path::PathBuf>,

    /// Do not discover prompt templates; also -np
    #[arg(long = "no-prompt-templates")]
    pub no_prompt_templates: bool,

    /// A theme: a file or folder to load (repeatable; loads even with --no-themes), or the
    /// name of the theme to use for this run
    #[arg(long = "theme", value_name = "PATH|NAME")]
    pub themes: Vec<String>,

    /// The theme to use for this run: a name, or LIGHT/DARK (the setting is not changed)
    #[arg(long = "use-theme", value_name = "NAME[/NAME]")]
    pub use_theme: Option<String>,

    /// Do not discover themes (~/.pi/agent/themes, .pi/themes); --theme paths still load
    #[arg(long = "no-themes")]
    pub no_themes: bool,

    /// Load an out-of-process hook for this run (repeatable; split with shell words)
    #[arg(long = "hook", value_name = "CMD")]
    pub hooks: Vec<String>,

    /// Alias of --hook for an executable path (pi's extension flag)
    #[arg(short = 'e', long = "extension", value_name = "PATH")]
    pub extensions: Vec<String>,

    /// Run the Claude Code hooks of this settings.json's `hooks` object, unchanged (repeatable)
    #[arg(long = "claude-hooks", value_name = "FILE")]
    pub claude_hooks: Vec<PathBuf>,

    /// No hooks from settings or the hooks directory (--hook still loads)
    #[arg(long = "no-hooks")]
    pub no_hooks: bool,

    /// No MCP servers connect and no MCP tools
    #[arg(long = "no-mcp")]
    pub no_mcp: bool,

    /// Export a session file to HTML and exit (the first message, if any, is the output path)
    #[arg(long = "export", value_name = "FILE")]
    pub export: Option<PathBuf>,

    /// Show, for every gated call, which hooks answered what, how long each took, and the outcome
    #[arg(long = "explain-hooks")]
    pub explain_hooks: bool,

    /// JSON and RPC modes: also write pi's own events (hook_decision, hook_error, hook_state, mcp_server)
    #[arg(long = "hook-events")]
    pub hook_events: bool,

    /// Verbose logs on stderr
    #[arg(long)]
    pub verbose: bool,

    /// No network at startup (sets PI_OFFLINE=1)
    #[arg(long)]
    pub offline: bool,

    /// Print the version and exit
    #[arg(short = 'v', long = "version")]
    pub version: bool,

    /// @files to include, then messages (each message is one prompt, in order)
    #[arg(value_name = "MESSAGES", allow_hyphen_values = false)]
    pub messages: Vec<String>,
}

/// pi's multi-letter single-dash spellings and their long forms.
const ALIASES: &[(&str, &str)] = &[
    ("-xt", "--exclude-tools"),
    ("-nbt", "--no-builtin-tools"),
    ("-nt", "--no-tools"),
    ("-nc", "--no-context-files"),
    ("-ns", "--no-skills"),
    ("-np", "--no-prompt-templates"),
    ("-na", "--no-approve"),
    ("-ne", "--no-hooks"),
];

/// Rewrite pi's multi-letter single-dash flags to long flags. Arguments after `--` are left
/// alone, and so is anything that is an option's value.
pub fn normalize(args: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = false;
    for a in args {
        if rest {
            out.push(a);
            continue;
        }
        if a == "--" {
            rest = true;
            out.push(a);
            continue;
        }
        match ALIASES.iter().find(|(short, _)| *short == a) {
            Some((_, long)) => out.push((*long).to_string()),
            None => out.push(a),
        }
    }
    out
}

/// Long flags clap does not know, removed from `args` and returned for hooks to claim (pi
/// offers unknown `--long` flags to extensions). Only `--name` (a boolean) and `--name=value`
/// forms are taken: `--name value` would be ambiguous with a message.
pub fn split_unknown_flags(args: Vec<String>) -> (Vec<String>, Vec<(String, serde_json::Value)>) {
    use clap::CommandFactory;
    let cmd = Cli::command();
    let known: Vec<(String, bool)> = cmd
        .get_arguments()
        .filter_map(|a| {
            let takes = a.get_action().takes_values();
            a.get_long().map(|l| (l.to_string(), takes))
        })
        .chain([("help".to_string(), false)])
        .collect();
    let mut kept = Vec::with_capacity(args.len());
    let mut unknown = Vec::new();
    let mut iter = args.into_iter();
    if let Some(program) = iter.next() {
        kept.push(program);
    }
    let mut skip_value = false;
    let mut rest = false;
    for a in iter {
        if rest || skip_value {
            skip_value = false;
            kept.push(a);
            continue;
        }
        if a == "--" {
            rest = true;
            kept.push(a);
            continue;
        }
        let Some(body) = a.strip_prefix("--").filter(|b| !b.is_empty()) else {
            kept.push(a);
            continue;
        };
        let (name, value) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (body, None),
        };
        match known.iter().find(|(k, _)| k == name) {
            Some((_, takes)) => {
                skip_value = *takes && value.is_none();
                kept.push(a);
            }
            None => unknown.push((
                name.to_string(),
                value.map_or(serde_json::Value::Bool(true), |v| {
                    serde_json::Value::String(v.into())
                }),
            )),
        }
    }
    (kept, unknown)
}

/// Whether a `--theme` value means a file or folder: one that exists, or that is written as a
/// path (a `/` in it, or a `.json` name).
fn is_theme_path(value: &str) -> bool {
    value.contains('/') || value.ends_with(".json") || std::path::Path::new(value).exists()
}

impl Cli {
    /// The `--theme` values that are files or folders to load.
    pub fn theme_paths(&self) -> Vec<PathBuf> {
        self.themes
            .iter()
            .filter(|v| is_theme_path(v))
            .map(PathBuf::from)
            .collect()
    }

    /// The theme this run starts with: `--use-theme`, else the last `--theme` value that is
    /// a name rather than a path.
    pub fn theme_choice(&self) -> Option<String> {
        self.use_theme.clone().or_else(|| {
            self.themes
                .iter()
                .rev()
                .find(|v| !is_theme_path(v))
                .cloned()
        })
    }

    /// `--models` as patterns: split at commas, trimmed, empty ones dropped (as pi 1.6).
    pub fn model_patterns(&self) -> Option<Vec<String>> {
        self.models.as_ref().map(|m| {
            m.split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(String::from)
                .collect()
        })
    }

    /// `--mode` as given; text without it.
    pub fn output_mode(&self) -> Mode {
        self.mode.unwrap_or(Mode::Text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        let v = normalize(
            std::iter::once("pi")
                .chain(args.iter().copied())
                .map(String::from),
        );
        Cli::try_parse_from(v)
    }

    #[test]
    fn pi_short_aliases_map_to_long_flags() {
        let c = parse(&["-nbt", "-xt", "bash,edit", "-p", "hi"]).unwrap();
        assert!(c.no_builtin_tools);
        assert_eq!(c.exclude_tools.unwrap(), vec!["bash", "edit"]);
        assert!(c.print);
        assert_eq!(c.messages, vec!["hi"]);
    }

    #[test]
    fn list_models_takes_optional_search() {
        assert_eq!(parse(&["--list-models"]).unwrap().list_models, Some(None));
        assert_eq!(
            parse(&["--list-models", "son"]).unwrap().list_models,
            Some(Some("son".into()))
        );
    }

    #[test]
    fn unknown_flag_is_an_error() {
        assert!(parse(&["--frobnicate"]).is_err());
    }

    #[test]
    fn hooks_are_repeatable_and_extension_is_an_alias() {
        let c = parse(&[
            "--hook",
            "./a.py --x",
            "-e",
            "./b",
            "--hook",
            "c",
            "--no-hooks",
            "hi",
        ])
        .unwrap();
        assert_eq!(c.hooks, vec!["./a.py --x", "c"]);
        assert_eq!(c.extensions, vec!["./b"]);
        assert!(c.no_hooks);
    }

    #[test]
    fn unknown_long_flags_are_set_aside_for_hooks() {
        let args = [
            "pi",
            "--model",
            "--strict",
            "--plan",
            "--level=3",
            "-p",
            "hi",
            "--",
            "--x",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let (kept, unknown) = split_unknown_flags(args);
        assert_eq!(
            kept,
            vec!["pi", "--model", "--strict", "-p", "hi", "--", "--x"]
        );
        assert_eq!(
            unknown,
            vec![
                ("plan".to_string(), serde_json::json!(true)),
                ("level".to_string(), serde_json::json!("3"))
            ]
        );
    }

    #[test]
    fn theme_values_are_paths_or_a_name() {
        let c = parse(&[
            "--theme",
            "./t/a.json",
            "--theme",
            "ocean",
            "--theme",
            "b.json",
        ])
        .unwrap();
        assert_eq!(
            c.theme_paths(),
            vec![PathBuf::from("./t/a.json"), "b.json".into()]
        );
        assert_eq!(c.theme_choice().as_deref(), Some("ocean"));
        let c = parse(&[
            "--theme",
            "ocean",
            "--use-theme",
            "light/dark",
            "--no-themes",
        ])
        .unwrap();
        assert_eq!(c.theme_choice().as_deref(), Some("light/dark"));
        assert!(c.no_themes);
    }

    #[test]
    fn a_repeated_provider_takes_the_last_value_as_pi_does() {
        let c = parse(&["--provider", "openai", "--provider", "faux", "--model", "x"]).unwrap();
        assert_eq!(c.provider.as_deref(), Some("faux"));
        let c = parse(&["--model", "a", "--model", "b"]).unwrap();
        assert_eq!(c.model.as_deref(), Some("b"));
    }

    #[test]
    fn models_are_comma_separated_patterns() {
        let c = parse(&["--models", " sonnet:high, ,openai/*,"]).unwrap();
        assert_eq!(
            c.model_patterns().unwrap(),
            vec!["sonnet:high".to_string(), "openai/*".to_string()]
        );
        assert!(parse(&[]).unwrap().model_patterns().is_none());
    }

    #[test]
    fn export_takes_the_session_file_and_an_optional_output() {
        let c = parse(&["--export", "s.jsonl", "out.html"]).unwrap();
        assert_eq!(c.export.as_deref(), Some(std::path::Path::new("s.jsonl")));
        assert_eq!(c.messages, vec!["out.html"]);
    }

    #[test]
    fn tools_are_comma_separated() {
        let c = parse(&["-t", "read,grep"]).unwrap();
        assert_eq!(c.tools.unwrap(), vec!["read", "grep"]);
    }
}
