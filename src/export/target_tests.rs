//! Where exports go and what they may replace: tests of [`super::export_html`] on real files.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::json;

use super::page::MARKER;
use super::target::{commit, inspect, temp_file};
use super::test_support::{chain, header, msg, session_of};
use super::{default_file_name, export_html, ExportError, RefuseReason};
use crate::session::Session;

fn small_session() -> Session {
    let mut lines = vec![header("s", "/w")];
    lines.extend(chain(vec![msg(
        json!({"role": "user", "content": "hello", "timestamp": 1}),
    )]));
    session_of(&lines)
}

/// The names in `dir`, sorted (to see that no temporary file was left behind).
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn refused(r: Result<std::path::PathBuf, ExportError>) -> RefuseReason {
    match r {
        Err(ExportError::Refused { reason, .. }) => reason,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn a_new_file_is_written_whole_and_its_path_returned() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.html");
    let s = small_session();
    assert_eq!(export_html(&s, Some(&out)).unwrap(), out);
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.starts_with(MARKER) && html.ends_with("</html>\n"));
    assert!(html.contains("hello"));
    assert_eq!(names(dir.path()), ["out.html"]);
}

#[test]
fn the_default_name_is_pis_and_a_directory_gets_it_inside() {
    let s = small_session();
    assert_eq!(
        default_file_name(&s),
        "pi-session-2025-02-01T10-00-00-000Z_s.html"
    );
    let mem = Session::in_memory("/w");
    let expected = format!(
        "pi-session-{}_{}.html",
        mem.header().timestamp.replace([':', '.'], "-"),
        mem.id()
    );
    assert_eq!(default_file_name(&mem), expected.as_str());

    let dir = tempfile::tempdir().unwrap();
    let written = export_html(&s, Some(dir.path())).unwrap();
    assert_eq!(
        written,
        dir.path()
            .join("pi-session-2025-02-01T10-00-00-000Z_s.html")
    );
    assert!(written.is_file());
}

#[test]
fn an_earlier_export_or_an_empty_file_is_replaced_keeping_its_permissions() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("again.html");
    let s = small_session();
    export_html(&s, Some(&out)).unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::write(&out, format!("{MARKER}<html>old export</html>")).unwrap();
    export_html(&s, Some(&out)).unwrap();
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(!html.contains("old export") && html.contains("hello"));
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);

    // `mktemp` leaves an empty file for the caller to fill.
    let empty = dir.path().join("tmp.XXXX");
    std::fs::write(&empty, "").unwrap();
    export_html(&s, Some(&empty)).unwrap();
    assert!(std::fs::read_to_string(&empty).unwrap().starts_with(MARKER));
    assert_eq!(names(dir.path()), ["again.html", "tmp.XXXX"]);
}

#[test]
fn a_file_that_is_not_an_export_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let s = small_session();
    for (name, content) in [
        ("notes.txt", "my notes"),
        (
            "page.html",
            "<!DOCTYPE html>\n<html><body>someone's page</body></html>\n",
        ),
        ("short.html", "<!DOCTYPE html>\n"),
    ] {
        let p = dir.path().join(name);
        std::fs::write(&p, content).unwrap();
        let err = export_html(&s, Some(&p)).unwrap_err();
        assert!(
            matches!(
                &err,
                ExportError::Refused {
                    reason: RefuseReason::NotAnExport,
                    ..
                }
            ),
            "{err:?}"
        );
        let msg = err.to_string();
        assert!(
            msg.contains(&p.display().to_string()) && msg.contains("refusing to overwrite"),
            "{msg}"
        );
        assert_eq!(std::fs::read_to_string(&p).unwrap(), content);
    }
    assert_eq!(names(dir.path()), ["notes.txt", "page.html", "short.html"]);
}

#[test]
fn links_and_special_files_are_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let s = small_session();
    let target = dir.path().join("export.html");
    export_html(&s, Some(&target)).unwrap();
    let before = std::fs::read(&target).unwrap();
    // A link is not replaced, even one to an export; a dangling one is not written through.
    let link = dir.path().join("link.html");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    assert!(
        matches!(refused(export_html(&s, Some(&link))), RefuseReason::Symlink(t) if t == target)
    );
    let dangling = dir.path().join("dangling.html");
    std::os::unix::fs::symlink(dir.path().join("nowhere.html"), &dangling).unwrap();
    assert!(matches!(
        refused(export_html(&s, Some(&dangling))),
        RefuseReason::Symlink(_)
    ));
    assert!(!dir.path().join("nowhere.html").exists());
    assert_eq!(std::fs::read(&target).unwrap(), before);

    let fifo = dir.path().join("pipe.html");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    assert!(matches!(
        refused(export_html(&s, Some(&fifo))),
        RefuseReason::Special("FIFO (named pipe)")
    ));
    assert!(matches!(
        refused(export_html(&s, Some(Path::new("/dev/null")))),
        RefuseReason::Special("character device")
    ));
    assert_eq!(
        names(dir.path()),
        ["dangling.html", "export.html", "link.html", "pipe.html"]
    );
}

#[test]
fn a_missing_directory_is_named_in_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no").join("such");
    let err = export_html(&small_session(), Some(&missing.join("x.html"))).unwrap_err();
    assert!(
        matches!(&err, ExportError::NoDirectory { dir } if *dir == missing),
        "{err:?}"
    );
    assert!(err.to_string().contains(&missing.display().to_string()));
    assert!(names(dir.path()).is_empty());
}

#[test]
fn a_file_that_appears_or_is_swapped_while_writing_is_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("race.html");
    let existing = inspect(&p).unwrap();
    std::fs::write(&p, "theirs").unwrap();
    let err = commit(temp_file(dir.path()).unwrap(), &p, existing).unwrap_err();
    assert!(
        matches!(
            err,
            ExportError::Refused {
                reason: RefuseReason::Appeared,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "theirs");

    std::fs::write(&p, MARKER).unwrap();
    let existing = inspect(&p).unwrap();
    std::fs::remove_file(&p).unwrap();
    // Written in place of the export, likely under its inode number.
    std::fs::write(&p, "theirs again").unwrap();
    let err = commit(temp_file(dir.path()).unwrap(), &p, existing).unwrap_err();
    assert!(
        matches!(
            err,
            ExportError::Refused {
                reason: RefuseReason::Replaced,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "theirs again");
    assert_eq!(names(dir.path()), ["race.html"]);
}
