//! The helper against a scripted host over a socket pair: the handshake, each request kind,
//! host calls served while the reader keeps reading, cancel, and the exit on `shutdown`/EOF.

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use serde_json::{json, Value};

use super::*;
use crate::framing::{FrameReader, FrameWriter};
use crate::protocol::HookMessage;

struct Host {
    r: FrameReader<UnixStream>,
    w: FrameWriter<UnixStream>,
    hook: Option<JoinHandle<Result<String, RunError>>>,
}

impl Host {
    fn start(hook: Hook) -> (Host, Value) {
        let (host_end, hook_end) = UnixStream::pair().unwrap();
        let hook_out: Box<dyn Write + Send> = Box::new(hook_end.try_clone().unwrap());
        let t = std::thread::spawn(move || hook.serve(hook_end, hook_out));
        let mut host = Host {
            r: FrameReader::new(host_end.try_clone().unwrap()),
            w: FrameWriter::new(host_end),
            hook: Some(t),
        };
        host.send(json!({"type": "hello", "protocol_versions": [1],
            "host": {"name": "pi", "version": "0"}, "hook_name": "t", "cwd": "/p",
            "mode": "print", "config": {"strict": true}, "capabilities": {}}));
        let reg = host.next();
        (host, reg)
    }

    fn send(&mut self, v: Value) {
        self.w.write_message(&v).unwrap();
    }

    fn next(&mut self) -> Value {
        let bytes = self.r.read_frame().unwrap().expect("a frame");
        let v: Value = serde_json::from_slice(bytes).unwrap();
        // Everything the helper writes is a valid hook message.
        serde_json::from_value::<HookMessage>(v.clone()).unwrap();
        v
    }

    fn stop(mut self, msg: Option<Value>) -> Result<String, RunError> {
        match msg {
            Some(m) => self.send(m),
            None => self
                .w
                .into_inner()
                .shutdown(std::net::Shutdown::Write)
                .unwrap(),
        }
        self.hook.take().unwrap().join().unwrap()
    }
}

fn sample_hook() -> Hook {
    let mut h = Hook::new("sample");
    h.version("1.0")
        .fail(FailPolicy::Open)
        .on_tool_call(&["bash"], |call, ctx| {
            let strict = ctx.config()["strict"].as_bool() == Some(true);
            match call.str_arg("command") {
                Some(c) if strict && c.contains("sudo") => Gate::block("no sudo"),
                Some("ls") => Gate::patch(json!({"command": "ls -la"})),
                _ => Gate::allow(),
            }
        })
        .tool(
            "slow",
            "Waits for cancel",
            json!({"type": "object"}),
            |_args, ctx| {
                ctx.progress("started");
                if ctx.wait_cancelled(Duration::from_secs(10)) {
                    return Ok(ToolOutput::text("cancelled"));
                }
                Err(HandlerError::new("never cancelled"))
            },
        )
        .tool(
            "ask",
            "Asks the host",
            json!({"type": "object"}),
            |args, ctx| {
                let v = ctx.call("model.get", json!({}))?;
                Ok(ToolOutput::text(format!("{} {}", v["id"], args["x"])))
            },
        )
        .command("hi", "Greets", |args, _ctx| {
            if args == "fail" {
                return Err(HandlerError::new("asked to fail"));
            }
            Ok(format!("hello {args}"))
        })
        .completions("hi", |prefix| vec![json!(format!("{prefix}!"))]);
    h
}

#[test]
fn registers_what_was_declared() {
    let (host, reg) = Host::start(sample_hook());
    assert_eq!(reg["type"], "register");
    assert_eq!(reg["protocol_version"], 1);
    assert_eq!(reg["name"], "sample");
    assert_eq!(reg["version"], "1.0");
    assert_eq!(reg["fail"], "open");
    assert_eq!(
        reg["subscriptions"],
        json!([{"event": "tool_call", "tools": ["bash"]}])
    );
    assert_eq!(reg["tools"][0]["name"], "slow");
    assert_eq!(
        reg["commands"][0],
        json!({"name": "hi", "description": "Greets", "completions": true})
    );
    assert_eq!(
        host.stop(Some(json!({"type": "shutdown", "reason": "quit"})))
            .unwrap(),
        "quit"
    );
}

#[test]
fn answers_gates_commands_and_completions() {
    let (mut host, _) = Host::start(sample_hook());
    let gate = |id: u64, cmd: &str| {
        json!({"type": "event", "id": id, "name": "tool_call", "deadline_ms": 1000,
               "payload": {"tool_call_id": "c", "tool_name": "bash", "input": {"command": cmd}}})
    };
    host.send(gate(1, "sudo rm"));
    assert_eq!(
        host.next(),
        json!({"type": "reply", "id": 1, "result": {"block": true, "reason": "no sudo"}})
    );
    host.send(gate(2, "ls"));
    assert_eq!(
        host.next()["result"],
        json!({"patch": {"command": "ls -la"}})
    );
    host.send(gate(3, "cat x"));
    assert_eq!(host.next()["result"], json!({}));
    host.send(json!({"type": "command", "id": 4, "name": "hi", "args": "there"}));
    assert_eq!(host.next()["result"], json!({"text": "hello there"}));
    host.send(json!({"type": "command", "id": 5, "name": "hi", "args": "fail"}));
    assert_eq!(
        host.next(),
        json!({"type": "reply", "id": 5, "error": "asked to fail"})
    );
    host.send(json!({"type": "command", "id": 6, "name": "nope"}));
    assert!(host.next()["error"]
        .as_str()
        .unwrap()
        .contains("unknown command"));
    host.send(json!({"type": "complete", "id": 7, "name": "hi", "prefix": "pro"}));
    assert_eq!(host.next()["result"], json!({"items": ["pro!"]}));
    // A notify event for a handler-less event, and unknown messages, are no reply at all.
    host.send(json!({"type": "event", "name": "agent_start", "payload": {}}));
    host.send(json!({"type": "frobnicate", "id": 9}));
    host.send(json!({"type": "command", "id": 8, "name": "hi", "args": "again"}));
    assert_eq!(host.next()["id"], 8);
    assert_eq!(host.stop(None).unwrap(), "eof");
}

#[test]
fn a_tool_makes_a_host_call_while_the_reader_keeps_reading() {
    let (mut host, _) = Host::start(sample_hook());
    host.send(
        json!({"type": "tool_execute", "id": 1, "tool": "ask", "call_id": "c1",
                     "arguments": {"x": 5}}),
    );
    let call = host.next();
    assert_eq!(call["type"], "call");
    assert_eq!(call["method"], "model.get");
    // Another request is served while the tool waits for its answer.
    host.send(json!({"type": "command", "id": 2, "name": "hi", "args": "x"}));
    assert_eq!(host.next()["id"], 2);
    host.send(json!({"type": "result", "id": call["id"], "value": {"id": "m1"}}));
    let reply = host.next();
    assert_eq!(reply["id"], 1);
    assert_eq!(reply["result"]["content"][0]["text"], "\"m1\" 5");
    assert_eq!(reply["result"]["is_error"], false);
    host.stop(None).unwrap();
}

#[test]
fn cancel_wakes_the_handler_and_drops_its_reply() {
    let (mut host, _) = Host::start(sample_hook());
    host.send(
        json!({"type": "tool_execute", "id": 1, "tool": "slow", "call_id": "c1",
                     "arguments": {}}),
    );
    let p = host.next();
    assert_eq!(
        p,
        json!({"type": "progress", "id": 1, "content": [{"type": "text", "text": "started"}]})
    );
    host.send(json!({"type": "cancel", "id": 1}));
    // The cancelled reply is not sent: the next frame answers the next request.
    host.send(json!({"type": "command", "id": 2, "name": "hi", "args": "y"}));
    assert_eq!(host.next()["id"], 2);
    host.stop(None).unwrap();
}

#[test]
fn a_host_call_fails_closed_when_the_host_goes_and_shutdown_handlers_run() {
    static RAN: AtomicBool = AtomicBool::new(false);
    let mut hook = sample_hook();
    hook.on_shutdown(|reason| {
        assert_eq!(reason, "eof");
        RAN.store(true, Ordering::SeqCst);
    });
    let (mut host, _) = Host::start(hook);
    host.send(
        json!({"type": "tool_execute", "id": 1, "tool": "ask", "call_id": "c1",
                     "arguments": {}}),
    );
    assert_eq!(host.next()["type"], "call");
    assert_eq!(host.stop(None).unwrap(), "eof");
    assert!(RAN.load(Ordering::SeqCst));
}

#[test]
fn a_panicking_handler_is_an_error_reply_not_a_dead_hook() {
    let mut hook = Hook::new("p");
    hook.on("input", |_p, _c| panic!("boom"));
    let (mut host, _) = Host::start(hook);
    host.send(
        json!({"type": "event", "id": 1, "name": "input", "deadline_ms": 100,
                     "payload": {"text": "x", "source": "print"}}),
    );
    let r = host.next();
    assert!(r["error"].as_str().unwrap().contains("boom"), "{r}");
    host.stop(None).unwrap();
}

#[test]
fn no_common_version_is_an_error() {
    let (host_end, hook_end) = UnixStream::pair().unwrap();
    let out: Box<dyn Write + Send> = Box::new(hook_end.try_clone().unwrap());
    let mut w = FrameWriter::new(host_end);
    w.write_message(&json!({"type": "hello", "protocol_versions": [7],
        "host": {"name": "pi", "version": "0"}, "hook_name": "t", "cwd": "/p",
        "mode": "print", "config": {}, "capabilities": {}}))
        .unwrap();
    let r = Hook::new("x").serve(hook_end, out);
    assert!(matches!(r, Err(RunError::NoCommonVersion { .. })), "{r:?}");
}
