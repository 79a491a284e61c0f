//! v1/v2 sessions are migrated by renaming a complete new file over the old one, keeping the
//! original as `<name>.bak` and never overwriting another file there.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use super::*;
use crate::common::path_str;

/// An old fixture session as if made in this agent's project: a session runs where it was
/// made, and the fixtures' directory does not exist here.
fn made_here(agent: &TestAgent, name: &str) -> Vec<u8> {
    let text = std::fs::read_to_string(fixture_session(name)).unwrap();
    text.replace("/home/me/old", &path_str(&agent.cwd))
        .into_bytes()
}

#[tokio::test]
async fn migrating_an_old_session_keeps_a_backup_and_replaces_the_file_whole() {
    let agent = TestAgent::new();
    let original = made_here(&agent, "v1-linear.jsonl");
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
    std::fs::write(&elsewhere, made_here(&agent, "v2-tree.jsonl")).unwrap();
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
