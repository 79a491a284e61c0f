//! `pi hook replay CMD --session FILE…`: the command's edge — arguments, starting the decision
//! sources, printing. The work is in `crate::replay`.
//!
//! Exit status, as diff(1): 0 when every file was read (and, with `--against`, no call was
//! decided differently), 1 when `--against` found differences, 2 when a file could not be read
//! or a hook could not start.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::replay::calls::expand;
use crate::replay::claude::ClaudeHooks;
use crate::replay::report::{self, Row, RunInfo};
use crate::replay::{read_sessions, DecisionSource, NativeHook};

#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// The hook command to judge the calls (split with shell words); or give --claude-hooks
    #[arg(required_unless_present = "claude_hooks")]
    pub command: Option<String>,
    /// Judge the calls with the Claude Code hooks of this settings.json instead (its `hooks`
    /// object, unmodified; repeatable, in order)
    #[arg(long = "claude-hooks", value_name = "FILE", conflicts_with = "command")]
    pub claude_hooks: Vec<PathBuf>,
    /// Session files (pi's or the TypeScript pi's JSONL) or directories of them (searched for
    /// `*.jsonl`)
    #[arg(long = "session", value_name = "FILE", num_args = 1.., required = true)]
    pub sessions: Vec<PathBuf>,
    /// Also ask this hook, and show only the calls the two decide differently
    #[arg(long, value_name = "CMD")]
    pub against: Option<String>,
    /// One JSON document instead of the table
    #[arg(long)]
    pub json: bool,
    /// Reply deadline per call in milliseconds (default: each hook's subscription, else 30000)
    #[arg(long = "deadline-ms")]
    pub deadline_ms: Option<u64>,
}

async fn start(
    cmd: &str,
    cwd: &Path,
    deadline: Option<Duration>,
) -> Option<Box<dyn DecisionSource>> {
    match NativeHook::start(cmd, cwd, deadline).await {
        Ok(h) => Some(Box::new(h)),
        Err(e) => {
            term_eprintln!("Error: {cmd}: {e}");
            None
        }
    }
}

pub async fn hook_replay(args: &ReplayArgs, cwd: &Path) -> anyhow::Result<i32> {
    let files = match expand(&args.sessions) {
        Ok(f) => f,
        Err(e) => {
            term_eprintln!("Error: {e}");
            return Ok(2);
        }
    };
    let (calls, errors) = read_sessions(&files);
    for e in &errors {
        term_eprintln!("Error: {e}");
    }
    let deadline = args.deadline_ms.map(Duration::from_millis);
    let primary: Box<dyn DecisionSource> = match &args.command {
        Some(cmd) => match start(cmd, cwd, deadline).await {
            Some(s) => s,
            None => return Ok(2),
        },
        None => {
            let mut warnings = Vec::new();
            let loaded = ClaudeHooks::load(&args.claude_hooks, cwd, &mut warnings);
            for w in &warnings {
                term_eprintln!("Warning: {w}");
            }
            match loaded {
                Ok(h) => Box::new(h),
                Err(e) => {
                    term_eprintln!("Error: {e}");
                    return Ok(2);
                }
            }
        }
    };
    let against = match &args.against {
        Some(cmd) => match start(cmd, cwd, deadline).await {
            Some(s) => Some(s),
            None => {
                primary.close().await;
                return Ok(2);
            }
        },
        None => None,
    };
    let t0 = Instant::now();
    let mut rows = Vec::with_capacity(calls.len());
    for call in &calls {
        let decision = primary.decide(call).await;
        let other = match &against {
            Some(b) => Some(b.decide(call).await),
            None => None,
        };
        rows.push(Row {
            call,
            decision,
            against: other,
        });
    }
    let elapsed = t0.elapsed();
    let (a_name, b_name) = (primary.name(), against.as_ref().map(|b| b.name()));
    primary.close().await;
    if let Some(b) = &against {
        b.close().await;
    }
    // Two hooks that register the same name are told apart by their commands.
    let b_label = match (&b_name, &args.against) {
        (Some(b), Some(cmd)) if *b == a_name => Some(format!("{b} ({cmd})")),
        (b, _) => b.clone(),
    };
    let info = RunInfo {
        hook: &a_name,
        against: b_label.as_deref(),
        files: files.len(),
        elapsed,
    };
    if args.json {
        term_println!("{}", crate::term::json::line(&report::json(&rows, &info)));
    } else {
        term_print!("{}", report::table(&rows, &info));
    }
    Ok(if !errors.is_empty() {
        2
    } else if rows.iter().any(Row::differs) {
        1
    } else {
        0
    })
}
