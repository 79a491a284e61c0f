//! Issue 8, item 4: no file that is not a session is ever rewritten — not by `--session`, not by
//! a hook's `session.switch`, not by migrating an old file — and hook session calls stay inside
//! the session directory.
//!
//! Every refused file is pinned before the run (its mtime set well into the past) and compared
//! after it: bytes, mtime, permissions, and whether it is still a symlink.

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

// ---- the command line ----

#[tokio::test]
async fn session_flag_refuses_a_text_file_and_leaves_it_byte_for_byte() {
    let agent = TestAgent::new();
    let notes = agent.write_file("notes.txt", "shopping list\n- eggs\n- milk\n");
    let pinned = pin(&notes);
    let out = run(&agent, &["--session", &path_str(&notes), "-p", "hi"]).await;
    assert_refused(&out, &notes, "not a pi session file");
    assert!(out.stderr.contains("not JSON"), "{out}");
    pinned.assert_unchanged(&out);
    assert!(files_under(&agent.agent_dir.join("sessions")).is_empty());
}

#[tokio::test]
async fn session_flag_refuses_every_kind_of_non_session_file() {
    let agent = TestAgent::new();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "entry-first.jsonl",
            br#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{}}"#.to_vec(),
            "not a session header",
        ),
        (
            "numeric-id.jsonl",
            b"{\"type\":\"session\",\"version\":3,\"id\":5}\n".to_vec(),
            "`id`",
        ),
        (
            "string-version.jsonl",
            format!("{}\n", header_line("s1", json!("3"), "/w")).into_bytes(),
            "`version`",
        ),
        (
            "zero-version.jsonl",
            format!("{}\n", header_line("s1", json!(0), "/w")).into_bytes(),
            "`version`",
        ),
        ("blank.jsonl", b"\n  \n\n".to_vec(), "only blank lines"),
        (
            "binary.jsonl",
            vec![0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0xff, 0xfe, b'\n', 0],
            "not JSON",
        ),
        (
            "array.jsonl",
            b"[{\"type\":\"session\",\"id\":\"x\"}]\n".to_vec(),
            "not a session header",
        ),
    ];
    for (name, bytes, why) in cases {
        let path = agent.write_file(name, &bytes);
        let pinned = pin(&path);
        let out = run(&agent, &["--session", &path_str(&path), "-p", "hi"]).await;
        assert_refused(&out, &path, "not a pi session file");
        assert!(
            out.stderr.contains(why),
            "{name}: the error says {why:?}\n{out}"
        );
        pinned.assert_unchanged(&out);
    }

    // A directory named like a session.
    let dir = agent.cwd.join("folder.jsonl");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("inside.txt"), "x").unwrap();
    let pinned = pin(&dir);
    let out = run(&agent, &["--session", &path_str(&dir), "-p", "hi"]).await;
    assert_refused(&out, &dir, "is a directory");
    pinned.assert_unchanged(&out);

    // A symlink to a text file: neither the link nor its target changes.
    let target = agent.write_file("target.txt", "not a session\n");
    let link = agent.cwd.join("link.jsonl");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let (pinned_target, pinned_link) = (pin(&target), snapshot(&link));
    let out = run(&agent, &["--session", &path_str(&link), "-p", "hi"]).await;
    assert_refused(&out, &link, "not a pi session file");
    pinned_target.assert_unchanged(&out);
    pinned_link.assert_unchanged(&out);

    // A symlink to nowhere is not a new session either: creating it would write through it.
    let dangling = agent.cwd.join("dangling.jsonl");
    std::os::unix::fs::symlink(agent.cwd.join("nowhere/at-all"), &dangling).unwrap();
    let out = run(&agent, &["--session", &path_str(&dangling), "-p", "hi"]).await;
    assert_refused(&out, &dangling, "does not exist");
    assert!(!agent.cwd.join("nowhere").exists(), "{out}");

    assert!(files_under(&agent.agent_dir.join("sessions")).is_empty());
}

#[tokio::test]
async fn a_fifo_is_refused_at_once_by_session_and_fork() {
    let agent = TestAgent::new();
    let fifo = agent.cwd.join("pipe.jsonl");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let pinned = pin(&fifo);
    for flag in ["--session", "--fork"] {
        // Opening a FIFO for reading blocks until a writer comes: nobody will.
        let out = run_within(
            &agent,
            Duration::from_secs(10),
            &[flag, &path_str(&fifo), "-p", "hi"],
        )
        .await;
        assert_refused(&out, &fifo, "not a regular file");
        pinned.assert_unchanged(&out);
    }
    assert!(files_under(&agent.agent_dir.join("sessions")).is_empty());
}

#[tokio::test]
async fn a_session_of_a_future_format_version_is_refused_not_loaded() {
    let agent = TestAgent::new();
    let future = write_versioned(
        &project_sessions(&agent).join("2025-01-01T00-00-00-000Z_future.jsonl"),
        "future",
        json!(4),
        &path_str(&agent.cwd),
        "from a newer pi",
    );
    let pinned = pin(&future);
    let out = run(&agent, &["--session", &path_str(&future), "-p", "hi"]).await;
    assert_refused(&out, &future, "version 4");
    pinned.assert_unchanged(&out);

    // `-c` picks it as the newest session of the project, and refuses it the same way.
    let out = run(&agent, &["-c", "-p", "hi"]).await;
    assert_refused(&out, &future, "version 4");
    pinned.assert_unchanged(&out);

    // `--fork` copies nothing it cannot read.
    let out = run(&agent, &["--fork", &path_str(&future), "-p", "hi"]).await;
    assert_refused(&out, &future, "version 4");
    pinned.assert_unchanged(&out);
    assert_eq!(files_under(&agent.agent_dir.join("sessions")), vec![future]);
}

#[tokio::test]
async fn continue_passes_over_stray_files_in_the_session_directory() {
    let agent = TestAgent::new();
    let dir = project_sessions(&agent);
    let real = write_session(
        &dir.join("2025-01-01T00-00-00-000Z_real.jsonl"),
        "real",
        &path_str(&agent.cwd),
        "the real question",
    );
    let stray = dir.join("2025-06-01T00-00-00-000Z_stray.jsonl");
    std::fs::write(&stray, "I am a note someone saved here\n").unwrap();
    let fifo = dir.join("2025-06-02T00-00-00-000Z_pipe.jsonl");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    pin(&real);
    let (pinned_stray, pinned_fifo) = (pin(&stray), pin(&fifo));
    // The strays are newer than the session, by name and by mtime.
    let t = nix::sys::time::TimeSpec::new(PINNED_MTIME_SECS - 1000, 0);
    nix::sys::stat::utimensat(
        None,
        &real,
        &t,
        &t,
        nix::sys::stat::UtimensatFlags::FollowSymlink,
    )
    .unwrap();
    let out = run_within(&agent, Duration::from_secs(30), &["-c", "-p", "hi"]).await;
    out.assert_ok();
    let text = std::fs::read_to_string(&real).unwrap();
    assert!(
        text.contains("faux reply one"),
        "-c continued the real session\n{out}"
    );
    pinned_stray.assert_unchanged(&out);
    pinned_fifo.assert_unchanged(&out);
}

#[tokio::test]
async fn an_empty_file_is_adopted_as_a_new_session() {
    let agent = TestAgent::new();
    let empty = agent.write_file("fresh.jsonl", "");
    let out = run(&agent, &["--session", &path_str(&empty), "-p", "hi"]).await;
    out.assert_ok();
    let text = std::fs::read_to_string(&empty).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "session", "{text}");
    assert_eq!(lines[0]["cwd"], json!(path_str(&agent.cwd)));
    assert!(text.contains("faux reply one"), "{text}");
}

#[tokio::test]
async fn migrating_an_old_session_keeps_a_backup_and_replaces_the_file_whole() {
    let agent = TestAgent::new();
    let original = std::fs::read(fixture_session("v1-linear.jsonl")).unwrap();
    let path = project_sessions(&agent).join("2024-01-01T00-00-00-000Z_v1-session.jsonl");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, &original).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    let old_ino = pin(&path).ino;

    let out = run(&agent, &["--session", &path_str(&path), "-p", "hi"]).await;
    out.assert_ok();
    let backup = PathBuf::from(format!("{}.bak", path.display()));
    assert_eq!(
        std::fs::read(&backup).expect("the backup exists"),
        original,
        "the backup holds the original bytes\n{out}"
    );
    assert!(
        out.stderr.contains(&path_str(&backup)),
        "the user is told\n{out}"
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with(r#"{"type":"session","version":3,"id":"v1-session""#),
        "{text}"
    );
    assert!(text.contains("faux reply one"), "{text}");
    let meta = std::fs::metadata(&path).unwrap();
    assert_ne!(
        meta.ino(),
        old_ino,
        "a new file was renamed over the old one"
    );
    assert_eq!(meta.mode() & 0o777, 0o640, "permissions are kept");
    // No temporary file is left next to it.
    let names: Vec<PathBuf> = files_under(path.parent().unwrap());
    assert_eq!(names, vec![path.clone(), backup], "{out}");
}

#[tokio::test]
async fn migration_never_overwrites_an_existing_backup() {
    let agent = TestAgent::new();
    let path = project_sessions(&agent).join("2024-01-01T00-00-00-000Z_v2.jsonl");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::copy(fixture_session("v2-tree.jsonl"), &path).unwrap();
    let backup = PathBuf::from(format!("{}.bak", path.display()));
    std::fs::write(&backup, "the user's own backup\n").unwrap();
    let (pinned, pinned_backup) = (pin(&path), pin(&backup));
    let out = run(&agent, &["--session", &path_str(&path), "-p", "hi"]).await;
    assert_refused(&out, &path, "already exists");
    assert!(out.stderr.contains(&path_str(&backup)), "{out}");
    pinned.assert_unchanged(&out);
    pinned_backup.assert_unchanged(&out);
}

#[tokio::test]
async fn migrating_through_a_symlink_migrates_its_target_and_keeps_the_link() {
    let agent = TestAgent::new();
    let elsewhere = agent.home.join("archive/old.jsonl");
    std::fs::create_dir_all(elsewhere.parent().unwrap()).unwrap();
    std::fs::copy(fixture_session("v2-tree.jsonl"), &elsewhere).unwrap();
    let original = std::fs::read(&elsewhere).unwrap();
    let link = project_sessions(&agent).join("2024-01-01T00-00-00-000Z_v2-linked.jsonl");
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
    let out = run(&agent, &["--session", &path_str(&link), "-p", "hi"]).await;
    out.assert_ok();
    assert_eq!(
        std::fs::read_link(&link).ok(),
        Some(elsewhere.clone()),
        "{out}"
    );
    let text = std::fs::read_to_string(&elsewhere).unwrap();
    assert!(
        text.starts_with(r#"{"type":"session","version":3"#),
        "{text}"
    );
    assert!(text.contains("faux reply one"), "{text}");
    let backup = PathBuf::from(format!("{}.bak", elsewhere.display()));
    assert_eq!(std::fs::read(&backup).unwrap(), original, "{out}");
}

// ---- hook session calls ----

/// The session-ops test hook as the user's only hook.
fn use_ops_hook(agent: &TestAgent) {
    agent.write_settings(&json!({
        "hooks": [{
            "command": format!("python3 {}", fixture("session_ops.py")),
            "name": "session-ops",
            "config": {},
            "timeout_ms": 20000,
        }],
    }));
}

fn op(method: &str, params: Value) -> String {
    format!("/op {method} {params}")
}

/// The answers of `/op` commands, one JSON object per stdout line.
fn answers(out: &Output) -> Vec<Value> {
    out.stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(Value::is_object)
        .collect()
}

#[track_caller]
fn assert_call_error(answer: &Value, code: &str, mentions: &[&str], out: &Output) {
    assert_eq!(answer["error"]["code"], code, "{answer}\n{out}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    for m in mentions {
        assert!(message.contains(m), "{message:?} mentions {m:?}\n{out}");
    }
}

#[tokio::test]
async fn hook_switch_to_a_file_that_is_not_a_session_is_refused_and_leaves_it_untouched() {
    let agent = TestAgent::new();
    use_ops_hook(&agent);
    // As `/etc/passwd` would be: a text file outside the session directory...
    let passwd = agent.home.join("passwd");
    std::fs::write(&passwd, "root:x:0:0:root:/root:/bin/bash\n").unwrap();
    // ...and a stray text file inside it.
    let stray = project_sessions(&agent).join("notes.jsonl");
    std::fs::create_dir_all(stray.parent().unwrap()).unwrap();
    std::fs::write(&stray, "remember the milk\n").unwrap();
    let (pinned_passwd, pinned_stray) = (pin(&passwd), pin(&stray));

    let out = run(
        &agent,
        &[
            "-p",
            &op("session.switch", json!({"session_file": path_str(&passwd)})),
            &op("session.switch", json!({"session_file": path_str(&stray)})),
            "still here",
        ],
    )
    .await;
    out.assert_ok();
    let a = answers(&out);
    assert_eq!(a.len(), 2, "{out}");
    assert_call_error(&a[0], "invalid_params", &[&path_str(&passwd)], &out);
    assert_call_error(
        &a[1],
        "invalid_params",
        &[&path_str(&stray), "not a pi session file"],
        &out,
    );
    pinned_passwd.assert_unchanged(&out);
    pinned_stray.assert_unchanged(&out);
    // The run went on in its own new session.
    let saved: Vec<PathBuf> = files_under(&agent.agent_dir.join("sessions"))
        .into_iter()
        .filter(|p| *p != stray)
        .collect();
    assert_eq!(saved.len(), 1, "{out}");
    assert!(std::fs::read_to_string(&saved[0])
        .unwrap()
        .contains("still here"));
}

#[tokio::test]
async fn hook_switch_only_reaches_sessions_inside_the_session_directory() {
    let agent = TestAgent::new();
    use_ops_hook(&agent);
    let root = agent.agent_dir.join("sessions");
    let cwd = path_str(&agent.cwd);
    // A perfectly good session, but outside the session directory.
    let outside = write_session(&agent.cwd.join("kept/here.jsonl"), "outside", &cwd, "q out");
    // The same, reached with `..` from inside, and through a symlink inside.
    std::fs::create_dir_all(project_sessions(&agent)).unwrap();
    let dotdot = project_sessions(&agent).join("../../escape.jsonl");
    let escape = write_session(
        &agent.agent_dir.join("escape.jsonl"),
        "escape",
        &cwd,
        "q esc",
    );
    let link = project_sessions(&agent).join("2025-01-01T00-00-00-000Z_linked.jsonl");
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    let pinned: Vec<Pinned> = [&outside, &escape].iter().map(|p| pin(p)).collect();

    let out = run(
        &agent,
        &[
            "-p",
            &op(
                "session.switch",
                json!({"session_file": path_str(&outside)}),
            ),
            &op("session.switch", json!({"session_file": path_str(&dotdot)})),
            &op("session.switch", json!({"session_file": path_str(&link)})),
            &op("session.switch", json!({"session_file": "kept/here.jsonl"})),
        ],
    )
    .await;
    out.assert_ok();
    let a = answers(&out);
    assert_eq!(a.len(), 4, "{out}");
    for answer in &a {
        assert_call_error(
            answer,
            "invalid_params",
            &["outside the session directory", &path_str(&root)],
            &out,
        );
    }
    assert!(a[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains(&path_str(&outside)));
    for p in &pinned {
        p.assert_unchanged(&out);
    }

    // Another project's session inside the session directory is fine, as `/resume` allows.
    let other = write_session(
        &root.join("--other--/2025-01-01T00-00-00-000Z_other.jsonl"),
        "other",
        "/other",
        "the other project's question",
    );
    let out = run(
        &agent,
        &[
            "-p",
            &op("session.switch", json!({"session_file": path_str(&other)})),
            "continue over there",
        ],
    )
    .await;
    out.assert_ok();
    let a = answers(&out);
    assert_eq!(a[0]["cancelled"], false, "{out}");
    assert!(std::fs::read_to_string(&other)
        .unwrap()
        .contains("continue over there"));
}

#[tokio::test]
async fn hook_switch_is_confined_to_a_custom_session_directory_and_unavailable_without_one() {
    let agent = TestAgent::new();
    use_ops_hook(&agent);
    let custom = agent.home.join("my-sessions");
    std::fs::create_dir_all(&custom).unwrap();
    // A session in the default folder is outside the configured one.
    let default_one = write_session(
        &project_sessions(&agent).join("2025-01-01T00-00-00-000Z_d.jsonl"),
        "d",
        &path_str(&agent.cwd),
        "q",
    );
    let pinned = pin(&default_one);
    let out = run(
        &agent,
        &[
            "--session-dir",
            &path_str(&custom),
            "-p",
            &op(
                "session.switch",
                json!({"session_file": path_str(&default_one)}),
            ),
        ],
    )
    .await;
    out.assert_ok();
    assert_call_error(
        &answers(&out)[0],
        "invalid_params",
        &["outside the session directory", &path_str(&custom)],
        &out,
    );
    pinned.assert_unchanged(&out);

    let out = run(
        &agent,
        &[
            "--no-session",
            "-p",
            &op(
                "session.switch",
                json!({"session_file": path_str(&default_one)}),
            ),
        ],
    )
    .await;
    out.assert_ok();
    assert_call_error(&answers(&out)[0], "unavailable", &["--no-session"], &out);
    pinned.assert_unchanged(&out);
}

#[tokio::test]
async fn hook_new_fork_and_clone_create_nothing_outside_the_session_directory() {
    let agent = TestAgent::new();
    use_ops_hook(&agent);
    let mine = write_session(
        &agent.cwd.join("mine.jsonl"),
        "mine",
        &path_str(&agent.cwd),
        "my question",
    );
    let calls = [
        op("session.new", json!({})),
        op("session.fork", json!({"entry_id": "a0000001"})),
        op(
            "session.fork",
            json!({"entry_id": "a0000002", "position": "at"}),
        ),
        op("session.clone", json!({})),
    ];
    for call in &calls {
        let out = run(
            &agent,
            &["--session", &path_str(&mine), "-p", call, "and then"],
        )
        .await;
        out.assert_ok();
        assert_call_error(
            &answers(&out)[0],
            "invalid_params",
            &[
                "outside the session directory",
                &path_str(&agent.agent_dir.join("sessions")),
                &path_str(&agent.cwd),
            ],
            &out,
        );
        assert_eq!(
            files_under(&agent.cwd),
            vec![mine.clone()],
            "{call}: no file was created next to the session\n{out}"
        );
        assert!(
            files_under(&agent.agent_dir.join("sessions")).is_empty(),
            "{out}"
        );
    }
    let text = std::fs::read_to_string(&mine).unwrap();
    assert_eq!(text.matches("and then").count(), calls.len(), "{text}");
}

#[tokio::test]
async fn hook_switch_to_an_old_session_migrates_it_only_once_no_hook_cancels() {
    let agent = TestAgent::new();
    let old = project_sessions(&agent).join("2024-01-01T00-00-00-000Z_v2.jsonl");
    std::fs::create_dir_all(old.parent().unwrap()).unwrap();
    std::fs::copy(fixture_session("v2-tree.jsonl"), &old).unwrap();
    let original = std::fs::read(&old).unwrap();
    let backup = PathBuf::from(format!("{}.bak", old.display()));
    let switch = op("session.switch", json!({"session_file": path_str(&old)}));

    // A hook cancels the switch: the file was only read.
    agent.write_settings(&json!({
        "hooks": [{
            "command": format!("python3 {}", fixture("session_ops.py")),
            "name": "session-ops",
            "config": {"switch": "cancel"},
            "timeout_ms": 20000,
        }],
    }));
    let pinned = pin(&old);
    let out = run(&agent, &["-p", &switch]).await;
    out.assert_ok();
    assert_eq!(answers(&out), vec![json!({"cancelled": true})], "{out}");
    pinned.assert_unchanged(&out);
    assert!(!backup.exists(), "{out}");

    // Nobody cancels: migrated, with the original kept.
    use_ops_hook(&agent);
    let out = run(&agent, &["-p", &switch, "go on"]).await;
    out.assert_ok();
    assert_eq!(answers(&out)[0]["cancelled"], false, "{out}");
    assert_eq!(std::fs::read(&backup).unwrap(), original, "{out}");
    let text = std::fs::read_to_string(&old).unwrap();
    assert!(
        text.starts_with(r#"{"type":"session","version":3"#),
        "{text}"
    );
    assert!(text.contains("go on"), "{text}");
}
