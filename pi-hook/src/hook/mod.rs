//! [`Hook`]: the helper that turns closures into a conforming hook. It owns the protocol's
//! bookkeeping so a hook is only its handlers: the `hello`/`register` handshake, one reader
//! (the thread that calls [`Hook::run`]), requests answered on worker threads (so a handler
//! may block in a host call while the reader delivers its `result`), notify events in order on
//! one thread, `cancel`, and a clean exit on EOF or `shutdown`.

mod answers;
mod context;
mod pool;
mod requests;

use std::collections::{HashMap, HashSet};
use std::io::{BufReader, Read, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize as _;
use serde_json::{json, Value};

pub use self::answers::{
    CommandOutput, Gate, HandlerError, HostError, RunError, ToolCall, ToolOutput,
};
pub use self::context::Context;
use self::context::{lock, Conn};
use self::requests::{context, error_reply, finish, guarded, kind_of, notify_thread};
use crate::framing::{FrameReader, FrameWriter, Incoming};
use crate::protocol::{
    CommandDecl, FailPolicy, FlagDecl, Hello, HookMessage, HostMessage, Register, Subscription,
    ToolDecl,
};

/// Protocol versions this crate speaks.
pub const SUPPORTED_VERSIONS: &[u32] = &[1];

type EventFn = Arc<dyn Fn(&Value, &Context) -> Result<Value, HandlerError> + Send + Sync>;
type ToolFn = Arc<dyn Fn(Value, &Context) -> Result<ToolOutput, HandlerError> + Send + Sync>;
type CommandFn = Arc<dyn Fn(&str, &Context) -> Result<CommandOutput, HandlerError> + Send + Sync>;
type CompleteFn = Arc<dyn Fn(&str) -> Vec<Value> + Send + Sync>;
type HelloFn = Box<dyn FnOnce(&Hello) + Send>;
type ShutdownFn = Box<dyn FnOnce(&str) + Send>;

/// A hook under construction: register handlers, then [`run`](Hook::run).
pub struct Hook {
    name: String,
    version: Option<String>,
    fail: Option<FailPolicy>,
    subscriptions: Vec<Subscription>,
    events: HashMap<String, EventFn>,
    tools: Vec<ToolDecl>,
    tool_fns: HashMap<String, ToolFn>,
    commands: Vec<CommandDecl>,
    command_fns: HashMap<String, CommandFn>,
    completers: HashMap<String, CompleteFn>,
    /// Events answered on the reading thread (see [`Hook::inline`]).
    inline: HashSet<String>,
    flags: Vec<FlagDecl>,
    on_hello: Vec<HelloFn>,
    on_shutdown: Vec<ShutdownFn>,
}

/// The handlers, shared by the reader and the workers once the hook runs.
struct Handlers {
    events: HashMap<String, EventFn>,
    inline: HashSet<String>,
    tools: HashMap<String, ToolFn>,
    commands: HashMap<String, CommandFn>,
    completers: HashMap<String, CompleteFn>,
}

impl Hook {
    /// `name` is the hook's own name, used in the host's messages to the user.
    pub fn new(name: impl Into<String>) -> Hook {
        Hook {
            name: name.into(),
            version: None,
            fail: None,
            subscriptions: Vec::new(),
            events: HashMap::new(),
            tools: Vec::new(),
            tool_fns: HashMap::new(),
            commands: Vec::new(),
            command_fns: HashMap::new(),
            completers: HashMap::new(),
            inline: HashSet::new(),
            flags: Vec::new(),
            on_hello: Vec::new(),
            on_shutdown: Vec::new(),
        }
    }

    pub fn version(&mut self, version: impl Into<String>) -> &mut Hook {
        self.version = Some(version.into());
        self
    }

    /// The hook's own failure policy (a settings entry's `fail` overrides it).
    pub fn fail(&mut self, policy: FailPolicy) -> &mut Hook {
        self.fail = Some(policy);
        self
    }

    /// Subscribes to `event`: `f(payload, ctx)` returns the reply's `result` (`Value::Null`
    /// for "no opinion"); for notify events the return value is ignored.
    pub fn on<F>(&mut self, event: &str, f: F) -> &mut Hook
    where
        F: Fn(&Value, &Context) -> Result<Value, HandlerError> + Send + Sync + 'static,
    {
        self.subscribe(
            Subscription {
                event: event.to_string(),
                tools: None,
                deadline_ms: None,
            },
            f,
        )
    }

    /// [`on`](Self::on) for a tool event, only for the tools the filters match (exact names or
    /// globs).
    pub fn on_tools<F>(&mut self, event: &str, tools: &[&str], f: F) -> &mut Hook
    where
        F: Fn(&Value, &Context) -> Result<Value, HandlerError> + Send + Sync + 'static,
    {
        self.subscribe(
            Subscription {
                event: event.to_string(),
                tools: Some(tools.iter().map(|t| t.to_string()).collect()),
                deadline_ms: None,
            },
            f,
        )
    }

    /// The `tool_call` gate for the tools the filters match (`&[]`: every tool).
    pub fn on_tool_call<F>(&mut self, tools: &[&str], f: F) -> &mut Hook
    where
        F: Fn(&ToolCall, &Context) -> Gate + Send + Sync + 'static,
    {
        let handler = move |payload: &Value, ctx: &Context| {
            let call = ToolCall::deserialize(payload)?;
            Ok(f(&call, ctx).to_result())
        };
        if tools.is_empty() {
            self.on("tool_call", handler)
        } else {
            self.on_tools("tool_call", tools, handler)
        }
    }

    /// Answers `event` on the thread that reads the host's messages instead of handing each
    /// request to a worker thread. On a machine whose idle cores sleep, the hand-off is a
    /// thread wake-up per request — most of a compiled gate's round trip (about 120 µs against
    /// 25 µs measured here). Only for handlers that decide from the payload alone: a host call
    /// from such a handler ([`Context::call`](crate::Context::call)) would wait for a result
    /// that only this thread can read, and fail at its deadline.
    pub fn inline(&mut self, event: &str) -> &mut Hook {
        self.inline.insert(event.to_string());
        self
    }

    /// A subscription with every option (`deadline_ms`), and its handler.
    pub fn subscribe<F>(&mut self, sub: Subscription, f: F) -> &mut Hook
    where
        F: Fn(&Value, &Context) -> Result<Value, HandlerError> + Send + Sync + 'static,
    {
        self.subscriptions.retain(|s| s.event != sub.event);
        self.events.insert(sub.event.clone(), Arc::new(f));
        self.subscriptions.push(sub);
        self
    }

    /// A handler for an event the hook subscribes to later, with
    /// [`Context::subscribe`](crate::Context::subscribe).
    pub fn handler<F>(&mut self, event: &str, f: F) -> &mut Hook
    where
        F: Fn(&Value, &Context) -> Result<Value, HandlerError> + Send + Sync + 'static,
    {
        self.events.insert(event.to_string(), Arc::new(f));
        self
    }

    /// A tool: `parameters` is its JSON Schema (an object schema); `f(args, ctx)` runs it.
    pub fn tool<F, O>(
        &mut self,
        name: &str,
        description: &str,
        parameters: Value,
        f: F,
    ) -> &mut Hook
    where
        F: Fn(Value, &Context) -> Result<O, HandlerError> + Send + Sync + 'static,
        O: Into<ToolOutput>,
    {
        self.tool_decl(
            ToolDecl {
                name: name.to_string(),
                description: description.to_string(),
                parameters,
                prompt_snippet: None,
                prompt_guidelines: Vec::new(),
                sequential: false,
                exposure: None,
                output_schema: None,
            },
            f,
        )
    }

    /// [`tool`](Self::tool) with every field of the declaration.
    pub fn tool_decl<F, O>(&mut self, decl: ToolDecl, f: F) -> &mut Hook
    where
        F: Fn(Value, &Context) -> Result<O, HandlerError> + Send + Sync + 'static,
        O: Into<ToolOutput>,
    {
        self.tool_fns.insert(
            decl.name.clone(),
            Arc::new(move |args, ctx| f(args, ctx).map(Into::into)),
        );
        self.tools.retain(|t| t.name != decl.name);
        self.tools.push(decl);
        self
    }

    /// `/name`: `f(args, ctx)` returns the text to show (a `String`, `&str`, or `()`).
    pub fn command<F, O>(&mut self, name: &str, description: &str, f: F) -> &mut Hook
    where
        F: Fn(&str, &Context) -> Result<O, HandlerError> + Send + Sync + 'static,
        O: Into<CommandOutput>,
    {
        self.command_fns.insert(
            name.to_string(),
            Arc::new(move |args, ctx| f(args, ctx).map(Into::into)),
        );
        self.commands.retain(|c| c.name != name);
        self.commands.push(CommandDecl {
            name: name.to_string(),
            description: description.to_string(),
            completions: false,
        });
        self
    }

    /// Completions for the arguments of the command `name` (register the command first):
    /// `f(prefix)` returns strings or `{value, description}` objects. It runs on the reader,
    /// so it must answer quickly.
    pub fn completions<F>(&mut self, name: &str, f: F) -> &mut Hook
    where
        F: Fn(&str) -> Vec<Value> + Send + Sync + 'static,
    {
        for c in self.commands.iter_mut().filter(|c| c.name == name) {
            c.completions = true;
        }
        self.completers.insert(name.to_string(), Arc::new(f));
        self
    }

    /// A command-line flag `--name` (`kind`: `boolean` or `string`); its value is in
    /// `hello.flags`.
    pub fn flag(
        &mut self,
        name: &str,
        description: &str,
        kind: &str,
        default: Option<Value>,
    ) -> &mut Hook {
        self.flags.push(FlagDecl {
            name: name.to_string(),
            description: description.to_string(),
            kind: kind.to_string(),
            default,
        });
        self
    }

    /// Runs `f(hello)` after `hello` arrives, before `register` is sent.
    pub fn on_hello(&mut self, f: impl FnOnce(&Hello) + Send + 'static) -> &mut Hook {
        self.on_hello.push(Box::new(f));
        self
    }

    /// Runs `f(reason)` before the hook exits: the `shutdown` reason, or `eof`.
    pub fn on_shutdown(&mut self, f: impl FnOnce(&str) + Send + 'static) -> &mut Hook {
        self.on_shutdown.push(Box::new(f));
        self
    }

    /// Serves on stdin/stdout until EOF or `shutdown`, then exits the process: 0, or 1 after
    /// a line on stderr when the stream broke. Write diagnostics to stderr (`eprintln!`):
    /// stdout carries only frames.
    pub fn run(self) -> ! {
        let name = self.name.clone();
        let stdout: Box<dyn Write + Send> = Box::new(std::io::stdout());
        let code = match self.serve(std::io::stdin(), stdout) {
            Ok(_) => 0,
            Err(e) => {
                eprintln!("[{name}] {e}");
                1
            }
        };
        // Workers still blocked in a handler are abandoned, as the host expects an exit.
        std::process::exit(code)
    }

    /// Serves on any pair of streams; returns why it stopped (the `shutdown` reason, or `eof`).
    pub fn serve(
        mut self,
        input: impl Read,
        output: Box<dyn Write + Send>,
    ) -> Result<String, RunError> {
        let mut reader = FrameReader::new(BufReader::with_capacity(64 * 1024, input));
        let hello = match reader.read_message::<HostMessage>()? {
            None => return Ok("eof".into()),
            Some(Incoming::Message(HostMessage::Hello(h))) => *h,
            Some(Incoming::Message(other)) => return Err(RunError::NoHello(kind_of(&other))),
            Some(Incoming::Unrecognized { value, .. }) => {
                let t = Incoming::<HostMessage>::unrecognized_type(&value).unwrap_or("?");
                return Err(RunError::NoHello(format!("`{t}`")));
            }
        };
        let version = hello
            .protocol_versions
            .iter()
            .copied()
            .filter(|v| SUPPORTED_VERSIONS.contains(v))
            .max()
            .ok_or_else(|| RunError::NoCommonVersion {
                offered: hello.protocol_versions.clone(),
                supported: SUPPORTED_VERSIONS.to_vec(),
            })?;
        for f in std::mem::take(&mut self.on_hello) {
            f(&hello);
        }
        let register = Register {
            protocol_version: version,
            name: self.name.clone(),
            version: self.version.clone(),
            subscriptions: std::mem::take(&mut self.subscriptions),
            tools: std::mem::take(&mut self.tools),
            commands: std::mem::take(&mut self.commands),
            flags: std::mem::take(&mut self.flags),
            fail: self.fail,
        };
        let conn = Arc::new(Conn::new(
            FrameWriter::new(output),
            self.name.clone(),
            hello,
        ));
        conn.send(&HookMessage::Register(register));
        let handlers = Arc::new(Handlers {
            events: std::mem::take(&mut self.events),
            inline: std::mem::take(&mut self.inline),
            tools: std::mem::take(&mut self.tool_fns),
            commands: std::mem::take(&mut self.command_fns),
            completers: std::mem::take(&mut self.completers),
        });
        let workers = pool::Pool::new();
        let (notify_tx, notify_done) = notify_thread();
        let outcome = loop {
            if conn.is_closed() {
                break Ok("host gone".to_string());
            }
            let msg = match reader.read_message::<HostMessage>() {
                Ok(None) => break Ok("eof".to_string()),
                Ok(Some(Incoming::Message(m))) => m,
                Ok(Some(Incoming::Unrecognized { value, reason })) => {
                    eprintln!("[{}] ignoring a message: {reason}: {value}", self.name);
                    continue;
                }
                Err(e) => break Err(RunError::Frame(e)),
            };
            match msg {
                HostMessage::Shutdown { reason } => break Ok(reason),
                HostMessage::Cancel { id } => {
                    if let Some(flag) = lock(&conn.inflight).get(&id) {
                        flag.cancel();
                    }
                }
                HostMessage::Result(r) => conn.answer(r),
                // Deltas of a `model.complete` in flight: [`Context::complete`] waits for the
                // whole message, which the result carries.
                HostMessage::CallProgress(_) => {}
                HostMessage::Hello(_) => {}
                HostMessage::Complete(c) => {
                    let reply = match handlers.completers.get(&c.name) {
                        Some(f) => match catch_unwind(AssertUnwindSafe(|| f(&c.prefix))) {
                            Ok(items) => {
                                json!({"type": "reply", "id": c.id, "result": {"items": items}})
                            }
                            Err(_) => error_reply(c.id, "the completer panicked"),
                        },
                        None => error_reply(c.id, &format!("no completions for {:?}", c.name)),
                    };
                    conn.send(&reply);
                }
                HostMessage::Event(e) => {
                    let Some(f) = handlers.events.get(&e.name).cloned() else {
                        if let Some(id) = e.id {
                            // Not subscribed (a dispatch begun before an unsubscribe).
                            conn.send(&json!({"type": "reply", "id": id, "result": null}));
                        }
                        continue;
                    };
                    let inline = handlers.inline.contains(&e.name);
                    let ctx = context(&conn, e.id, e.name, e.deadline_ms, None, false);
                    match e.id {
                        None => {
                            let _ = notify_tx.send((f, e.payload, ctx));
                        }
                        Some(id) if inline => {
                            let out = guarded(|| f(&e.payload, &ctx));
                            finish(&ctx, id, out);
                        }
                        Some(id) => workers.run(move || {
                            let out = guarded(|| f(&e.payload, &ctx));
                            finish(&ctx, id, out);
                        }),
                    }
                }
                HostMessage::ToolExecute(t) => {
                    let Some(f) = handlers.tools.get(&t.tool).cloned() else {
                        conn.send(&error_reply(t.id, &format!("unknown tool {:?}", t.tool)));
                        continue;
                    };
                    let ctx = context(
                        &conn,
                        Some(t.id),
                        t.tool,
                        t.deadline_ms,
                        Some(t.call_id),
                        true,
                    );
                    workers.run(move || {
                        let out = guarded(|| {
                            f(t.arguments, &ctx).and_then(|o| Ok(serde_json::to_value(o)?))
                        });
                        finish(&ctx, t.id, out);
                    });
                }
                HostMessage::Command(c) => {
                    let Some(f) = handlers.commands.get(&c.name).cloned() else {
                        conn.send(&error_reply(c.id, &format!("unknown command {:?}", c.name)));
                        continue;
                    };
                    let ctx = context(&conn, Some(c.id), c.name, c.deadline_ms, None, false);
                    workers.run(move || {
                        let out = guarded(|| f(&c.args, &ctx).map(|o| o.to_result()));
                        finish(&ctx, c.id, out);
                    });
                }
            }
        };
        // Queued notifications finish first (an audit log wants its last lines), briefly.
        drop(notify_tx);
        let _ = notify_done.recv_timeout(Duration::from_millis(1500));
        conn.close();
        let reason = match &outcome {
            Ok(r) => r.clone(),
            Err(_) => "error".to_string(),
        };
        for f in std::mem::take(&mut self.on_shutdown) {
            f(&reason);
        }
        outcome
    }
}

#[cfg(test)]
mod tests;
