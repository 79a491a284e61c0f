//! The command line: `--session`, `--fork` and `-c` open only session files (or nothing, or
//! an empty file) and refuse everything else at once, naming the file, which stays as it was.

use std::time::Duration;

use serde_json::{json, Value};

use super::*;
use crate::common::path_str;

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
