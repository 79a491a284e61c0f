//! The bridge as a hook, frame by frame: what `register` declares for an example (commands
//! with completions, flags, tools as JSON Schema, the events it listens to), how it answers
//! `complete`, and that a tool's `onUpdate` becomes `progress` — driven by a minimal host here,
//! so each frame is the test's to check.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::harness::{bridge_ready, example};

struct Bridge {
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
}

impl Bridge {
    fn start(source: &std::path::Path) -> Bridge {
        let main = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bridge/main.mjs");
        let mut child = Command::new("node")
            .arg(main)
            .arg(source)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn node");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        Bridge {
            child,
            stdin,
            stdout,
        }
    }

    async fn send(&mut self, msg: Value) {
        let body = serde_json::to_vec(&msg).expect("json");
        let mut frame = (body.len() as u32).to_be_bytes().to_vec();
        frame.extend(body);
        self.stdin.write_all(&frame).await.expect("write frame");
    }

    async fn read(&mut self) -> Value {
        let read = async {
            let mut head = [0u8; 4];
            self.stdout
                .read_exact(&mut head)
                .await
                .expect("frame header");
            let mut body = vec![0u8; u32::from_be_bytes(head) as usize];
            self.stdout.read_exact(&mut body).await.expect("frame body");
            serde_json::from_slice::<Value>(&body).expect("frame json")
        };
        tokio::time::timeout(Duration::from_secs(30), read)
            .await
            .expect("a frame within 30 s")
    }

    /// The next frame of `ty`, answering host calls on the way with `{}`.
    async fn next(&mut self, ty: &str) -> Value {
        loop {
            let v = self.read().await;
            if v["type"] == ty {
                return v;
            }
            if v["type"] == "call" {
                let id = v["id"].clone();
                self.send(json!({"type": "result", "id": id, "value": {}}))
                    .await;
            }
        }
    }

    async fn hello(&mut self, flags: Value) -> Value {
        self.send(json!({"type": "hello", "protocol_versions": [1], "host": {"name": "test", "version": "0"},
            "hook_name": "ext", "cwd": env!("CARGO_MANIFEST_DIR"), "mode": "rpc", "config": {},
            "capabilities": {"ui": {}, "methods": []}, "flags": flags}))
            .await;
        self.next("register").await
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

#[tokio::test]
async fn a_command_with_completions_answers_complete_as_the_extension_does() {
    if !bridge_ready() {
        return;
    }
    let mut b = Bridge::start(&example("commands.ts"));
    let reg = b.hello(json!({})).await;
    assert_eq!(reg["name"], "ext", "it registers under the host's name");
    let cmd = &reg["commands"][0];
    assert_eq!(cmd["name"], "commands");
    assert_eq!(cmd["completions"], true, "{reg}");
    b.send(json!({"type": "complete", "id": 1, "name": "commands", "prefix": "ex"}))
        .await;
    let reply = b.next("reply").await;
    assert_eq!(
        reply["result"]["items"],
        json!([{"value": "extension", "description": "extension"}])
    );
    // No match: the extension answers null, which is no list.
    b.send(json!({"type": "complete", "id": 2, "name": "commands", "prefix": "zz"}))
        .await;
    assert_eq!(b.next("reply").await["result"]["items"], json!([]));
}

#[tokio::test]
async fn flags_tools_and_subscriptions_are_declared_in_register() {
    if !bridge_ready() {
        return;
    }
    let mut b = Bridge::start(&example("plan-mode"));
    let reg = b.hello(json!({"plan": true})).await;
    let flags: Vec<&str> = reg["flags"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["name"].as_str())
        .collect();
    assert!(flags.contains(&"plan"), "{reg}");
    let events: Vec<&str> = reg["subscriptions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["event"].as_str())
        .collect();
    for e in [
        "tool_call",
        "before_agent_start",
        "session_start",
        "agent_end",
    ] {
        assert!(events.contains(&e), "{e} in {events:?}");
    }

    let mut b = Bridge::start(&example("todo.ts"));
    let reg = b.hello(json!({})).await;
    let todo = &reg["tools"][0];
    assert_eq!(todo["name"], "todo");
    assert_eq!(
        todo["parameters"]["properties"]["action"],
        json!({"type": "string", "enum": ["list", "add", "toggle", "clear"]})
    );
}

#[tokio::test]
async fn a_tools_updates_are_progress_frames() {
    if !bridge_ready() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let ext = dir.path().join("count.ts");
    std::fs::write(
        &ext,
        r#"import { Type } from "typebox";
export default function (pi) {
  pi.registerTool({ name: "count", label: "Count", description: "counts", parameters: Type.Object({}),
    async execute(id, params, signal, onUpdate) {
      onUpdate({ content: [{ type: "text", text: "1" }], details: { n: 1 } });
      return { content: [{ type: "text", text: `done ${id}` }], details: { n: 2 }, terminate: true };
    } });
}
"#,
    )
    .expect("write extension");
    let mut b = Bridge::start(&ext);
    b.hello(json!({})).await;
    b.send(json!({"type": "tool_execute", "id": 5, "tool": "count", "call_id": "c9", "arguments": {}, "deadline_ms": 60000}))
        .await;
    let progress = b.next("progress").await;
    assert_eq!(progress["id"], 5);
    assert_eq!(progress["details"], json!({"n": 1}));
    let reply = b.next("reply").await;
    assert_eq!(
        reply["result"],
        json!({"content": [{"type": "text", "text": "done c9"}], "details": {"n": 2}, "terminate": true})
    );
}
