//! The session flags end to end through the real binary: `--session-id`, `--fork`,
//! `-n/--name`, `-r/--resume` and a `--session` match in another project (both answered
//! through a pseudo-terminal), the flags' conflicts, and where sessions are stored
//! (`--session-dir` > `PI_CODING_AGENT_SESSION_DIR` > the `sessionDir` setting).
//!
//! Runs that may ask a question go through a small python3 wrapper that starts `pi` in a new
//! session: with input to type it gives `pi` a pseudo-terminal as its controlling terminal and
//! types the input there; without, `pi` has no terminal at all (not even the one `cargo test`
//! may have been started from), which is what the "no terminal" errors need.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use serde_json::{json, Value};

use crate::common::{kill_group, path_str, wire, MockModel, Output, TestAgent, Turn, RUN_TIMEOUT};

const MODEL: &str = "mock/mock-model";

/// Starts argv[1:] in a new session; with PI_TEST_TTY_INPUT set, on a fresh pseudo-terminal
/// (its controlling terminal) on which that input is typed before pi reads it.
const TTY_WRAPPER: &str = r#"
import fcntl, os, pty, subprocess, sys, termios
typed = os.environ.pop("PI_TEST_TTY_INPUT", None)
master = slave = None
if typed is None:
    pre, fds = os.setsid, ()
else:
    master, slave = pty.openpty()
    def pre():
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    fds = (slave,)
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, preexec_fn=pre, pass_fds=fds)
if slave is not None:
    os.close(slave)
    os.write(master, typed.encode())
out, err = p.communicate()
sys.stdout.buffer.write(out)
sys.stderr.buffer.write(err)
sys.exit(p.returncode if p.returncode >= 0 else 128 - p.returncode)
"#;

/// The real python3 interpreter (not a version-manager shim, which would need the real HOME).
fn python3() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let out = std::process::Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .expect("python3 is needed for the terminal tests");
        PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
    })
}

/// Runs `pi args` in `agent`'s environment in a new session: on a pseudo-terminal where
/// `typed` is typed, or (`None`) with no terminal at all.
async fn run_on_terminal(agent: &TestAgent, args: &[&str], typed: Option<&str>) -> Output {
    let pi = agent.command(args);
    let std_pi = pi.as_std();
    let mut cmd = tokio::process::Command::new(python3());
    cmd.arg("-c")
        .arg(TTY_WRAPPER)
        .arg(env!("CARGO_BIN_EXE_pi"))
        .args(args)
        .env_clear()
        .envs(
            std_pi
                .get_envs()
                .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v.to_owned()))),
        )
        .current_dir(&agent.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(t) = typed {
        cmd.env("PI_TEST_TTY_INPUT", t);
    }
    let child = cmd.spawn().expect("spawn python3");
    let pid = child.id().expect("pid") as i32;
    match tokio::time::timeout(RUN_TIMEOUT, child.wait_with_output()).await {
        Ok(out) => Output::from(out.expect("wait for python3")),
        Err(_) => {
            kill_group(pid);
            panic!("pi {args:?} on a terminal did not finish within {RUN_TIMEOUT:?}");
        }
    }
}

/// Every `.jsonl` file under `dir`, recursively, sorted.
fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(read) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in read.flatten() {
        let p = entry.path();
        if p.is_dir() {
            out.extend(jsonl_files(&p));
        } else if p.extension().is_some_and(|x| x == "jsonl") {
            out.push(p);
        }
    }
    out.sort();
    out
}

fn sessions(agent: &TestAgent) -> Vec<PathBuf> {
    jsonl_files(&agent.agent_dir.join("sessions"))
}

/// This project's session folder in the default layout.
fn project_dir(agent: &TestAgent) -> PathBuf {
    let cwd = path_str(&agent.cwd);
    let encoded = cwd.trim_start_matches('/').replace(['/', '\\', ':'], "-");
    agent
        .agent_dir
        .join("sessions")
        .join(format!("--{encoded}--"))
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// All message text of the `i`th model request.
fn request_text(mock: &MockModel, i: usize) -> String {
    wire::messages(&mock.bodies()[i])
        .iter()
        .map(|m| wire::content_text(&m["content"]))
        .collect::<Vec<_>>()
        .join("|")
}

fn set_mtime(path: &Path, secs_after_2020: u64) {
    let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_577_836_800 + secs_after_2020);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(t)
        .unwrap();
}

/// A saved session of another project (`cwd`), with one exchange.
fn write_foreign_session(dir: &Path, id: &str, cwd: &str, question: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(format!("2025-01-01T00-00-00-000Z_{id}.jsonl"));
    let entries = [
        json!({"type":"session","version":3,"id":id,"timestamp":"2025-01-01T00:00:00.000Z","cwd":cwd}),
        json!({"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z",
               "message":{"role":"user","content":question,"timestamp":1735689601000u64}}),
        json!({"type":"message","id":"e5f6a7b8","parentId":"a1b2c3d4","timestamp":"2025-01-01T00:00:02.000Z",
               "message":{"role":"assistant","content":[{"type":"text","text":"foreign answer"}],
                          "api":"openai-completions","provider":"mock","model":"mock-model",
                          "usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,
                                   "cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},
                          "stopReason":"stop","timestamp":1735689602000u64}}),
    ];
    let text: String = entries.iter().map(|e| format!("{e}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

#[tokio::test]
async fn session_id_creates_a_session_with_that_id_then_reopens_it() {
    let mock = MockModel::start(vec![Turn::text("noted"), Turn::text("kiwi")]).await;
    let agent = TestAgent::with_mock(&mock);
    let first = agent
        .run(&[
            "--model",
            MODEL,
            "--session-id",
            "my-proj.1",
            "-p",
            "remember kiwi",
        ])
        .await;
    first.assert_ok();
    assert!(
        first
            .stderr
            .contains("No project session found with id 'my-proj.1'; creating a new session"),
        "{first}"
    );
    let files = sessions(&agent);
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].parent().unwrap(), project_dir(&agent));
    assert!(
        path_str(&files[0]).ends_with("_my-proj.1.jsonl"),
        "{files:?}"
    );
    assert_eq!(lines(&files[0])[0]["id"], "my-proj.1");

    let second = agent
        .run(&[
            "--model",
            MODEL,
            "--session-id",
            "my-proj.1",
            "-p",
            "which fruit?",
        ])
        .await;
    second.assert_ok();
    assert!(
        !second.stderr.contains("creating a new session"),
        "{second}"
    );
    assert_eq!(second.stdout, "kiwi\n");
    assert!(request_text(&mock, 1).contains("remember kiwi"));
    assert_eq!(sessions(&agent).len(), 1, "the same file is continued");
}

#[tokio::test]
async fn invalid_session_ids_are_rejected_before_anything_runs() {
    let agent = TestAgent::new();
    for bad in ["bad_", "a b", "x/y", ".hidden"] {
        let out = agent.run(&["--session-id", bad, "-p", "hi"]).await;
        out.assert_code(1);
        assert!(out.stderr.contains("Session id must be non-empty"), "{out}");
    }
    assert!(sessions(&agent).is_empty());
}

#[tokio::test]
async fn conflicting_session_flags_are_errors() {
    let agent = TestAgent::new();
    let cases: &[(&[&str], &str)] = &[
        (&["--session-id", "x", "--session", "y"], "--session-id"),
        (&["--session-id", "x", "-c"], "--session-id"),
        (&["--session-id", "x", "-r"], "--session-id"),
        (&["--fork", "a", "--session", "b"], "--fork"),
        (&["--fork", "a", "-c"], "--fork"),
        (&["--fork", "a", "--resume"], "--fork"),
        (&["--fork", "a", "--no-session"], "--fork"),
        (&["-r", "-c"], "--resume"),
    ];
    for (args, flag) in cases {
        let mut all = args.to_vec();
        all.extend(["-p", "hi"]);
        let out = agent.run(&all).await;
        out.assert_code(1);
        assert!(
            out.stderr.contains("cannot be used with") && out.stderr.contains(flag),
            "{args:?}\n{out}"
        );
    }
}

#[tokio::test]
async fn fork_copies_a_whole_session_and_leaves_the_source_untouched() {
    let mock = MockModel::start(vec![
        Turn::text("noted"),
        Turn::text("forked reply"),
        Turn::text("second fork"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    agent
        .run(&["--model", MODEL, "-p", "remember the word papaya"])
        .await
        .assert_ok();
    let source = sessions(&agent).remove(0);
    let before = std::fs::read(&source).unwrap();
    let src = lines(&source);
    let src_id = src[0]["id"].as_str().unwrap().to_string();

    let out = agent
        .run(&[
            "--model",
            MODEL,
            "--fork",
            &src_id[..8],
            "-p",
            "which word?",
        ])
        .await;
    out.assert_ok();
    assert_eq!(
        std::fs::read(&source).unwrap(),
        before,
        "source is byte-identical"
    );
    assert!(
        request_text(&mock, 1).contains("remember the word papaya"),
        "the fork carries the history"
    );
    let forked: Vec<PathBuf> = sessions(&agent)
        .into_iter()
        .filter(|p| *p != source)
        .collect();
    assert_eq!(forked.len(), 1);
    let new = lines(&forked[0]);
    let new_id = new[0]["id"].as_str().unwrap();
    assert_ne!(new_id, src_id);
    assert_eq!(new_id.len(), 36);
    assert_eq!(&new_id[14..15], "7", "a UUIDv7: {new_id}");
    assert_eq!(new[0]["parentSession"], path_str(&source).as_str());
    assert_eq!(new[0]["cwd"], path_str(&agent.cwd).as_str());
    assert_eq!(new[0]["version"], 3);
    assert_eq!(
        &new[1..src.len()],
        &src[1..],
        "entries are copied as they were"
    );
    assert_eq!(forked[0].parent().unwrap(), project_dir(&agent));

    // By path, relative to the working directory, too.
    let rel = format!(
        "../{}",
        source
            .strip_prefix(agent.cwd.parent().unwrap())
            .unwrap()
            .display()
    );
    agent
        .run(&["--model", MODEL, "--fork", &rel, "-p", "again"])
        .await
        .assert_ok();
    let third = sessions(&agent)
        .into_iter()
        .find(|p| *p != source && *p != forked[0])
        .unwrap();
    assert_eq!(
        lines(&third)[0]["parentSession"],
        path_str(&source).as_str()
    );
    assert_eq!(std::fs::read(&source).unwrap(), before);
}

#[tokio::test]
async fn fork_takes_a_chosen_id_once_and_unknown_sources_are_errors() {
    let mock = MockModel::start(vec![Turn::text("noted"), Turn::text("ok")]).await;
    let agent = TestAgent::with_mock(&mock);
    agent
        .run(&["--model", MODEL, "-p", "hello"])
        .await
        .assert_ok();
    let source = sessions(&agent).remove(0);
    let src = path_str(&source);
    agent
        .run(&[
            "--model",
            MODEL,
            "--fork",
            &src,
            "--session-id",
            "copy-1",
            "-p",
            "x",
        ])
        .await
        .assert_ok();
    let copy = sessions(&agent)
        .into_iter()
        .find(|p| path_str(p).ends_with("_copy-1.jsonl"))
        .expect("fork named by --session-id");
    assert_eq!(lines(&copy)[0]["id"], "copy-1");

    let again = agent
        .run(&[
            "--model",
            MODEL,
            "--fork",
            &src,
            "--session-id",
            "copy-1",
            "-p",
            "x",
        ])
        .await;
    again.assert_code(1);
    assert!(
        again
            .stderr
            .contains("Session already exists with id 'copy-1'"),
        "{again}"
    );

    let missing = agent
        .run(&["--model", MODEL, "--fork", "nothing", "-p", "x"])
        .await;
    missing.assert_code(1);
    assert!(
        missing
            .stderr
            .contains("No session found matching 'nothing'"),
        "{missing}"
    );
    assert_eq!(sessions(&agent).len(), 2);
}

#[tokio::test]
async fn a_session_of_another_project_is_forked_only_when_confirmed() {
    let mock = MockModel::start(vec![Turn::text("here now")]).await;
    let agent = TestAgent::with_mock(&mock);
    let elsewhere = agent.agent_dir.join("sessions").join("--elsewhere--");
    let foreign =
        write_foreign_session(&elsewhere, "0abc-foreign", "/elsewhere", "foreign question");
    let before = std::fs::read(&foreign).unwrap();
    let args = ["--model", MODEL, "--session", "0abc", "-p", "go on"];

    // Nobody to ask: an error naming the explicit way.
    let out = run_on_terminal(&agent, &args, None).await;
    out.assert_code(1);
    assert!(
        out.stderr.contains("another project (/elsewhere)") && out.stderr.contains("--fork 0abc"),
        "{out}"
    );

    // Declined on the terminal: pi's "Aborted.", exit 0, nothing created.
    let out = run_on_terminal(&agent, &args, Some("n\n")).await;
    out.assert_ok();
    assert!(
        out.stderr
            .contains("Fork this session into current directory? [y/N]"),
        "{out}"
    );
    assert!(out.stderr.contains("Aborted."), "{out}");
    assert!(jsonl_files(&project_dir(&agent)).is_empty());

    // Accepted: forked into this project, with its history sent.
    let out = run_on_terminal(&agent, &args, Some("y\n")).await;
    out.assert_ok();
    assert!(
        out.stderr
            .contains("Session found in different project: /elsewhere"),
        "{out}"
    );
    let here = jsonl_files(&project_dir(&agent));
    assert_eq!(here.len(), 1);
    let header = &lines(&here[0])[0];
    assert_eq!(header["parentSession"], path_str(&foreign).as_str());
    assert_eq!(header["cwd"], path_str(&agent.cwd).as_str());
    assert!(request_text(&mock, 0).contains("foreign question"));
    assert_eq!(std::fs::read(&foreign).unwrap(), before);
}

#[tokio::test]
async fn name_is_recorded_for_new_and_resumed_sessions() {
    let mock = MockModel::start(vec![Turn::text("a"), Turn::text("b")]).await;
    let agent = TestAgent::with_mock(&mock);
    agent
        .run(&["--model", MODEL, "-n", "  first\n\nname ", "-p", "hi"])
        .await
        .assert_ok();
    let file = sessions(&agent).remove(0);
    let infos = |p: &Path| -> Vec<Value> {
        lines(p)
            .into_iter()
            .filter(|l| l["type"] == "session_info")
            .collect()
    };
    let first = infos(&file);
    assert_eq!(first.len(), 1);
    assert_eq!(first[0]["name"], "first name");

    agent
        .run(&["--model", MODEL, "-c", "--name", "second", "-p", "again"])
        .await
        .assert_ok();
    let both = infos(&file);
    assert_eq!(both.len(), 2);
    assert_eq!(both[1]["name"], "second");
    assert_eq!(sessions(&agent).len(), 1);

    let empty = agent
        .run(&["--model", MODEL, "-n", "  \n ", "-p", "x"])
        .await;
    empty.assert_code(1);
    assert!(
        empty.stderr.contains("--name requires a non-empty value"),
        "{empty}"
    );
    assert_eq!(mock.bodies().len(), 2, "no model call for a bad name");
}

#[tokio::test]
async fn resume_lists_sessions_and_opens_the_chosen_one() {
    let mock = MockModel::start(vec![
        Turn::text("ok alpha"),
        Turn::text("ok bravo"),
        Turn::text("ok charlie"),
        Turn::text("resumed"),
    ])
    .await;
    let agent = TestAgent::with_mock(&mock);
    for (word, name) in [
        ("alpha", None),
        ("bravo", Some("the b one")),
        ("charlie", None),
    ] {
        let mut args = vec!["--model", MODEL, "-p"];
        let prompt = format!("remember {word}");
        args.push(&prompt);
        if let Some(n) = name {
            args.extend(["-n", n]);
        }
        agent.run(&args).await.assert_ok();
    }
    // Pin the order: alpha oldest, charlie newest.
    let files = sessions(&agent);
    assert_eq!(files.len(), 3);
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let age = ["alpha", "bravo", "charlie"]
            .iter()
            .position(|w| text.contains(&format!("remember {w}")))
            .unwrap();
        set_mtime(f, 100 * age as u64);
    }

    // An invalid choice is asked again; then the second newest (bravo) is taken.
    let out = run_on_terminal(
        &agent,
        &["--model", MODEL, "-r", "-p", "which word?"],
        Some("7\n2\n"),
    )
    .await;
    out.assert_ok();
    assert_eq!(out.stdout, "resumed\n");
    let listing = &out.stderr;
    let pos = |s: &str| {
        listing
            .find(s)
            .unwrap_or_else(|| panic!("{s:?} missing\n{out}"))
    };
    assert!(pos("1. ") < pos("remember charlie"));
    assert!(pos("remember charlie") < pos("[the b one]  remember bravo  (3 messages)"));
    assert!(pos("remember bravo") < pos("3. "));
    assert!(pos("3. ") < pos("remember alpha"));
    assert!(listing.contains("Invalid choice \"7\""), "{out}");

    let sent = request_text(&mock, 3);
    assert!(
        sent.contains("remember bravo") && sent.contains("ok bravo"),
        "{sent}"
    );
    assert!(
        !sent.contains("charlie") && !sent.contains("alpha"),
        "{sent}"
    );
    assert_eq!(sessions(&agent).len(), 3, "appended to the chosen session");
}

#[tokio::test]
async fn resume_cancel_no_terminal_and_no_sessions() {
    let mock = MockModel::start(vec![Turn::text("saved")]).await;
    let agent = TestAgent::with_mock(&mock);
    let args = ["--model", MODEL, "-r", "-p", "hi"];

    let none = run_on_terminal(&agent, &args, None).await;
    none.assert_code(1);
    assert!(none.stderr.contains("no sessions to resume"), "{none}");

    agent
        .run(&["--model", MODEL, "-p", "first"])
        .await
        .assert_ok();

    let no_tty = run_on_terminal(&agent, &args, None).await;
    no_tty.assert_code(1);
    assert!(
        no_tty.stderr.contains("--resume needs a terminal")
            && no_tty.stderr.contains("--session <id>")
            && no_tty.stderr.contains("-c"),
        "{no_tty}"
    );

    let cancelled = run_on_terminal(&agent, &args, Some("\n")).await;
    cancelled.assert_ok();
    assert!(
        cancelled.stderr.contains("No session selected"),
        "{cancelled}"
    );
    assert_eq!(mock.bodies().len(), 1, "no model call after a cancel");
    assert_eq!(sessions(&agent).len(), 1);
}

#[tokio::test]
async fn session_dir_comes_from_flag_then_env_then_setting() {
    let mock = MockModel::start(vec![
        Turn::text("one"),
        Turn::text("two"),
        Turn::text("three"),
        Turn::text("four"),
    ])
    .await;
    let mut agent = TestAgent::with_mock(&mock);
    let root = agent.agent_dir.parent().unwrap().to_path_buf();
    let [from_setting, from_env, from_flag] =
        ["from-setting", "from-env", "from-flag"].map(|d| root.join(d));
    agent.write_settings(&json!({"sessionDir": path_str(&from_setting)}));

    agent.run(&["--model", MODEL, "-p", "a"]).await.assert_ok();
    let in_setting = jsonl_files(&from_setting);
    assert_eq!(
        in_setting.len(),
        1,
        "the setting is used without flag or env"
    );
    assert_eq!(
        in_setting[0].parent().unwrap(),
        from_setting,
        "files sit directly in it"
    );

    agent.env("PI_CODING_AGENT_SESSION_DIR", &path_str(&from_env));
    agent.run(&["--model", MODEL, "-p", "b"]).await.assert_ok();
    assert_eq!(
        jsonl_files(&from_env).len(),
        1,
        "the environment beats the setting"
    );

    // The flag beats both; the directory is shared, so `-c` skips other projects' sessions.
    let foreign = write_foreign_session(&from_flag, "0fff-other", "/elsewhere", "not ours");
    agent
        .run(&[
            "--model",
            MODEL,
            "--session-dir",
            &path_str(&from_flag),
            "-p",
            "our word is fig",
        ])
        .await
        .assert_ok();
    let ours: Vec<PathBuf> = jsonl_files(&from_flag)
        .into_iter()
        .filter(|p| *p != foreign)
        .collect();
    assert_eq!(ours.len(), 1);
    set_mtime(&ours[0], 0);
    set_mtime(&foreign, 1000);
    agent
        .run(&[
            "--model",
            MODEL,
            "--session-dir",
            &path_str(&from_flag),
            "-c",
            "-p",
            "word?",
        ])
        .await
        .assert_ok();
    let sent = request_text(&mock, 3);
    assert!(
        sent.contains("our word is fig") && !sent.contains("not ours"),
        "{sent}"
    );
    assert_eq!(jsonl_files(&from_setting).len(), 1);
    assert_eq!(jsonl_files(&from_env).len(), 1);
    assert!(
        sessions(&agent).is_empty(),
        "nothing in the default location"
    );
}
