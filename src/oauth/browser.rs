//! Opening the sign-in page in the user's browser, best effort, as pi 1.6 does: `xdg-open`
//! (`open` on macOS) with the URL as its only argument, never through a shell, from `/`, in a
//! process group of its own, with only what a desktop launcher needs of the environment —
//! never the user's keys. Whether it worked is not waited for: the URL is shown anyway.

use std::ffi::OsString;

use crate::watchdog::{Command, Stdio};

/// What the launcher is given of `pi`'s environment.
const PASSED_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "BROWSER",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
    "XDG_RUNTIME_DIR",
    "XDG_CURRENT_DESKTOP",
    "DBUS_SESSION_BUS_ADDRESS",
    "LANG",
];

/// Whether `url` is one a browser may be sent to (`http:` or `https:` only: the launcher
/// also opens files and custom protocols).
pub fn is_web_url(url: &str) -> bool {
    reqwest::Url::parse(url).is_ok_and(|u| matches!(u.scheme(), "http" | "https"))
}

/// Starts the platform's launcher on `url` and leaves it; a missing launcher is no error.
pub fn open(url: &str) {
    if !is_web_url(url) {
        return;
    }
    let program = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let Ok(path) = which::which(program) else {
        return;
    };
    let env: Vec<(OsString, OsString)> = PASSED_ENV
        .iter()
        .filter_map(|k| std::env::var_os(k).map(|v| (OsString::from(k), v)))
        .collect();
    let url = url.to_string();
    tokio::spawn(async move {
        let spawned = Command::new(path)
            .args([url.as_str()])
            .envs(env)
            .current_dir("/")
            .new_process_group()
            .stdin(Stdio::Null)
            .stdout(Stdio::Null)
            .stderr(Stdio::Null)
            .spawn()
            .await;
        if let Ok(mut child) = spawned {
            // The launcher hands the page to the browser and exits; its status says nothing
            // the user needs.
            let _ = child.wait().await;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_web_urls_are_opened() {
        assert!(is_web_url("https://claude.ai/oauth/authorize?x=1"));
        assert!(is_web_url("http://localhost:1455/auth"));
        assert!(!is_web_url("file:///etc/passwd"));
        assert!(!is_web_url("javascript:alert(1)"));
        assert!(!is_web_url("not a url"));
    }
}
