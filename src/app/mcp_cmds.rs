//! `pi mcp list|get|add|add-json|remove`: managing the user's `~/.pi/agent/mcp.json` and the
//! project's `.pi/mcp.json` without starting a session — no model, no hook and no MCP server
//! runs, and no `env` or header value is resolved. The shape follows `claude mcp`, which is
//! what people know. Reading the trust store is the only look beyond the two files: a project's
//! entries are shown as ignored until the project is trusted, as a session would ignore them.

mod show;
mod store;

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use serde_json::Value;

use crate::config::{self, ForeignEnv, Settings, SystemEnv};
use crate::mcp::config::{entry, Source};
use crate::mcp::edit::{self, build_entry, Document, EditError, NewEntry, Target};
use crate::resources::trust::TrustDecision;
use store::StoreError;

/// Which `mcp.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Scope {
    /// `~/.pi/agent/mcp.json` (every project)
    User,
    /// `.pi/mcp.json` in this directory (used once the project is trusted)
    Project,
}

impl Scope {
    pub fn word(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum TransportArg {
    /// A command pi starts, speaking MCP on its stdin and stdout
    Stdio,
    /// Streamable HTTP (the SSE transport is not supported)
    #[value(alias = "streamable-http")]
    Http,
    /// Refused with an explanation rather than clap's list of values.
    #[value(hide = true)]
    Sse,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ExposureArg {
    /// Declared to the model like a built-in tool
    Direct,
    /// Declared to the model; hooks cannot run it through `tools.execute`
    ModelOnly,
    /// Declared once `tool_search` finds it (the default)
    Deferred,
    /// Never offered to the model
    Hidden,
    /// Deferred until pi has codemode
    Codemode,
}

#[derive(Debug, Parser)]
#[command(
    name = "pi mcp",
    bin_name = "pi mcp",
    about = "Manage MCP servers in ~/.pi/agent/mcp.json and .pi/mcp.json (no session is started)"
)]
pub struct McpArgs {
    #[command(subcommand)]
    cmd: Option<McpCmd>,
}

#[derive(Debug, Subcommand)]
enum McpCmd {
    /// List every configured server (user and project) and what a session would do with it
    List {
        /// Print JSON (values as written in the files, unmasked)
        #[arg(long)]
        json: bool,
        /// Show this project's entries as trusted (nothing is remembered)
        #[arg(short = 'a', long)]
        approve: bool,
    },
    /// Show one server in full
    Get {
        name: String,
        /// Which file's entry, when both have one (default: the one a session uses)
        #[arg(short, long, value_enum)]
        scope: Option<Scope>,
        /// Print JSON (values as written in the file, unmasked)
        #[arg(long)]
        json: bool,
        /// Show this project's entries as trusted (nothing is remembered)
        #[arg(short = 'a', long)]
        approve: bool,
    },
    /// Add a server: `pi mcp add NAME URL` (streamable HTTP) or
    /// `pi mcp add NAME -- COMMAND [ARGS...]` (stdio)
    Add(AddArgs),
    /// Add a server from its entry as written in mcp.json, e.g.
    /// '{"command": "npx", "args": ["-y", "pkg"]}'
    #[command(name = "add-json")]
    AddJson {
        name: String,
        /// One entry object
        json: String,
        /// Which file to add it to
        #[arg(short, long, value_enum, default_value_t = Scope::User)]
        scope: Scope,
        /// Replace an entry of the same name in that file
        #[arg(long)]
        force: bool,
    },
    /// Remove a server
    Remove {
        name: String,
        /// Which file (needed only when both have the name)
        #[arg(short, long, value_enum)]
        scope: Option<Scope>,
    },
}

#[derive(Debug, Args)]
struct AddArgs {
    /// The server's name: letters, digits, `_` and `-`
    name: String,
    /// Which file to add it to
    #[arg(short, long, value_enum, default_value_t = Scope::User)]
    scope: Scope,
    /// An environment variable for a stdio server; the value may be ${VAR} or !command,
    /// resolved when the server starts (repeatable)
    #[arg(short, long = "env", value_name = "KEY=VALUE", value_parser = edit::parse_env)]
    env: Vec<(String, String)>,
    /// A header for an HTTP server, e.g. 'Authorization: Bearer ${TOKEN}' (repeatable)
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE", value_parser = edit::parse_header)]
    headers: Vec<(String, String)>,
    /// Per-request timeout (progress from the server resets it; default 60)
    #[arg(long, value_name = "SECONDS", value_parser = edit::parse_timeout_secs)]
    timeout: Option<u64>,
    /// How the model reaches the server's tools
    #[arg(long, value_enum)]
    exposure: Option<ExposureArg>,
    /// Default: http for an http(s):// URL, else stdio
    #[arg(short, long, value_enum)]
    transport: Option<TransportArg>,
    /// Replace an entry of the same name in that file
    #[arg(long)]
    force: bool,
    /// An http:// or https:// URL (streamable HTTP), or after `--` a command and its
    /// arguments (stdio; the command is one executable, not a shell line). Options go
    /// anywhere before `--`, as with `claude mcp add`.
    #[arg(required = true, num_args = 1.., value_name = "URL | -- COMMAND [ARGS]")]
    target: Vec<String>,
}

/// Where the two files are, and what decides about the project's.
struct Files {
    agent_dir: PathBuf,
    cwd: PathBuf,
    user: PathBuf,
    project: PathBuf,
}

impl Files {
    fn find() -> anyhow::Result<Files> {
        let agent_dir = config::agent_dir(&SystemEnv)?;
        let cwd = std::env::current_dir().context("cannot determine the working directory")?;
        Ok(Files {
            user: agent_dir.join("mcp.json"),
            project: cwd.join(".pi").join("mcp.json"),
            agent_dir,
            cwd,
        })
    }

    fn path(&self, scope: Scope) -> &Path {
        match scope {
            Scope::User => &self.user,
            Scope::Project => &self.project,
        }
    }

    /// The trust decision a session would reach before asking anyone (no hook runs here to
    /// vote; nothing is prompted or remembered).
    fn trust(&self, approve: bool) -> anyhow::Result<TrustDecision> {
        let settings = match Settings::load(&config::settings_path(&self.agent_dir), None) {
            Ok(s) => s,
            Err(e) => {
                term_eprintln!("Warning: {e}; deciding trust without it");
                Settings::from_value(Value::Null)
            }
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .context("cannot start the async runtime")?;
        Ok(runtime.block_on(super::trust::decide_with(
            approve.then_some(true),
            &settings,
            &self.agent_dir,
            &self.cwd,
            None,
        )))
    }

    /// What the user's `projectEnv` grants this project, as a session reads it.
    fn project_env(&self) -> ForeignEnv {
        let settings = Settings::load(&config::settings_path(&self.agent_dir), None)
            .unwrap_or_else(|_| Settings::from_value(Value::Null));
        let (grant, unreadable) = settings.project_grant_or_none(&self.cwd);
        if let Some(why) = unreadable {
            term_eprintln!("Warning: {why}");
        }
        ForeignEnv::project(&grant, &SystemEnv)
    }

    /// Why the project's entries are ignored, if they are.
    fn untrusted(&self, approve: bool) -> anyhow::Result<Option<String>> {
        let d = self.trust(approve)?;
        Ok((!d.trusted).then(|| d.describe()))
    }
}

/// `pi mcp …` with its arguments (the first is `mcp`); the exit code.
pub fn main(args: Vec<String>) -> anyhow::Result<i32> {
    let parsed = match McpArgs::try_parse_from(args) {
        Ok(p) => p,
        Err(e) => return Ok(super::exit_for(e)),
    };
    let Some(cmd) = parsed.cmd else {
        McpArgs::command()
            .print_help()
            .context("cannot print the usage")?;
        return Ok(0);
    };
    match run(cmd, &Files::find()?) {
        Ok(()) => Ok(0),
        Err(e) => {
            term_eprintln!("Error: {e:#}");
            Ok(super::EXIT_ERROR)
        }
    }
}

fn run(cmd: McpCmd, files: &Files) -> anyhow::Result<()> {
    match cmd {
        McpCmd::List { json, approve } => {
            let (views, servers) = show::collect(
                &files.user,
                &files.project,
                files.untrusted(approve)?,
                &files.project_env(),
            );
            if json {
                let trusted = files.trust(approve)?.trusted;
                term_println!(
                    "{}",
                    crate::term::json::pretty(&show::list_json(&views, &servers, trusted))
                );
            } else {
                term_print!("{}", show::list_text(&views, &servers));
                // A grant of the user's secrets to the project is never silent.
                let used = servers
                    .iter()
                    .filter(|s| s.scope == Scope::Project && s.status == show::Status::Enabled)
                    .filter_map(|s| s.checked.as_ref().ok());
                for line in crate::mcp::grants_used(used) {
                    term_println!("{line}");
                }
            }
            Ok(())
        }
        McpCmd::Get {
            name,
            scope,
            json,
            approve,
        } => get(files, &name, scope, json, approve),
        McpCmd::Add(a) => {
            let target = target_of(a.transport, &a.target)?;
            match &target {
                Target::Stdio { .. } if !a.headers.is_empty() => bail!(
                    "--header applies to HTTP servers; \"{}\" runs a command (give it \
                     environment variables with --env)",
                    a.name
                ),
                Target::Http { url } if !a.env.is_empty() => bail!(
                    "--env applies to stdio servers; \"{}\" is reached at {url} (send \
                     values with --header)",
                    a.name
                ),
                _ => {}
            }
            let parts = NewEntry {
                env: a.env,
                headers: a.headers,
                timeout_ms: a.timeout,
                exposure: a
                    .exposure
                    .and_then(|e| e.to_possible_value())
                    .map(|v| v.get_name().to_string()),
            };
            write_entry(
                files,
                &a.name,
                build_entry(&target, &parts),
                a.scope,
                a.force,
            )
        }
        McpCmd::AddJson {
            name,
            json,
            scope,
            force,
        } => {
            let value: Value = serde_json::from_str(&json)
                .with_context(|| format!("the entry for \"{name}\" is not valid JSON"))?;
            write_entry(files, &name, value, scope, force)
        }
        McpCmd::Remove { name, scope } => remove(files, &name, scope),
    }
}

/// A URL means streamable HTTP; anything else is a command line.
fn target_of(transport: Option<TransportArg>, words: &[String]) -> anyhow::Result<Target> {
    let Some((first, rest)) = words.split_first() else {
        bail!("give a URL or `-- COMMAND [ARGS...]`");
    };
    if transport == Some(TransportArg::Sse) {
        bail!("the SSE transport is not supported; use streamable HTTP (--transport http)");
    }
    let is_url = first.starts_with("http://") || first.starts_with("https://");
    let http = match transport {
        Some(t) => t == TransportArg::Http,
        None => is_url,
    };
    if !http {
        return Ok(Target::Stdio {
            command: first.clone(),
            args: rest.to_vec(),
        });
    }
    if !is_url {
        bail!("--transport http needs an http:// or https:// URL, not \"{first}\"");
    }
    if !rest.is_empty() {
        bail!(
            "a URL takes no arguments after it, but got {}",
            shell_words::join(rest)
        );
    }
    Ok(Target::Http { url: first.clone() })
}

fn write_entry(
    files: &Files,
    name: &str,
    value: Value,
    scope: Scope,
    force: bool,
) -> anyhow::Result<()> {
    // Checked before the file (or its directory) is touched: a refused entry writes nothing.
    entry(name, &value, Source::User).map_err(|reason| EditError::Invalid {
        name: name.to_string(),
        reason,
    })?;
    let path = files.path(scope);
    let written = store::edit(path, scope == Scope::User, |doc| {
        doc.insert(name, value.clone(), force)
    })
    .map_err(|e| match e {
        StoreError::Rejected {
            source: EditError::Exists(_),
            ..
        } => anyhow::anyhow!("{e} (pass --force to replace it, or remove it first)"),
        e => e.into(),
    })?;
    let (replaced, checked) = written.value;
    let kind = match checked.transport {
        crate::mcp::config::Transport::Stdio { .. } => "stdio",
        crate::mcp::config::Transport::Http { .. } => "HTTP",
    };
    term_println!(
        "{} {kind} MCP server \"{name}\" {} {} ({} scope{})",
        if replaced { "Replaced" } else { "Added" },
        if replaced { "in" } else { "to" },
        written.path.display(),
        scope.word(),
        if written.created { ", new file" } else { "" }
    );
    if scope == Scope::Project {
        if let Some(why) = files.untrusted(false)? {
            term_eprintln!(
                "Note: {} is ignored until this project is trusted: {why}",
                files.project.display()
            );
        }
    }
    Ok(())
}

/// Whether `path` has `name`; a file that cannot be parsed is an error naming it.
fn has(path: &Path, name: &str) -> anyhow::Result<Option<Document>> {
    let Some(bytes) = store::read(path)? else {
        return Ok(None);
    };
    let doc = Document::parse(&bytes).map_err(|source| StoreError::Unreadable {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(doc.get(name).is_some().then_some(doc))
}

fn known_names(files: &Files) -> Vec<String> {
    let mut names = Vec::new();
    for p in [&files.user, &files.project] {
        let doc = store::read(p)
            .ok()
            .flatten()
            .and_then(|b| Document::parse(b).ok());
        for n in doc.map(|d| d.names()).unwrap_or_default() {
            if !names.contains(&n) {
                names.push(n);
            }
        }
    }
    names
}

fn remove(files: &Files, name: &str, scope: Option<Scope>) -> anyhow::Result<()> {
    let scope = match scope {
        Some(s) => s,
        None => match (has(&files.user, name)?, has(&files.project, name)?) {
            (Some(_), Some(_)) => bail!(
                "server \"{name}\" is in both {} (user) and {} (project); say which with \
                 --scope user or --scope project",
                files.user.display(),
                files.project.display()
            ),
            (Some(_), None) => Scope::User,
            (None, Some(_)) => Scope::Project,
            (None, None) => bail!(
                "no MCP server named \"{name}\" in {} or {} ({})",
                files.user.display(),
                files.project.display(),
                edit::known_list(&known_names(files))
            ),
        },
    };
    let path = files.path(scope);
    if store::read(path)?.is_none() {
        bail!(
            "no MCP server named \"{name}\" in {}: the file does not exist",
            path.display()
        );
    }
    let written = store::edit(path, scope == Scope::User, |doc| doc.remove(name))?;
    term_println!(
        "Removed MCP server \"{name}\" from {} ({} scope)",
        written.path.display(),
        scope.word()
    );
    Ok(())
}

fn get(
    files: &Files,
    name: &str,
    scope: Option<Scope>,
    json: bool,
    approve: bool,
) -> anyhow::Result<()> {
    let (views, servers) = show::collect(
        &files.user,
        &files.project,
        files.untrusted(approve)?,
        &files.project_env(),
    );
    let matching: Vec<&show::ServerView> = servers
        .iter()
        .filter(|s| s.name == name && scope.is_none_or(|sc| s.scope == sc))
        .collect();
    // The entry a session uses, else the first found.
    let Some(chosen) = matching
        .iter()
        .find(|s| matches!(s.status, show::Status::Enabled | show::Status::Disabled))
        .or(matching.first())
    else {
        for p in views.iter().filter_map(|v| v.problem.as_ref()) {
            term_eprintln!("Warning: {p}");
        }
        let (searched, known): (String, Vec<String>) = match scope {
            Some(s) => {
                let path = files.path(s);
                let names = servers
                    .iter()
                    .filter(|v| v.scope == s)
                    .map(|v| v.name.clone())
                    .collect();
                (path.display().to_string(), names)
            }
            None => (
                format!("{} or {}", files.user.display(), files.project.display()),
                known_names(files),
            ),
        };
        bail!(
            "no MCP server named \"{name}\" in {searched} ({})",
            edit::known_list(&known)
        );
    };
    if json {
        term_println!("{}", crate::term::json::pretty(&show::server_json(chosen)));
    } else {
        let others: Vec<&show::ServerView> = matching
            .iter()
            .filter(|s| s.scope != chosen.scope)
            .copied()
            .collect();
        term_print!("{}", show::get_text(chosen, &others));
    }
    Ok(())
}
