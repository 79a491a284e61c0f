use std::os::unix::fs::PermissionsExt;

use super::*;

fn path_in(dir: &tempfile::TempDir) -> PathBuf {
    history_path(dir.path(), "/home/me/proj")
}

fn record(text: &str) -> String {
    format!("{}\n", serde_json::json!({ "text": text }))
}

#[test]
fn the_file_is_keyed_by_the_working_directory_like_session_directories() {
    assert_eq!(
        history_path(Path::new("/agent"), "/home/me/proj"),
        Path::new("/agent/history/--home-me-proj--.jsonl")
    );
}

#[test]
fn appended_entries_load_back_in_order_and_the_file_is_private() {
    let dir = tempfile::tempdir().unwrap();
    let path = path_in(&dir);
    append(&path, "first").unwrap();
    append(&path, "two\nlines \"quoted\"").unwrap();
    let loaded = load(&path);
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    assert_eq!(loaded.entries, ["first", "two\nlines \"quoted\""]);
    let text = fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 2, "one JSON object per line: {text}");
    let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn a_missing_file_is_an_empty_history_without_complaint() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = load(&path_in(&dir));
    assert!(loaded.entries.is_empty() && loaded.problems.is_empty());
}

#[test]
fn corrupt_lines_are_skipped_and_reported_with_their_line_number() {
    let dir = tempfile::tempdir().unwrap();
    let path = path_in(&dir);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut data = record("a").into_bytes();
    data.extend_from_slice(b"not json\n");
    data.extend_from_slice(b"{\"text\": \"\xff\xfe\"}\n");
    data.extend_from_slice(record("b").as_bytes());
    data.extend_from_slice(b"{\"text\": \"torn");
    fs::write(&path, data).unwrap();
    let loaded = load(&path);
    assert_eq!(loaded.entries, ["a", "b"]);
    match &loaded.problems[..] {
        [HistoryError::Corrupt { count, first, .. }] => assert_eq!((*count, *first), (3, 2)),
        other => panic!("expected one corrupt report, got {other:?}"),
    }
    let msg = loaded.problems[0].to_string();
    assert!(
        msg.contains(&path.display().to_string()) && msg.contains("line 2"),
        "{msg}"
    );
}

#[test]
fn an_append_after_a_torn_last_line_starts_a_fresh_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = path_in(&dir);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, format!("{}{{\"text\": \"to", record("a"))).unwrap();
    append(&path, "b").unwrap();
    let loaded = load(&path);
    assert_eq!(loaded.entries, ["a", "b"]);
    assert_eq!(loaded.problems.len(), 1, "only the torn line is lost");
}

#[test]
fn a_directory_or_fifo_in_place_of_the_file_is_reported_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = path_in(&dir);
    fs::create_dir_all(&path).unwrap();
    let loaded = load(&path);
    assert!(loaded.entries.is_empty());
    assert!(matches!(
        loaded.problems[..],
        [HistoryError::NotAFile { .. }]
    ));
    assert!(append(&path, "x").is_err());

    let fifo = dir.path().join("fifo.jsonl");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    // Reading a FIFO would block until someone writes; this must come back at once.
    let loaded = load(&fifo);
    assert!(matches!(
        loaded.problems[..],
        [HistoryError::NotAFile { .. }]
    ));
}

#[test]
fn an_unreadable_file_is_reported_as_such() {
    let dir = tempfile::tempdir().unwrap();
    // A path through a regular file cannot be opened (ENOTDIR), even as root.
    let blocker = dir.path().join("blocker");
    fs::write(&blocker, "").unwrap();
    let path = blocker.join("history.jsonl");
    let loaded = load(&path);
    match &loaded.problems[..] {
        [HistoryError::Read { .. }] => {}
        other => panic!("expected a read problem, got {other:?}"),
    }
    let err = append(&path, "x").unwrap_err();
    assert!(matches!(err, HistoryError::Write { .. }));
    assert!(err.to_string().contains("blocker"), "{err}");
}

#[test]
fn adjacent_duplicates_from_two_processes_load_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = path_in(&dir);
    for t in ["a", "b", "b", "a"] {
        append(&path, t).unwrap();
    }
    assert_eq!(load(&path).entries, ["a", "b", "a"]);
}

#[test]
fn a_file_past_twice_the_bound_is_trimmed_to_the_newest_entries() {
    let dir = tempfile::tempdir().unwrap();
    let path = path_in(&dir);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let all: String = (0..TRIM_AT + 5).map(|i| record(&format!("p{i}"))).collect();
    fs::write(&path, all).unwrap();
    let loaded = load(&path);
    assert_eq!(loaded.entries.len(), MAX_ENTRIES);
    assert_eq!(loaded.entries.last().unwrap(), &format!("p{}", TRIM_AT + 4));
    let kept = fs::read_to_string(&path).unwrap();
    assert_eq!(kept.lines().count(), MAX_ENTRIES);
    assert_eq!(load(&path).entries, loaded.entries);
}

#[test]
fn a_file_under_the_trim_threshold_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = path_in(&dir);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let all: String = (0..MAX_ENTRIES + 10)
        .map(|i| record(&format!("p{i}")))
        .collect();
    fs::write(&path, &all).unwrap();
    assert_eq!(load(&path).entries.len(), MAX_ENTRIES);
    assert_eq!(fs::read_to_string(&path).unwrap(), all, "never rewritten");
}

/// Whether some process is waiting for an flock on the file with inode `ino`.
fn someone_waits_for_lock_on(ino: u64) -> bool {
    let locks = fs::read_to_string("/proc/locks").unwrap_or_default();
    locks.lines().any(|l| {
        l.contains("->")
            && l.split_whitespace()
                .any(|f| f.ends_with(&format!(":{ino}")))
    })
}

#[test]
fn an_append_waiting_on_a_trim_lands_in_the_trimmed_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = path_in(&dir);
    append(&path, "old").unwrap();
    // Play the trimmer: hold the lock on the current file...
    let held = File::open(&path).unwrap();
    held.lock().unwrap();
    let ino = held.metadata().unwrap().ino();
    let writer = {
        let path = path.clone();
        std::thread::spawn(move || append(&path, "new"))
    };
    // ...until the appender has opened that file and is blocked on its lock...
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !someone_waits_for_lock_on(ino) {
        assert!(
            std::time::Instant::now() < deadline,
            "appender never blocked"
        );
        std::thread::yield_now();
    }
    // ...then replace the file and let go.
    let replacement = dir.path().join("replacement");
    fs::write(&replacement, record("kept")).unwrap();
    fs::rename(&replacement, &path).unwrap();
    drop(held);
    writer.join().unwrap().unwrap();
    assert_eq!(load(&path).entries, ["kept", "new"]);
}
