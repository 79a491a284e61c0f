//! Handing the terminal to something else and taking it back, as pi 1.6 does: Ctrl+G opens
//! `$VISUAL` (else `$EDITOR`, else `nano`) on the editor's text in a temporary `prompt.md` and
//! loads what it saved; Ctrl+Z suspends pi to the shell, and `fg` brings it back. Either way
//! the live region is cleared, the terminal restored to how the shell left it, and afterwards
//! our modes are entered again and the whole transcript is drawn anew (the other program drew
//! over the screen).
//!
//! The loop parks its key reader around [`run`] (it would otherwise read the keys meant for
//! the editor or the shell).

use std::ffi::OsString;
use std::io;

use super::app::{App, Takeover};
use super::terminal::{self, Terminal};

/// The editor command, as pi 1.6 picks it.
fn editor_command() -> String {
    ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(|k| std::env::var(k).ok())
        .find(|v| !v.trim().is_empty())
        .unwrap_or_else(|| "nano".to_string())
}

/// Gives the terminal away for `what`, then takes it back and redraws everything.
pub async fn run(app: &mut App, term: &Terminal, what: Takeover) -> io::Result<()> {
    app.screen.clear_live()?;
    terminal::restore();
    match what {
        Takeover::Suspend => {
            if let Err(e) = crate::watchdog::suspend_foreground_group() {
                app.notify(format!("Cannot suspend: {e}"), app.theme.error);
            }
        }
        Takeover::Editor => {
            let text = app.editor.text();
            let cwd = app.cwd.clone();
            let outcome = tokio::task::spawn_blocking(move || edit(&text, &cwd))
                .await
                .map_err(io::Error::other)?;
            match outcome {
                Ok(edited) => app.editor.set_text(&edited),
                Err(message) => app.notify(message, app.theme.warning),
            }
        }
    }
    term.reenter()?;
    app.repaint_all()
}

/// Runs the editor on `text`; the saved text (one final newline dropped), or what went wrong
/// in pi 1.6's words (the editor's text then stays as it was).
fn edit(text: &str, cwd: &std::path::Path) -> Result<String, String> {
    let command = editor_command();
    let words = shell_words::split(&command).unwrap_or_else(|_| vec![command.clone()]);
    let Some((program, args)) = words.split_first() else {
        return Err(format!("Failed to launch external editor: {command}"));
    };
    let dir = tempfile::Builder::new()
        .prefix("pi-editor-")
        .tempdir()
        .map_err(|e| format!("Cannot create the file for the external editor: {e}"))?;
    let path = dir.path().join("prompt.md");
    std::fs::write(&path, text)
        .map_err(|e| format!("Cannot create the file for the external editor: {e}"))?;
    term_println!("Launching external editor: {command}\nPi will resume when the editor exits.");
    let mut argv: Vec<OsString> = args.iter().map(OsString::from).collect();
    argv.push(path.clone().into_os_string());
    let status = crate::watchdog::run_in_foreground(&OsString::from(program), &argv, cwd)
        .map_err(|_| format!("Failed to launch external editor: {command}"))?;
    if !status.success() {
        let how = match status.code() {
            Some(c) => format!("code {c}"),
            None => crate::watchdog::describe_status(&status),
        };
        return Err(format!(
            "External editor exited with {how}; prompt unchanged"
        ));
    }
    let saved = std::fs::read_to_string(&path)
        .map_err(|e| format!("Cannot read what the external editor saved: {e}"))?;
    let saved = saved.strip_prefix('\u{feff}').unwrap_or(&saved);
    Ok(saved.strip_suffix('\n').unwrap_or(saved).to_string())
}
