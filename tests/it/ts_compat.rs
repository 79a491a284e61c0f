//! Session files are interchangeable with the TypeScript pi (npm
//! `@mariozechner/pi-coding-agent`, the version pinned in `tests/ts-pi/package.json`): a session
//! it wrote resumes in ours with `--session` and the whole history reaches the model in order,
//! and a session we wrote resumes in it the same way. Each side must append to the other's file
//! without rewriting it, chaining its entries onto the last one there.
//!
//! Both programs talk to the same [`MockModel`] over the OpenAI chat-completions wire, so the
//! request bodies can be compared in one normalized form. Without the package installed these
//! tests skip (or fail under `PI_TS_PI_REQUIRED=1`, as on CI); see [`TsPi::find`].

use serde_json::{json, Value};

use crate::common::ts_pi::TsPi;
use crate::common::wire;
use crate::common::{MockModel, TestAgent, Turn};
use crate::sessions::only_session_file;

const OPENAI: &str = "mock/mock-model";
const NOTE: &str = "the-password-is-swordfish";

/// Every line of a session file as JSON; panics naming the line that is not a JSON object.
#[track_caller]
fn parse_lines(text: &str) -> Vec<Value> {
    assert!(text.ends_with('\n'), "a session file ends with a newline");
    text.lines()
        .enumerate()
        .map(|(i, l)| match serde_json::from_str::<Value>(l) {
            Ok(v) if v.is_object() => v,
            _ => panic!("session line {} is not a JSON object: {l:?}", i + 1),
        })
        .collect()
}

/// The conversation in an OpenAI request body, one readable string per message, system prompt
/// left out: `user: …`, `assistant: …`, `assistant calls read {"path":…}`, `tool[call_1]: …`.
fn transcript(body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for m in wire::messages(body) {
        let text = wire::content_text(&m["content"]);
        match m["role"].as_str().unwrap_or_default() {
            "system" | "developer" => {}
            "assistant" => {
                if !text.is_empty() {
                    out.push(format!("assistant: {text}"));
                }
                for tc in m["tool_calls"].as_array().into_iter().flatten() {
                    let args: Value =
                        serde_json::from_str(tc["function"]["arguments"].as_str().unwrap_or(""))
                            .unwrap_or(Value::Null);
                    out.push(format!(
                        "assistant calls[{}] {} {args}",
                        tc["id"].as_str().unwrap_or_default(),
                        tc["function"]["name"].as_str().unwrap_or_default(),
                    ));
                }
            }
            "tool" => out.push(format!(
                "tool[{}]: {}",
                m["tool_call_id"].as_str().unwrap_or_default(),
                // Only whether the file's text came back matters; the tools' framing differs.
                if text.contains(NOTE) { NOTE } else { &text },
            )),
            role => out.push(format!("{role}: {text}")),
        }
    }
    out
}

/// The history both tests build and then resume: a prompt answered after one `read` call, and a
/// plain second exchange; then the resuming side's `new_prompt`.
fn expected_history(new_prompt: &str) -> Vec<String> {
    let args = json!({"path": "note.txt"});
    vec![
        "user: read note.txt".to_string(),
        format!("assistant calls[call_1] read {args}"),
        format!("tool[call_1]: {NOTE}"),
        "assistant: it says swordfish".to_string(),
        "user: and the colour?".to_string(),
        "assistant: blue".to_string(),
        format!("user: {new_prompt}"),
    ]
}

fn turns(last_answer: &str) -> Vec<Turn> {
    vec![
        Turn::tools(&[("read", json!({"path": "note.txt"}))]),
        Turn::text("it says swordfish"),
        Turn::text("blue"),
        Turn::text(last_answer),
    ]
}

/// Checks that `after` is `before` with whole lines appended, that those lines parse, and that
/// they form one chain hanging off `before`'s last entry. Returns the appended entries.
#[track_caller]
fn assert_appended_chain(before: &str, after: &str, writer: &str) -> Vec<Value> {
    assert!(
        after.starts_with(before),
        "{writer} rewrote the lines already in the file\n--- before ---\n{before}\n--- after ---\n{after}"
    );
    let old = parse_lines(before);
    let new = parse_lines(&after[before.len()..]);
    assert!(!new.is_empty(), "{writer} appended nothing");
    let mut parent = old.last().expect("old entries")["id"].clone();
    for e in &new {
        assert_eq!(
            e["parentId"], parent,
            "{writer}'s entry does not chain onto the previous one: {e}"
        );
        assert!(e["id"].is_string(), "entry without an id: {e}");
        parent = e["id"].clone();
    }
    new
}

#[tokio::test]
async fn a_typescript_pi_session_resumes_with_its_history_in_order() {
    let Some(ts) = TsPi::find() else { return };
    let mock = MockModel::start(turns("third answer")).await;
    let agent = TestAgent::with_mock(&mock);
    agent.write_file("note.txt", format!("{NOTE}\n"));

    let out = ts
        .run(&agent, &["--model", OPENAI, "-p", "read note.txt"])
        .await;
    out.assert_ok();
    let file = only_session_file(&agent);
    let session = file.to_str().expect("utf-8 path");
    ts.run(
        &agent,
        &[
            "--model",
            OPENAI,
            "--session",
            session,
            "-p",
            "and the colour?",
        ],
    )
    .await
    .assert_ok();
    assert_eq!(
        mock.bodies().len(),
        3,
        "the TypeScript pi made three requests"
    );
    let before = std::fs::read_to_string(&file).expect("read session");
    let header = &parse_lines(&before)[0];
    assert_eq!(header["type"], "session");
    assert_eq!(header["version"], 3);

    let out = agent.run(&["--session", session, "-p", "third"]).await;
    out.assert_ok();
    assert_eq!(out.stdout, "third answer\n");
    assert_resumed(&mock, &file, &before, "our pi", "third");
}

#[tokio::test]
async fn a_session_we_wrote_resumes_in_the_typescript_pi() {
    let Some(ts) = TsPi::find() else { return };
    let mock = MockModel::start(turns("ts answer")).await;
    let agent = TestAgent::with_mock(&mock);
    agent.write_file("note.txt", format!("{NOTE}\n"));

    agent
        .run(&["--model", OPENAI, "-p", "read note.txt"])
        .await
        .assert_ok();
    let file = only_session_file(&agent);
    let session = file.to_str().expect("utf-8 path");
    agent
        .run(&[
            "--model",
            OPENAI,
            "--session",
            session,
            "-p",
            "and the colour?",
        ])
        .await
        .assert_ok();
    assert_eq!(mock.bodies().len(), 3, "our pi made three requests");
    let before = std::fs::read_to_string(&file).expect("read session");

    let out = ts.run(&agent, &["--session", session, "-p", "next"]).await;
    out.assert_ok();
    assert_eq!(out.stdout.trim_end(), "ts answer", "{out}");
    assert_resumed(&mock, &file, &before, "the TypeScript pi", "next");
}

/// What resuming must have done, whichever program resumed: one request, with the session's
/// model and its whole history in order, and exactly the new exchange appended to the file,
/// chained onto the last entry.
fn assert_resumed(mock: &MockModel, file: &std::path::Path, before: &str, who: &str, prompt: &str) {
    let bodies = mock.bodies();
    assert_eq!(bodies.len(), 4, "{who} made one request");
    assert_eq!(
        bodies[3]["model"], "mock-model",
        "the session's model was restored"
    );
    assert_eq!(transcript(&bodies[3]), expected_history(prompt));
    let after = std::fs::read_to_string(file).expect("read session");
    let new = assert_appended_chain(before, &after, who);
    let roles: Vec<&str> = new
        .iter()
        .filter(|e| e["type"] == "message")
        .map(|e| e["message"]["role"].as_str().unwrap_or_default())
        .collect();
    // Ours declares the prompt first in a session that has none (pi 1.6's system message;
    // 0.73.1 wrote none, and skips ours when it reads the file).
    let had_prompt = before.contains(r#""role":"system""#);
    let conversation: Vec<&str> = roles.iter().copied().filter(|r| *r != "system").collect();
    assert_eq!(conversation, ["user", "assistant"], "{after}");
    assert!(
        roles.len() == 2 || (roles[0] == "system" && !had_prompt),
        "{roles:?}\n{after}"
    );
}

/// A session line with every string emptied and every number zeroed, keeping key order and
/// whether a number was written as an integer or a float: what must match byte for byte when
/// two writers record the same conversation.
fn skeleton(v: &Value) -> Value {
    match v {
        Value::String(_) => json!(""),
        Value::Number(n) if n.is_f64() => json!(0.0),
        Value::Number(_) => json!(0),
        Value::Array(a) => Value::Array(a.iter().map(skeleton).collect()),
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, v)| (k.clone(), skeleton(v))).collect())
        }
        other => other.clone(),
    }
}

/// Records the two-prompt conversation (the second prompt resuming with `--session`) in a fresh
/// agent, with the TypeScript pi when `ts` is given and with ours otherwise; returns the file.
async fn record_conversation(ts: Option<&TsPi>) -> String {
    let mock = MockModel::start(turns("unused")).await;
    let agent = TestAgent::with_mock(&mock);
    agent.write_file("note.txt", format!("{NOTE}\n"));
    let first = ["--model", OPENAI, "-p", "read note.txt"];
    match ts {
        Some(ts) => ts.run(&agent, &first).await,
        None => agent.run(&first).await,
    }
    .assert_ok();
    let file = only_session_file(&agent);
    let next = [
        "--session",
        file.to_str().expect("utf-8 path"),
        "-p",
        "and the colour?",
    ];
    match ts {
        Some(ts) => ts.run(&agent, &next).await,
        None => agent.run(&next).await,
    }
    .assert_ok();
    std::fs::read_to_string(&file).expect("read session")
}

#[tokio::test]
async fn we_record_a_conversation_in_the_same_shape_as_the_typescript_pi() {
    let Some(ts) = TsPi::find() else { return };
    let theirs = record_conversation(Some(&ts)).await;
    let ours = record_conversation(None).await;
    let shape = |text: &str| -> Vec<String> {
        parse_lines(text)
            .iter()
            // pi 1.6's system message (declaring the prompt) postdates 0.73.1.
            .filter(|v| v["message"]["role"] != "system")
            .map(|v| {
                let mut v = v.clone();
                drop_1_6_fields(&mut v);
                skeleton(&v).to_string()
            })
            .collect()
    };
    let (a, b) = (shape(&ours), shape(&theirs));
    if let Some(i) = (0..a.len().max(b.len())).find(|&i| a.get(i) != b.get(i)) {
        panic!(
            "line {} differs in shape\n  ours:   {}\n  theirs: {}\n--- ours ---\n{ours}\n--- the TypeScript pi's ---\n{theirs}",
            i + 1,
            a.get(i).map_or("(none)", String::as_str),
            b.get(i).map_or("(none)", String::as_str),
        );
    }
}

/// Removes the message fields pi 1.6 added (the TypeScript pi this test records is older):
/// the assistant's `rawStopReason`, `durationMs`, `thinkingLevel`, usage `reasoning`,
/// `cacheWrite1h` and `cost.totalFromProvider`, the tool result's `durationMs`.
fn drop_1_6_fields(v: &mut serde_json::Value) {
    let Some(m) = v.get_mut("message").and_then(|m| m.as_object_mut()) else {
        return;
    };
    for k in ["rawStopReason", "durationMs", "thinkingLevel"] {
        m.shift_remove(k);
    }
    if let Some(u) = m.get_mut("usage").and_then(|u| u.as_object_mut()) {
        u.shift_remove("reasoning");
        u.shift_remove("cacheWrite1h");
        if let Some(c) = u.get_mut("cost").and_then(|c| c.as_object_mut()) {
            c.shift_remove("totalFromProvider");
        }
    }
}
