use serde_json::Value;

use super::*;
use crate::hooks::claude::names::NoMcp;
use crate::message::{AssistantMessage, Content, Message};

fn assistant(text: &str) -> Message {
    let mut a = AssistantMessage::empty("faux", "faux", "m1");
    a.content.push(Content::text(text));
    Message::Assistant(a)
}

fn lines(t: &Transcript) -> Vec<Value> {
    std::fs::read_to_string(t.path())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn sync(t: &Transcript, s: &SharedSession) {
    t.sync(s, Path::new("/proj"), &NoMcp).unwrap();
}

#[test]
fn each_sync_appends_what_the_session_gained() {
    let dir = tempfile::tempdir().unwrap();
    let session = SharedSession::new(Session::in_memory("/proj"));
    let id = session.lock().id().to_string();
    let t = Transcript::new(Some(dir.path()), Some(&id), true).unwrap();
    assert_eq!(
        t.path(),
        dir.path()
            .join("claude-transcripts")
            .join(format!("{id}.jsonl"))
    );
    sync(&t, &session);
    assert!(lines(&t).is_empty(), "there from the first hook on, empty");
    session.lock().append_message(Message::user("q")).unwrap();
    session.lock().append_message(assistant("a")).unwrap();
    sync(&t, &session);
    let first = lines(&t);
    assert_eq!(first.len(), 2);
    sync(&t, &session);
    assert_eq!(lines(&t), first, "nothing new, nothing written");
    session.lock().append_message(Message::user("q2")).unwrap();
    sync(&t, &session);
    let all = lines(&t);
    assert_eq!(all[..2], first[..]);
    assert_eq!(all[2]["message"]["content"], "q2");
    assert_eq!(all[2]["parentUuid"], all[1]["uuid"]);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(t.path()).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);

    // The next generation writes the file afresh, with the same ids.
    let next = Transcript::new(Some(dir.path()), Some(&id), true).unwrap();
    sync(&next, &session);
    assert_eq!(lines(&next), all);
}

#[test]
fn a_branch_switch_forks_the_chain_from_the_entry_it_continues() {
    let dir = tempfile::tempdir().unwrap();
    let session = SharedSession::new(Session::in_memory("/proj"));
    let t = Transcript::new(Some(dir.path()), Some("s"), true).unwrap();
    let q = session.lock().append_message(Message::user("q")).unwrap();
    session
        .lock()
        .append_message(assistant("first answer"))
        .unwrap();
    sync(&t, &session);
    session.lock().set_leaf(Some(&q)).unwrap();
    session
        .lock()
        .append_message(assistant("second answer"))
        .unwrap();
    sync(&t, &session);
    let l = lines(&t);
    assert_eq!(l.len(), 3);
    assert_eq!(l[2]["message"]["content"][0]["text"], "second answer");
    assert_eq!(
        l[2]["parentUuid"], l[0]["uuid"],
        "a sibling of the first answer"
    );
}

#[test]
fn without_a_saved_session_the_transcript_is_temporary() {
    let session = SharedSession::new(Session::in_memory("/proj"));
    let t = Transcript::new(None, Some("s"), false).unwrap();
    let path = t.path().to_path_buf();
    sync(&t, &session);
    assert!(path.is_file());
    drop(t);
    assert!(!path.exists(), "removed with the generation");
}
