//! `pi auth login`'s account sign-in on the terminal: a provider's [`OAuthFlow`] driven
//! through an [`Interaction`] that writes and asks as pi 1.6's `auth login` does
//! (cli/auth-login.js): the URL to open (opened in the browser unless `--no-browser`), the
//! browser sign-in chosen where a flow offers methods (`--no-browser` takes the other one),
//! questions on stdout, answers from stdin, a secret without echo.
//!
//! Unlike 1.6 the answers may come from a pipe, so a script (or a test) can sign in.

use std::io::{BufRead as _, IsTerminal as _};
use std::sync::Mutex;

use anyhow::Context as _;
use async_trait::async_trait;

use crate::config::auth_store;
use crate::oauth::{AuthEvent, Choice, Interaction, OAuthFlow, Prompt};

/// The terminal as the login's user.
struct Terminal {
    provider: &'static str,
    /// `--no-browser` not given: open pages, and take the browser method.
    browser: bool,
    /// The methods skipped by taking the browser one, named in a hint.
    skipped: Mutex<Vec<&'static str>>,
    /// Where this installation's id is kept (the global settings).
    settings: std::path::PathBuf,
}

#[async_trait]
impl Interaction for Terminal {
    async fn prompt(&self, prompt: Prompt) -> Option<String> {
        let (message, placeholder, secret) = match prompt {
            Prompt::Select { message, options } => return self.select(&message, &options).await,
            Prompt::Text {
                message,
                placeholder,
            }
            | Prompt::ManualCode {
                message,
                placeholder,
            } => (message, placeholder, false),
            Prompt::Secret {
                message,
                placeholder,
            } => (message, placeholder, true),
        };
        let placeholder = placeholder.map_or_else(String::new, |p| format!(" ({p})"));
        // A blank line is an answer (Copilot's "blank for github.com"); only the end of
        // input cancels.
        let question = format!("{message}{placeholder}: ");
        let read = tokio::task::spawn_blocking(move || read_line(&question, secret));
        read.await.ok().and_then(Result::ok).flatten()
    }

    fn notify(&self, event: AuthEvent) {
        match event {
            AuthEvent::AuthUrl { url, instructions } => {
                term_println!("Open this URL to sign in:\n  {url}");
                if let Some(text) = instructions {
                    term_println!("{text}");
                }
                if self.browser {
                    crate::oauth::browser::open(&url);
                }
                let rerun = format!("\"pi auth login {} --no-browser\"", self.provider);
                let skipped = self.skipped.lock().map(|s| s.clone()).unwrap_or_default();
                match skipped.as_slice() {
                    [] => {}
                    [only] => term_println!("To use \"{only}\" instead, run {rerun}"),
                    more => {
                        let labels: Vec<String> = more.iter().map(|l| format!("\"{l}\"")).collect();
                        term_println!(
                            "Other sign-in methods: {}. Run {rerun} to choose one.",
                            labels.join(", ")
                        );
                    }
                }
            }
            AuthEvent::DeviceCode {
                user_code,
                verification_uri,
                open_browser,
            } => {
                term_println!("Open {verification_uri} and enter code: {user_code}");
                if self.browser && open_browser {
                    crate::oauth::browser::open(&verification_uri);
                }
                term_println!("Waiting for authentication...");
            }
            AuthEvent::Info { message, links } => {
                term_println!("{message}");
                for (label, url) in links {
                    let label = label.map_or_else(String::new, |l| format!("{l}: "));
                    term_println!("  {label}{url}");
                }
            }
            AuthEvent::Progress { message } => term_println!("{message}"),
        }
    }

    fn device_id(&self) -> Option<String> {
        crate::config::settings_file::device_id(&self.settings).ok()
    }
}

impl Terminal {
    /// The browser method (the first) unless `--no-browser`; then the other one, or a
    /// numbered choice when there are several.
    async fn select(&self, message: &str, options: &[Choice]) -> Option<String> {
        let (first, others) = options.split_first()?;
        if self.browser {
            if let Ok(mut skipped) = self.skipped.lock() {
                *skipped = others.iter().map(|o| o.label).collect();
            }
            return Some(first.id.to_string());
        }
        match others {
            [] => Some(first.id.to_string()),
            [only] => {
                term_println!("{message} {}", only.label);
                Some(only.id.to_string())
            }
            several => choose(message, several).await,
        }
    }
}

/// A numbered choice on the terminal, asked until a number in range is given.
async fn choose(message: &str, options: &[Choice]) -> Option<String> {
    term_println!("{message}");
    for (i, o) in options.iter().enumerate() {
        let description = o
            .description
            .map_or_else(String::new, |d| format!(" - {d}"));
        term_println!("  {}. {}{description}", i + 1, o.label);
    }
    loop {
        let answer = ask(format!("Select 1-{}: ", options.len()), false).await?;
        let picked = answer
            .parse::<usize>()
            .ok()
            .and_then(|n| options.get(n.checked_sub(1)?));
        if let Some(o) = picked {
            return Some(o.id.to_string());
        }
        term_println!("Enter a number from 1 to {}.", options.len());
    }
}

/// One answer read off the terminal (or a pipe), trimmed; `None` at end of input or when
/// nothing was entered.
async fn ask(question: String, secret: bool) -> Option<String> {
    let read = tokio::task::spawn_blocking(move || read_answer(&question, secret));
    read.await.ok().and_then(Result::ok).flatten()
}

/// `question` on stdout, then one line from stdin (without echo for a secret on a terminal),
/// trimmed; `None` at end of input or when nothing was entered.
pub(super) fn read_answer(question: &str, secret: bool) -> anyhow::Result<Option<String>> {
    Ok(read_line(question, secret)?.filter(|a| !a.is_empty()))
}

/// `question` on stdout, then one line from stdin, trimmed; `None` only at end of input.
fn read_line(question: &str, secret: bool) -> anyhow::Result<Option<String>> {
    let stdin = std::io::stdin();
    let tty = stdin.is_terminal();
    if tty {
        crate::term::out::line(
            crate::term::out::To::Stdout,
            format_args!("{question}"),
            false,
        );
    }
    let mut line = String::new();
    let read = {
        let _echo = (tty && secret).then(EchoOff::new);
        stdin
            .lock()
            .read_line(&mut line)
            .context("cannot read the answer")?
    };
    if tty && secret {
        term_println!();
    }
    Ok((read > 0).then(|| line.trim().to_string()))
}

/// Signs in to `flow`'s provider and stores the tokens in `path` as 1.6 does; the exit code.
pub(super) fn sign_in(
    flow: &'static dyn OAuthFlow,
    display_name: &str,
    agent_dir: &std::path::Path,
    browser: bool,
) -> anyhow::Result<i32> {
    let path = &crate::config::auth_path(agent_dir);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let terminal = Terminal {
        provider: flow.provider(),
        browser,
        skipped: Mutex::new(Vec::new()),
        settings: crate::config::settings_path(agent_dir),
    };
    let result = runtime.block_on(flow.login(&terminal));
    // A terminal read may still be waiting for a line nobody will type.
    runtime.shutdown_background();
    let tokens = match result {
        Ok(t) => t,
        Err(crate::oauth::login::LoginError::Cancelled) => {
            term_eprintln!("Login cancelled.");
            return Ok(1);
        }
        Err(e) => {
            term_eprintln!("Failed to log in to {display_name}: {e}");
            return Ok(1);
        }
    };
    auth_store::update(path, |m| {
        let entry = tokens.into_entry(m.get(flow.provider()));
        m.insert(flow.provider().to_string(), entry);
        (true, ())
    })?;
    term_println!(
        "Logged in to {display_name}. Credentials saved to {}",
        path.display()
    );
    Ok(0)
}

/// The terminal's echo switched off until dropped.
struct EchoOff(Option<nix::sys::termios::Termios>);

impl EchoOff {
    fn new() -> EchoOff {
        use nix::sys::termios::{tcgetattr, tcsetattr, LocalFlags, SetArg};
        let stdin = std::io::stdin();
        let Ok(saved) = tcgetattr(&stdin) else {
            return EchoOff(None);
        };
        let mut quiet = saved.clone();
        quiet.local_flags.remove(LocalFlags::ECHO);
        let _ = tcsetattr(&stdin, SetArg::TCSANOW, &quiet);
        EchoOff(Some(saved))
    }
}

impl Drop for EchoOff {
    fn drop(&mut self) {
        if let Some(saved) = &self.0 {
            let _ = nix::sys::termios::tcsetattr(
                std::io::stdin(),
                nix::sys::termios::SetArg::TCSANOW,
                saved,
            );
        }
    }
}
