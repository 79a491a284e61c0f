//! Property tests of the session line loader (issue 8: parsers are fuzzed in CI for a bounded
//! time). Arbitrary bytes, and valid sessions damaged byte by byte or line by line, must load
//! without a panic and without looping (each load runs on a thread with a deadline); the
//! entries on the lines before the first damaged byte must come back exactly as they were;
//! and reading a file never writes it, while opening one writes only a migration that keeps
//! the original as `<name>.bak`.
//!
//! The case counts are fixed and the inputs small (a few KiB), so the suite takes a few
//! seconds at most in a debug build and runs with every `cargo test`. Failures are not
//! persisted to files: proptest prints the minimal failing input instead.

use std::io::BufReader;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use proptest::prelude::*;
use serde_json::{json, Value};

use super::load::{load_file, load_reader, Loaded, WarningKind};
use super::{Session, SessionError, CURRENT_VERSION};

/// Far beyond any load here (a few KiB, microseconds); reaching it means a loop.
const DEADLINE: Duration = Duration::from_secs(10);

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Loads `bytes` on its own thread; a panic or a load still running at [`DEADLINE`] fails
/// the test case.
fn load_bounded(bytes: Vec<u8>) -> Result<Result<Option<Loaded>, SessionError>, TestCaseError> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        // A small buffer makes lines cross buffer boundaries, as large files do.
        let _ = tx.send(load_reader(BufReader::with_capacity(7, &bytes[..])));
    });
    match rx.recv_timeout(DEADLINE) {
        Ok(r) => Ok(r),
        Err(mpsc::RecvTimeoutError::Timeout) => Err(TestCaseError::fail(format!(
            "the loader did not finish within {DEADLINE:?}"
        ))),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            Err(TestCaseError::fail("the loader panicked"))
        }
    }
}

/// One entry line of a generated session; `id`/`parent` are filled in by [`session_text`].
fn entry_strategy() -> impl Strategy<Value = Value> {
    // Any characters, control and non-BMP included; JSON escapes them.
    let text = || prop::collection::vec(any::<char>(), 0..24).prop_map(String::from_iter);
    prop_oneof![
        text().prop_map(|t| json!({"type": "message",
            "message": {"role": "user", "content": t, "timestamp": 1}})),
        text().prop_map(|t| json!({"type": "message",
            "message": {"role": "assistant", "content": [{"type": "text", "text": t}],
                        "api": "faux", "provider": "faux", "model": "m",
                        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0,
                                  "totalTokens": 2,
                                  "cost": {"input": 0, "output": 0, "cacheRead": 0,
                                           "cacheWrite": 0, "total": 0}},
                        "stopReason": "stop", "timestamp": 2}})),
        text().prop_map(|t| json!({"type": "session_info", "name": t})),
        (text(), any::<i64>()).prop_map(|(t, n)| json!({"type": "custom", "customType": t,
            "data": {"n": n}})),
        text().prop_map(|t| json!({"type": "model_change", "provider": "p", "modelId": t})),
        text().prop_map(|t| json!({"type": "some_future_entry", "payload": t})),
    ]
}

/// A valid session: its bytes, and its lines (header first, no newlines).
fn session_text(version: u32, entries: &[Value]) -> (Vec<u8>, Vec<String>) {
    let mut lines = vec![json!({"type": "session", "version": version, "id": "prop",
        "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/w"})
    .to_string()];
    for (i, e) in entries.iter().enumerate() {
        let mut e = e.clone();
        if version >= 2 {
            e["id"] = json!(format!("{:08x}", i + 1));
            e["parentId"] = if i == 0 {
                Value::Null
            } else {
                json!(format!("{i:08x}"))
            };
        }
        e["timestamp"] = json!("2025-01-01T00:00:01.000Z");
        lines.push(e.to_string());
    }
    let mut bytes = Vec::new();
    for l in &lines {
        bytes.extend_from_slice(l.as_bytes());
        bytes.push(b'\n');
    }
    (bytes, lines)
}

fn v3_session() -> impl Strategy<Value = (Vec<u8>, Vec<String>)> {
    prop::collection::vec(entry_strategy(), 0..12)
        .prop_map(|entries| session_text(CURRENT_VERSION, &entries))
}

fn any_version_session() -> impl Strategy<Value = (Vec<u8>, Vec<String>)> {
    (1u32..=3, prop::collection::vec(entry_strategy(), 0..8))
        .prop_map(|(v, entries)| session_text(v, &entries))
}

/// A byte-level edit at a position given as a fraction of the input's length.
#[derive(Debug, Clone)]
enum Edit {
    Insert(f64, Vec<u8>),
    Delete(f64, usize),
    Overwrite(f64, u8),
    TruncateAt(f64),
}

fn edit_strategy() -> impl Strategy<Value = Edit> {
    let at = 0.0..1.0f64;
    let byte = prop_oneof![
        any::<u8>(),
        Just(b'\n'),
        Just(b'"'),
        Just(b'{'),
        Just(b'}'),
        Just(0xff)
    ];
    prop_oneof![
        (at.clone(), prop::collection::vec(byte.clone(), 1..6))
            .prop_map(|(a, b)| Edit::Insert(a, b)),
        (at.clone(), 1usize..40).prop_map(|(a, n)| Edit::Delete(a, n)),
        (at.clone(), byte).prop_map(|(a, b)| Edit::Overwrite(a, b)),
        at.prop_map(Edit::TruncateAt),
    ]
}

fn apply(bytes: &mut Vec<u8>, edit: &Edit) {
    let pos = |f: f64, len: usize| ((f * len as f64) as usize).min(len);
    match edit {
        Edit::Insert(f, b) => {
            let p = pos(*f, bytes.len());
            bytes.splice(p..p, b.iter().copied());
        }
        Edit::Delete(f, n) => {
            let p = pos(*f, bytes.len());
            let end = (p + n).min(bytes.len());
            bytes.drain(p..end);
        }
        Edit::Overwrite(f, b) => {
            if !bytes.is_empty() {
                let p = pos(*f, bytes.len() - 1);
                bytes[p] = *b;
            }
        }
        Edit::TruncateAt(f) => bytes.truncate(pos(*f, bytes.len())),
    }
}

/// How many of `lines` (each followed by a newline in `original`) are still whole, newline
/// included, at the start of `damaged`.
fn intact_lines(original: &[u8], damaged: &[u8], lines: &[String]) -> usize {
    let common = original
        .iter()
        .zip(damaged)
        .take_while(|(a, b)| a == b)
        .count();
    let mut end = 0;
    lines
        .iter()
        .take_while(|l| {
            end += l.len() + 1;
            end <= common
        })
        .count()
}

/// Entries of `loaded` compared as the lines they write.
fn entry_lines(l: &Loaded) -> Vec<String> {
    l.entries.iter().map(|e| e.to_line()).collect()
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn arbitrary_bytes_never_panic_or_hang(
        with_header in any::<bool>(),
        tail in prop::collection::vec(any::<u8>(), 0..2048),
    ) {
        // Half the inputs start with a valid header, so the entry lines get fuzzed too.
        let mut bytes = Vec::new();
        if with_header {
            bytes.extend_from_slice(session_text(CURRENT_VERSION, &[]).0.as_slice());
        }
        bytes.extend_from_slice(&tail);
        match load_bounded(bytes.clone())? {
            Ok(None) => prop_assert!(bytes.is_empty(), "only empty input is no session"),
            Ok(Some(l)) => {
                let lines = bytes.iter().filter(|&&b| b == b'\n').count() + 1;
                prop_assert!(l.entries.len() <= lines);
            }
            Err(SessionError::NotASession { .. } | SessionError::UnsupportedVersion { .. }) => {}
            Err(other) => prop_assert!(false, "unexpected error {other:?}"),
        }
    }

    #[test]
    fn byte_edits_keep_every_entry_before_the_first_damaged_line(
        (original, lines) in v3_session(),
        edits in prop::collection::vec(edit_strategy(), 1..4),
    ) {
        let clean = load_bounded(original.clone())?
            .map_err(|e| TestCaseError::fail(format!("the valid session did not load: {e}")))?
            .ok_or_else(|| TestCaseError::fail("the valid session loaded as empty"))?;
        prop_assert_eq!(entry_lines(&clean), lines[1..].to_vec(), "a valid session round-trips");

        let mut damaged = original.clone();
        for e in &edits {
            apply(&mut damaged, e);
        }
        let intact = intact_lines(&original, &damaged, &lines);
        let result = load_bounded(damaged.clone())?;
        if intact == 0 {
            // The header itself was hit: anything but a panic or a hang is fine.
            return Ok(());
        }
        let loaded = match result {
            Ok(Some(l)) => l,
            other => return Err(TestCaseError::fail(format!(
                "the header is intact, yet: {other:?}"))),
        };
        let kept = intact - 1;
        prop_assert!(loaded.entries.len() >= kept,
            "{} entries for {kept} intact entry lines", loaded.entries.len());
        prop_assert_eq!(&entry_lines(&loaded)[..kept], &lines[1..intact]);
    }

    #[test]
    fn a_damaged_line_is_skipped_with_a_warning_and_the_rest_is_kept(
        (_, lines) in v3_session().prop_filter("has entries", |(_, l)| l.len() > 1),
        pick in any::<prop::sample::Index>(),
        junk in prop_oneof![
            Just(b"not json".to_vec()),
            Just(b"{\"type\":\"message\",\"id\":".to_vec()),
            Just(b"[1,2,3]".to_vec()),
            Just(b"{\"no\":\"type\"}".to_vec()),
            Just(b"\xff\xfe{}".to_vec()),
            Just(br#"{"type":"session","version":3,"id":"again"}"#.to_vec()),
            prop::collection::vec(any::<u8>().prop_filter("one line", |b| *b != b'\n'), 1..64),
        ],
    ) {
        let k = 1 + pick.index(lines.len() - 1);
        let mut text = Vec::new();
        for (i, l) in lines.iter().enumerate() {
            if i == k {
                text.extend_from_slice(&junk);
            } else {
                text.extend_from_slice(l.as_bytes());
            }
            text.push(b'\n');
        }
        let loaded = load_bounded(text)?
            .map_err(|e| TestCaseError::fail(format!("{e}")))?
            .ok_or_else(|| TestCaseError::fail("loaded as empty"))?;
        let got = entry_lines(&loaded);
        // Everything before the damaged line, then everything after it; the junk line
        // itself is either skipped with a warning or (rarely) happens to be an entry.
        prop_assert_eq!(&got[..k - 1], &lines[1..k]);
        prop_assert_eq!(&got[got.len() - (lines.len() - 1 - k)..], &lines[k + 1..]);
        if got.len() == lines.len() - 2 && !junk.trim_ascii().is_empty() {
            prop_assert!(loaded.warnings.iter().any(|w| w.line == k + 1), "{:?}", loaded.warnings);
        }
    }
}

/// The file's bytes and modification time.
fn state(path: &Path) -> (Vec<u8>, std::time::SystemTime) {
    let meta = std::fs::metadata(path).unwrap();
    (std::fs::read(path).unwrap(), meta.modified().unwrap())
}

fn names(dir: &Path) -> Vec<String> {
    let mut n: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    n.sort();
    n
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn reading_never_writes_and_opening_writes_only_a_migration_with_a_backup(
        (original, _) in any_version_session(),
        edits in prop::collection::vec(edit_strategy(), 0..3),
        raw in prop::collection::vec(any::<u8>(), 0..256),
        use_raw in any::<bool>(),
    ) {
        let bytes = if use_raw {
            raw
        } else {
            let mut b = original;
            for e in &edits {
                apply(&mut b, e);
            }
            b
        };
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("s.jsonl");
        std::fs::write(&p, &bytes).unwrap();
        let past = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        std::fs::File::options().write(true).open(&p).unwrap().set_modified(past).unwrap();
        let before = state(&p);

        let loaded = load_file(&p);
        let read = Session::read(&p);
        prop_assert_eq!(&state(&p), &before, "reading changed the file");
        prop_assert_eq!(names(tmp.path()), vec!["s.jsonl".to_string()]);
        prop_assert_eq!(loaded.is_ok(), read.is_ok());
        drop(read);

        match Session::open(&p, "/w") {
            Ok((_, warnings)) if warnings.iter().any(|w| w.kind == WarningKind::Migrated) => {
                let bak = tmp.path().join("s.jsonl.bak");
                prop_assert_eq!(std::fs::read(&bak).unwrap(), bytes, "the backup is the original");
                prop_assert_eq!(
                    names(tmp.path()),
                    vec!["s.jsonl".to_string(), "s.jsonl.bak".to_string()]
                );
                let again = load_file(&p).map_err(|e| TestCaseError::fail(format!("{e}")))?;
                prop_assert_eq!(again.and_then(|l| l.migrated_from), None);
            }
            _ => {
                prop_assert_eq!(&state(&p), &before, "opening changed a file it did not migrate");
                prop_assert_eq!(names(tmp.path()), vec!["s.jsonl".to_string()]);
            }
        }
    }
}
