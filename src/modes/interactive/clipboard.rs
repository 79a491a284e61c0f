//! Copying text to the system clipboard, the way pi 1.6 reaches it (`/copy`, Ctrl+X in the
//! editor and in `/tree`): the platform's clipboard program first (`pbcopy` on macOS;
//! `termux-clipboard-set`, `wl-copy` under Wayland, `xclip` or `xsel` under X11), then the
//! terminal's OSC 52 where only the terminal can reach the person's clipboard — over SSH or
//! mosh (or with `PI_CLIPBOARD_OSC52=1`), or on a machine with no display at all. A desktop
//! session whose program failed is told so rather than shown a "Copied" that OSC 52 cannot
//! promise, with 1.6's words for what to install.
//!
//! The program runs through the watchdog like every process `pi` starts, from `/`, in a group
//! of its own (Ctrl+Z stops `pi`'s group; the clipboard owner must not stop with it), with only
//! the variables a clipboard program needs — never the user's keys. What 1.6 does beyond this
//! (Windows' clipboard through PowerShell under WSL without WSLg) is left to OSC 52.

use std::ffi::OsString;
use std::time::Duration;

use tokio::io::AsyncWriteExt;

use crate::watchdog::{Command, Stdio};

/// OSC 52 payloads beyond this many base64 bytes are refused, as 1.6 refuses them.
const MAX_OSC52_ENCODED: usize = 100_000;
/// How long a clipboard program may take.
const PROGRAM_TIMEOUT: Duration = Duration::from_secs(5);
/// What a clipboard program is given of `pi`'s environment.
const PASSED_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
    "XDG_RUNTIME_DIR",
    "DBUS_SESSION_BUS_ADDRESS",
    "TERMUX_VERSION",
    "PREFIX",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
];

/// Why nothing was copied, in pi 1.6's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClipboardError {
    #[error("Clipboard unavailable: text exceeds the OSC 52 size limit")]
    TooLarge,
    #[error("Clipboard unavailable: install the Termux:API app and `termux-api` package")]
    Termux,
    #[error("Clipboard unavailable: install `wl-clipboard` (`wl-copy`) or check Wayland access")]
    Wayland,
    #[error("Clipboard unavailable: install `xclip` or `xsel`, or check X11 access")]
    X11,
    #[error("Clipboard unavailable")]
    Unavailable,
}

/// What the environment offers: decided once from the variables, so it can be tested.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reach {
    macos: bool,
    termux: bool,
    wayland: bool,
    x11: bool,
    /// The terminal is the way to the person's clipboard whatever else works.
    remote: bool,
}

impl Reach {
    /// From this process's environment.
    pub fn from_env() -> Reach {
        Reach::from_vars(cfg!(target_os = "macos"), |k| std::env::var_os(k))
    }

    pub fn from_vars(macos: bool, var: impl Fn(&str) -> Option<OsString>) -> Reach {
        let set = |k: &str| var(k).is_some_and(|v| !v.is_empty());
        Reach {
            macos,
            termux: set("TERMUX_VERSION"),
            wayland: set("WAYLAND_DISPLAY"),
            x11: set("DISPLAY"),
            remote: set("SSH_CONNECTION")
                || set("SSH_CLIENT")
                || set("MOSH_CONNECTION")
                || var("PI_CLIPBOARD_OSC52").is_some_and(|v| v == "1"),
        }
    }

    /// The programs to try, in 1.6's order.
    fn programs(&self) -> Vec<(&'static str, &'static [&'static str])> {
        if self.macos {
            return vec![("pbcopy", &[])];
        }
        let mut out: Vec<(&'static str, &'static [&'static str])> = Vec::new();
        if self.termux {
            out.push(("termux-clipboard-set", &[]));
        }
        if self.wayland {
            out.push(("wl-copy", &[]));
        }
        if self.x11 {
            out.push(("xclip", &["-selection", "clipboard"]));
            out.push(("xsel", &["--clipboard", "--input"]));
        }
        out
    }

    /// No display of any kind: only the terminal can take the text.
    fn headless(&self) -> bool {
        !self.macos && !self.wayland && !self.x11 && !self.termux
    }

    /// After the programs (`copied` says whether one took the text): the OSC 52 sequence to
    /// write, if any, or why the text reached no clipboard.
    pub fn finish(&self, text: &str, copied: bool) -> Result<Option<String>, ClipboardError> {
        if self.remote || (!copied && self.headless()) {
            use base64::Engine;
            let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
            if encoded.len() <= MAX_OSC52_ENCODED {
                return Ok(Some(format!("\x1b]52;c;{encoded}\x07")));
            }
            if !copied {
                return Err(ClipboardError::TooLarge);
            }
        }
        if copied {
            return Ok(None);
        }
        Err(if self.termux {
            ClipboardError::Termux
        } else if self.macos {
            ClipboardError::Unavailable
        } else if self.wayland {
            ClipboardError::Wayland
        } else if self.x11 {
            ClipboardError::X11
        } else {
            ClipboardError::Unavailable
        })
    }

    /// Copies `text`: the programs first, then what [`Reach::finish`] says. `Ok(Some(seq))`
    /// asks the caller to write the OSC 52 sequence to the terminal.
    pub async fn copy(&self, text: &str) -> Result<Option<String>, ClipboardError> {
        let mut copied = false;
        for (program, args) in self.programs() {
            if run_program(program, args, text).await {
                copied = true;
                break;
            }
        }
        self.finish(text, copied)
    }
}

/// Whether `program args…` took `text` on its standard input and exited 0 in time.
async fn run_program(program: &str, args: &[&str], text: &str) -> bool {
    let Ok(path) = which::which(program) else {
        return false;
    };
    let env: Vec<(OsString, OsString)> = PASSED_ENV
        .iter()
        .filter_map(|k| std::env::var_os(k).map(|v| (OsString::from(k), v)))
        .collect();
    let spawned = Command::new(path)
        .args(args.iter().copied())
        .envs(env)
        .current_dir("/")
        .new_process_group()
        .stdin(Stdio::Piped)
        .stdout(Stdio::Null)
        .stderr(Stdio::Null)
        .spawn()
        .await;
    let Ok(mut child) = spawned else {
        return false;
    };
    let run = async {
        if let Some(mut stdin) = child.stdin.take() {
            // A program may exit before it read everything; its exit status decides.
            let _ = stdin.write_all(text.as_bytes()).await;
            let _ = stdin.shutdown().await;
        }
        child.wait().await
    };
    match tokio::time::timeout(PROGRAM_TIMEOUT, run).await {
        Ok(Ok(status)) => status.success(),
        Ok(Err(_)) => false,
        Err(_) => {
            child.start_kill();
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reach(vars: &[(&str, &str)]) -> Reach {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Reach::from_vars(false, move |k| {
            vars.iter()
                .find(|(name, _)| name == k)
                .map(|(_, v)| OsString::from(v))
        })
    }

    #[test]
    fn a_desktop_tries_its_programs_and_says_what_to_install_when_they_fail() {
        let x11 = reach(&[("DISPLAY", ":0")]);
        assert_eq!(x11.programs()[0].0, "xclip");
        assert_eq!(x11.finish("hi", true), Ok(None));
        assert_eq!(x11.finish("hi", false), Err(ClipboardError::X11));
        let wayland = reach(&[("WAYLAND_DISPLAY", "wayland-0"), ("DISPLAY", ":0")]);
        assert_eq!(wayland.programs()[0].0, "wl-copy");
        assert_eq!(wayland.finish("hi", false), Err(ClipboardError::Wayland));
    }

    #[test]
    fn only_the_terminal_reaches_the_clipboard_of_a_headless_or_remote_session() {
        let headless = reach(&[]);
        assert!(headless.programs().is_empty());
        assert_eq!(
            headless.finish("hi", false),
            Ok(Some("\x1b]52;c;aGk=\x07".to_string()))
        );
        // Over SSH the terminal gets it even when a program took it on the remote machine.
        let ssh = reach(&[("DISPLAY", ":0"), ("SSH_CONNECTION", "a b c d")]);
        assert!(matches!(ssh.finish("hi", true), Ok(Some(_))));
        let forced = reach(&[("PI_CLIPBOARD_OSC52", "1")]);
        assert!(forced.remote);
    }

    #[test]
    fn text_too_large_for_osc52_is_refused_unless_a_program_took_it() {
        let big = "x".repeat(MAX_OSC52_ENCODED);
        assert_eq!(
            reach(&[]).finish(&big, false),
            Err(ClipboardError::TooLarge)
        );
        let ssh = reach(&[("DISPLAY", ":0"), ("SSH_CLIENT", "a")]);
        assert_eq!(ssh.finish(&big, true), Ok(None));
    }
}
