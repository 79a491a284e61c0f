//! Running the TypeScript pi (npm `@mariozechner/pi-coding-agent`, pinned in
//! `tests/ts-pi/package.json`) in the same hermetic environment as a [`TestAgent`], so tests can
//! hand session files back and forth between it and our `pi`.
//!
//! The package is installed by `npm ci --prefix tests/ts-pi` (`.ci/run` does it); tests never
//! touch the network themselves. When it is missing, [`TsPi::find`] fails the test if
//! `PI_TS_PI_REQUIRED=1` (CI must not silently lose the coverage) and otherwise prints a
//! "skipped" note and returns `None`.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::Value;

use super::{kill_group, Output, TestAgent, RUN_TIMEOUT};

/// Where the fixture package lives, relative to the crate root.
const PREFIX: &str = "tests/ts-pi";
const PACKAGE: &str = "@mariozechner/pi-coding-agent";

/// An installed TypeScript pi: `node <cli.js>`.
pub struct TsPi {
    node: PathBuf,
    cli: PathBuf,
}

impl TsPi {
    /// The installed TypeScript pi, or `None` (after a note on stderr) when it is absent and not
    /// required. Panics with install instructions when `PI_TS_PI_REQUIRED=1` and it is absent.
    pub fn find() -> Option<TsPi> {
        match Self::locate() {
            Ok(ts) => Some(ts),
            Err(why) => {
                let required = std::env::var("PI_TS_PI_REQUIRED").is_ok_and(|v| v == "1");
                let msg = format!(
                    "the TypeScript pi is not available ({why}); install it with \
                     `npm ci --prefix {PREFIX} --ignore-scripts` (needs Node >= 20.6)"
                );
                assert!(!required, "PI_TS_PI_REQUIRED=1 but {msg}");
                eprintln!("skipped: {msg}");
                None
            }
        }
    }

    fn locate() -> Result<TsPi, String> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(PREFIX);
        let pinned = read_json(&root.join("package.json"))?["dependencies"][PACKAGE]
            .as_str()
            .map(String::from)
            .ok_or_else(|| format!("{PREFIX}/package.json does not pin {PACKAGE}"))?;
        let pkg_dir = root.join("node_modules").join(PACKAGE);
        let installed = read_json(&pkg_dir.join("package.json"))?["version"]
            .as_str()
            .map(String::from)
            .unwrap_or_default();
        // A stale install would test some other version than the one the lock file names.
        if installed != pinned {
            return Err(format!(
                "{PACKAGE} {installed} is installed, {pinned} is pinned"
            ));
        }
        let cli = pkg_dir.join("dist/cli.js");
        if !cli.is_file() {
            return Err(format!("{} is missing", cli.display()));
        }
        let node = find_on_path("node").ok_or("`node` is not on PATH")?;
        Ok(TsPi { node, cli })
    }

    /// Run the TypeScript pi with `args` in `agent`'s environment (same agent dir, home, temp
    /// dir and working directory as our `pi` gets), bounded by [`RUN_TIMEOUT`].
    pub async fn run<S: AsRef<str>>(&self, agent: &TestAgent, args: &[S]) -> Output {
        let mut cmd = tokio::process::Command::new(&self.node);
        cmd.arg(&self.cli)
            .args(args.iter().map(|a| a.as_ref()))
            .current_dir(&agent.cwd)
            .env_clear()
            .env(
                "PATH",
                std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()),
            )
            .env("HOME", &agent.home)
            .env("TMPDIR", &agent.tmp)
            .env("PI_CODING_AGENT_DIR", &agent.agent_dir)
            .env("LANG", "C.UTF-8")
            .env("NO_COLOR", "1")
            // No version check, package update or install telemetry: the only socket it may
            // open is the mock model's.
            .env("PI_OFFLINE", "1")
            .env("PI_SKIP_VERSION_CHECK", "1")
            .env("PI_TELEMETRY", "0")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let child = cmd.spawn().expect("spawn node");
        let pid = child.id().expect("pid") as i32;
        match tokio::time::timeout(RUN_TIMEOUT, child.wait_with_output()).await {
            Ok(out) => Output::from(out.expect("wait for TypeScript pi")),
            Err(_) => {
                kill_group(pid);
                panic!(
                    "TypeScript pi {:?} did not finish within {RUN_TIMEOUT:?}",
                    args.iter().map(|a| a.as_ref()).collect::<Vec<_>>()
                );
            }
        }
    }
}

fn read_json(p: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}
