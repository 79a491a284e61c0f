//! Issue 8, item 4: no file that is not a session is ever rewritten — not by `--session`, not by
//! a hook's `session.switch`, not by migrating an old file — and hook session calls stay inside
//! the session directory.
//!
//! Every refused file is pinned before the run (its mtime set well into the past) and compared
//! after it: bytes, mtime, permissions, and whether it is still a symlink.

mod hook_calls;
mod migration;
mod opening;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::hooks::fixture;
use crate::common::{kill_group, path_str, Output, TestAgent};

/// A day in 2001: any write during the test moves the mtime away from it.
const PINNED_MTIME_SECS: i64 = 978_307_200;

/// What a file looked like before a run, to show it was not touched.
struct Pinned {
    path: PathBuf,
    /// The symlink's target when `path` is a symlink.
    link: Option<PathBuf>,
    /// Contents (regular files), or the sorted entry names (directories).
    content: Vec<u8>,
    mtime: (i64, i64),
    mode: u32,
    ino: u64,
}

/// Sets the mtime of `path` (through a symlink) to [`PINNED_MTIME_SECS`] and records it.
fn pin(path: &Path) -> Pinned {
    let t = nix::sys::time::TimeSpec::new(PINNED_MTIME_SECS, 0);
    nix::sys::stat::utimensat(
        None,
        path,
        &t,
        &t,
        nix::sys::stat::UtimensatFlags::FollowSymlink,
    )
    .expect("set mtime");
    snapshot(path)
}

fn snapshot(path: &Path) -> Pinned {
    let link = std::fs::read_link(path).ok();
    let meta = std::fs::metadata(path).expect("metadata");
    let content = if meta.is_file() {
        std::fs::read(path).expect("read")
    } else if meta.is_dir() {
        let mut names: Vec<String> = std::fs::read_dir(path)
            .expect("read dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names.join("\n").into_bytes()
    } else {
        Vec::new()
    };
    Pinned {
        path: path.to_path_buf(),
        link,
        content,
        mtime: (meta.mtime(), meta.mtime_nsec()),
        mode: meta.mode(),
        ino: meta.ino(),
    }
}

impl Pinned {
    #[track_caller]
    fn assert_unchanged(&self, out: &Output) {
        let now = snapshot(&self.path);
        let p = self.path.display();
        assert_eq!(now.link, self.link, "{p}: symlink changed\n{out}");
        assert!(
            now.content == self.content,
            "{p}: contents changed\n{out}\nnow: {:?}",
            String::from_utf8_lossy(&now.content)
        );
        assert_eq!(now.mtime, self.mtime, "{p}: mtime changed\n{out}");
        assert_eq!(
            now.mode, self.mode,
            "{p}: type or permissions changed\n{out}"
        );
        assert_eq!(now.ino, self.ino, "{p}: replaced by another file\n{out}");
    }
}

/// This project's session folder in the default layout.
fn project_sessions(agent: &TestAgent) -> PathBuf {
    let cwd = path_str(&agent.cwd);
    let encoded = format!("--{}--", cwd.trim_start_matches('/').replace('/', "-"));
    agent.agent_dir.join("sessions").join(encoded)
}

/// Every file under `dir`, recursively, sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(read) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in read.flatten() {
        let p = entry.path();
        if p.is_dir() && !p.is_symlink() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

fn header_line(id: &str, version: Value, cwd: &str) -> String {
    json!({"type":"session","version":version,"id":id,"timestamp":"2025-01-01T00:00:00.000Z","cwd":cwd})
        .to_string()
}

/// A v3 session of one exchange (user `a0000001`, assistant `a0000002`) at `path`.
fn write_session(path: &Path, id: &str, cwd: &str, question: &str) -> PathBuf {
    write_versioned(path, id, json!(3), cwd, question)
}

fn write_versioned(path: &Path, id: &str, version: Value, cwd: &str, question: &str) -> PathBuf {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).unwrap();
    }
    let entries = [
        json!({"type":"message","id":"a0000001","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z",
               "message":{"role":"user","content":question,"timestamp":1735689601000u64}}),
        json!({"type":"message","id":"a0000002","parentId":"a0000001","timestamp":"2025-01-01T00:00:02.000Z",
               "message":{"role":"assistant","content":[{"type":"text","text":"saved answer"}],
                          "api":"faux","provider":"faux","model":"faux-1",
                          "usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,
                                   "cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},
                          "stopReason":"stop","timestamp":1735689602000u64}}),
    ];
    let mut text = header_line(id, version, cwd) + "\n";
    for e in entries {
        text.push_str(&format!("{e}\n"));
    }
    std::fs::write(path, text).unwrap();
    path.to_path_buf()
}

fn fixture_session(name: &str) -> PathBuf {
    crate::common::hooks::repo()
        .join("fixtures/sessions")
        .join(name)
}

/// `pi` with a one-reply faux model and `args`, killed (and the test failed) when it is still
/// running after `limit`: every refusal here is immediate, so a hang is a bug, not a slow
/// machine.
async fn run_within(agent: &TestAgent, limit: Duration, args: &[&str]) -> Output {
    let mut all = agent.faux_args(json!(["faux reply one", "faux reply two"]));
    all.extend(args.iter().map(|a| a.to_string()));
    let child = agent.command(&all).spawn().expect("spawn pi");
    let pid = child.id().expect("pid") as i32;
    match tokio::time::timeout(limit, child.wait_with_output()).await {
        Ok(out) => Output::from(out.expect("wait for pi")),
        Err(_) => {
            kill_group(pid);
            panic!("pi {args:?} did not finish within {limit:?} (it should refuse at once)");
        }
    }
}

async fn run(agent: &TestAgent, args: &[&str]) -> Output {
    run_within(agent, Duration::from_secs(60), args).await
}

#[track_caller]
fn assert_refused(out: &Output, path: &Path, why: &str) {
    out.assert_code(1);
    assert!(
        out.stderr.contains(&path_str(path)),
        "the error names the file {}\n{out}",
        path.display()
    );
    assert!(out.stderr.contains(why), "the error says {why:?}\n{out}");
}
