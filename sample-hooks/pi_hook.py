"""pi_hook: a dependency-free helper for writing pi hooks in Python 3 (stdlib only).

A pi hook is any executable that speaks length-prefixed JSON over stdin/stdout: every frame is
a 4-byte big-endian unsigned length followed by that many bytes of UTF-8 JSON (one object).
The host writes ``hello`` first; the hook answers ``register``; then the host sends ``event``,
``tool_execute``, ``command``, ``cancel``, ``result`` and ``shutdown`` messages and the hook
answers with ``reply``, ``progress``, ``call`` and ``log`` (and changes what it listens to
with ``subscribe`` / ``unsubscribe``: ``hook.subscribe(event, handler)``).

Put this file next to your hook and import it::

    #!/usr/bin/env python3
    import os, sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from pi_hook import Hook, block, allow

    hook = Hook("my-policy", version="1.0")

    @hook.on("tool_call", tools=["bash"])
    def gate(payload, ctx):
        if "sudo" in payload["input"].get("command", ""):
            return block("sudo is not allowed here.")
        return allow()

    @hook.tool("hello", "Say hello", {"type": "object", "properties": {}})
    def hello(args, ctx):
        ctx.progress("thinking...")
        return "hello"

    if __name__ == "__main__":
        hook.run()

Threading model: the main thread only reads frames. Requests (events with an ``id``,
``tool_execute``, ``command``) each run on a worker thread, so a handler may block in
``hook.call(...)`` while the main thread keeps reading the host's ``result``. Notify events
(events without an ``id``) run in arrival order on one dedicated thread. A handler that decides
from its payload alone can be answered on the main thread instead (``@hook.on(...,
inline=True)``): no thread is started per request, which is most of a small handler's round
trip. Frames are written
atomically under a lock and flushed. stdout carries only frames; use ``hook.log(...)`` or
stderr for diagnostics (importing this module points ``sys.stdout`` at stderr, so a stray
``print`` cannot corrupt the frame stream). The process exits 0 on stdin EOF or ``shutdown``.
"""

import inspect
import json
import os
import queue
import struct
import sys
import threading
import traceback

__all__ = [
    "Hook",
    "Context",
    "HostError",
    "block",
    "patch",
    "allow",
    "transform",
    "handled",
    "text",
    "tool_result",
]

PROTOCOL_VERSIONS = (1,)

# stdout carries only frames. From the moment this module is imported, print() and anything
# else writing to sys.stdout goes to stderr; frames go to the real stdout's binary buffer.
_FRAME_OUT = sys.stdout.buffer if sys.stdout is not None else None
sys.stdout = sys.stderr
MAX_FRAME = 16 * 1024 * 1024


# ------------------------------------------------------------------------------------------
# Reply helpers
# ------------------------------------------------------------------------------------------


def block(reason):
    """Gate reply (tool_call): do not run the tool; `reason` goes to the model."""
    return {"block": True, "reason": str(reason)}


def patch(obj):
    """Gate reply (tool_call): an RFC 7386 merge patch of the tool input (null deletes a key)."""
    return {"patch": obj}


def allow():
    """Gate reply (tool_call): no objection. Also a fine empty reply for any event."""
    return {}


def transform(new_text):
    """Input reply (input): replace the user's text."""
    return {"action": "transform", "text": str(new_text)}


def handled():
    """Input reply (input): the hook handled the input; the agent does nothing with it."""
    return {"action": "handled"}


def text(s):
    """One text content block."""
    return {"type": "text", "text": str(s)}


def tool_result(content, details=None):
    """A tool result with details: `content` is a string or a list of content blocks."""
    out = {"content": _content(content)}
    if details is not None:
        out["details"] = details
    return out


def _content(value):
    if value is None:
        return []
    if isinstance(value, str):
        return [text(value)]
    if isinstance(value, dict):
        return [value]
    return list(value)


class HostError(Exception):
    """The host answered a `call` with an error (`code`: unavailable, invalid_params,
    unknown_method, failed, cancelled; or `closed` when the connection ended)."""

    def __init__(self, code, message):
        super().__init__("%s: %s" % (code, message))
        self.code = code
        self.message = message


class _Cancelled(Exception):
    pass


# ------------------------------------------------------------------------------------------
# Context passed to handlers
# ------------------------------------------------------------------------------------------


class Context(object):
    """What a handler knows about the request it serves."""

    def __init__(self, hook, kind, request_id, name, payload, deadline_ms=None, call_id=None):
        self.hook = hook
        self.kind = kind  # "event", "tool_execute" or "command"
        self.id = request_id  # None for notify events
        self.name = name  # event, tool or command name
        self.payload = payload
        self.deadline_ms = deadline_ms
        self.call_id = call_id  # tool_execute only
        self._cancel = threading.Event()

    @property
    def cancelled(self):
        """True once the host sent `cancel` for this request (or shut down)."""
        return self._cancel.is_set()

    def check_cancelled(self):
        """Raise if cancelled (the reply is then dropped: the host no longer waits for it)."""
        if self._cancel.is_set():
            raise _Cancelled()

    def wait_cancelled(self, timeout=None):
        """Sleep up to `timeout` seconds, waking early on cancel. Returns `cancelled`."""
        return self._cancel.wait(timeout)

    def progress(self, content, details=None):
        """Stream partial output of a tool (cumulative: it replaces the previous progress)."""
        if self.kind != "tool_execute" or self.id is None:
            return
        msg = {"type": "progress", "id": self.id, "content": _content(content)}
        if details is not None:
            msg["details"] = details
        self.hook._send(msg)

    def call(self, method, params=None, timeout=None):
        return self.hook.call(method, params, timeout)

    def set_theme(self, name):
        return self.hook.set_theme(name)

    def complete(self, params, on_event=None, timeout=None, cancel=None):
        return self.hook.complete(params, on_event, timeout, cancel)

    @property
    def config(self):
        return self.hook.config

    @property
    def cwd(self):
        return self.hook.cwd


# ------------------------------------------------------------------------------------------
# The hook
# ------------------------------------------------------------------------------------------


class Hook(object):
    def __init__(self, name, version=None, fail=None):
        self.name = name
        self.version = version
        self.fail = fail  # "closed" | "open" | None
        self.hello = {}
        self.config = {}
        self.protocol_version = None
        self._subs = []  # (event, tools, deadline_ms)
        self._event_handlers = {}
        self._tools = []
        self._tool_handlers = {}
        self._later = {}
        self._commands = []
        self._command_handlers = {}
        self._completers = {}
        self._flags = []
        self._on_shutdown = []
        self._on_hello = []
        self._ordered = set()
        self._inline = set()
        self._arity = {}  # handler -> whether it takes (payload, ctx)
        self._write_lock = threading.Lock()
        self._out = None
        self._in = None
        self._calls = {}  # id -> [threading.Event, result]
        self._calls_lock = threading.Lock()
        self._next_call = 0
        self._inflight = {}  # request id -> Context
        self._inflight_lock = threading.Lock()
        self._notify_q = queue.Queue()
        self._closed = threading.Event()
        self._notify_thread = None
        self._shutdown_reason = "eof"

    # -- registration -----------------------------------------------------------------------

    def on(self, event, tools=None, deadline_ms=None, ordered=False, inline=False):
        """Subscribe to an event: `handler(payload, ctx)` returns the reply result (a dict, or
        None for an empty result). Notify events are not replied to; their return is ignored.

        Notify events run one at a time, in arrival order, on one thread. Events that expect
        a reply run concurrently on worker threads, unless `ordered=True`: then they join the
        notify events' thread and queue (useful for a logger that wants one total order), or
        `inline=True`: then they are answered on the thread that reads the host's messages,
        one at a time, without starting a thread per request (most of a quick gate's round
        trip). Only for handlers that decide from the payload alone: while one runs, nothing
        else is read, so `hook.call` from it raises and a `cancel` is seen only once it
        returned."""
        if ordered and inline:
            raise ValueError("an event is either ordered or inline, not both")

        def deco(fn):
            if event in self._event_handlers:
                raise ValueError("already subscribed to %r (one subscription per event)" % event)
            self._event_handlers[event] = fn
            if ordered:
                self._ordered.add(event)
            if inline:
                self._inline.add(event)
            self._subs.append((event, list(tools) if tools else None, deadline_ms))
            return fn

        return deco

    def tool(self, name, description, parameters=None, prompt_snippet=None,
             prompt_guidelines=None, sequential=False, exposure=None, output_schema=None,
             later=False):
        """Register a tool: `handler(args, ctx)` returns a string, a list of content blocks,
        or `tool_result(content, details)` (a dict may also carry `structured_content`,
        `usage` and `terminate`). Raising an exception makes the call fail. `exposure` is
        direct (default), model-only, deferred or hidden. With `later=True` the tool is not in
        `register`: `register_tools(name, ...)` adds it while pi runs (`tools.register`)."""

        def deco(fn):
            decl = {
                "name": name,
                "description": description,
                "parameters": parameters or {"type": "object", "properties": {}},
                "sequential": bool(sequential),
            }
            if prompt_snippet:
                decl["prompt_snippet"] = prompt_snippet
            if prompt_guidelines:
                decl["prompt_guidelines"] = list(prompt_guidelines)
            if exposure:
                decl["exposure"] = exposure
            if output_schema is not None:
                decl["output_schema"] = output_schema
            if later:
                self._later[name] = decl
            else:
                self._tools.append(decl)
            self._tool_handlers[name] = fn
            return fn

        return deco

    def register_tools(self, *names, timeout=None):
        """`tools.register` the tools declared with `later=True`; returns the host's answer."""
        return self.call("tools.register", {"tools": [self._later[n] for n in names]},
                         timeout=timeout)

    def command(self, name, description="", complete=None):
        """Register `/name`: `handler(args: str, ctx)`; a string return becomes
        `{"text": ...}`, a dict is sent as is, None as `{}`. With `complete`, the editor asks
        `complete(prefix: str)` for what may follow `/name ` and shows the strings (or
        `{"value", "description"}` dicts) it returns; it runs on the reader thread, so it must
        answer quickly."""

        def deco(fn):
            decl = {"name": name, "description": description}
            if complete is not None:
                decl["completions"] = True
                self._completers[name] = complete
            self._commands.append(decl)
            self._command_handlers[name] = fn
            return fn

        return deco

    def flag(self, name, description="", type="boolean", default=None):
        decl = {"name": name, "description": description, "type": type}
        if default is not None:
            decl["default"] = default
        self._flags.append(decl)

    def on_hello(self, fn):
        """Run `fn(hello)` after `hello` arrives and before `register` is sent: the place to
        add subscriptions, tools or commands that depend on `hook.config`."""
        self._on_hello.append(fn)
        return fn

    def on_shutdown(self, fn):
        """Run `fn(reason)` before exiting (on `shutdown` or stdin EOF)."""
        self._on_shutdown.append(fn)
        return fn

    # -- properties from hello --------------------------------------------------------------

    @property
    def cwd(self):
        return os.environ.get("PI_PROJECT_DIR") or self.hello.get("cwd") or os.getcwd()

    @property
    def capabilities(self):
        return self.hello.get("capabilities") or {}

    # -- output -----------------------------------------------------------------------------

    def _send(self, msg):
        data = json.dumps(msg, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        frame = struct.pack(">I", len(data)) + data
        with self._write_lock:
            if self._out is None:
                return
            try:
                self._out.write(frame)
                self._out.flush()
            except (BrokenPipeError, OSError, ValueError):
                # The host is gone: nothing to report to; exit quietly.
                self._out = None
                self._closed.set()

    def log(self, message, level="info"):
        """A `log` frame: recorded by the host under this hook's name."""
        self._send({"type": "log", "level": level, "message": str(message)})

    def call(self, method, params=None, timeout=None):
        """Ask the host for something and wait for its answer. Returns `value`; raises
        HostError on an error answer. Call it from handlers (worker threads), never from the
        main thread before `run()`."""
        msg = {"type": "call", "method": method, "params": params if params is not None else {}}
        return self._exchange(msg, method, timeout)

    def set_theme(self, name):
        """`ui.set_theme`: switch pi's terminal UI to the theme called `name` (it becomes the
        user's `theme` setting). Returns `(True, None)`, or `(False, why)` — an unknown name
        (the message lists the themes there are), or a mode without a terminal UI."""
        r = self.call("ui.set_theme", {"name": name})
        return bool(r.get("success")), r.get("error")

    def complete(self, params, on_event=None, timeout=None, cancel=None):
        """`model.complete`: one model request through pi's providers and keys (the key stays
        in pi). `params`: `{messages, model?: {provider, id}, system_prompt?, tools?,
        max_tokens?, thinking?}`. `on_event(event)` gets each streamed `text_delta` /
        `thinking_delta` (on the reader thread: keep it short). `cancel`, a threading.Event,
        withdraws the request when set (`call_cancel`). Returns the assistant message in
        pi-ai's shape; raises HostError (`cancelled` when withdrawn or pi aborted the run)."""
        msg = {"type": "call", "method": "model.complete", "params": params}
        return self._exchange(msg, "model.complete", timeout, on_event, cancel)["message"]

    def subscribe(self, event, handler, tools=None, deadline_ms=None, timeout=None):
        """Start receiving `event` from now on (after `register`): `handler(payload, ctx)` as
        with `on`. A subscription to an event the hook already has is replaced (handler,
        filter and deadline). Returns the hook's subscriptions as the host now has them;
        raises HostError (`invalid_params`) when the host refuses the change (an unknown
        event, a bad filter, a required hook's registered subscription), and nothing changed.
        Call it from handlers, like `call`."""
        sub = {"event": event}
        if tools:
            sub["tools"] = list(tools)
        if deadline_ms is not None:
            sub["deadline_ms"] = int(deadline_ms)
        previous = self._event_handlers.get(event)
        # Installed first: the host may send the event as soon as it applied the change.
        self._event_handlers[event] = handler
        try:
            value = self._exchange({"type": "subscribe", "subscriptions": [sub]}, "subscribe",
                                   timeout)
        except HostError:
            if previous is None:
                self._event_handlers.pop(event, None)
            else:
                self._event_handlers[event] = previous
            raise
        return value["subscriptions"]

    def unsubscribe(self, *events, **kwargs):
        """Stop receiving `events` for everything dispatched from now on. Returns the hook's
        subscriptions as the host now has them; raises HostError when the host refuses.
        Handlers stay installed: an event whose dispatch had already begun may still arrive."""
        value = self._exchange({"type": "unsubscribe", "events": list(events)}, "unsubscribe",
                               kwargs.get("timeout"))
        return value["subscriptions"]

    def _exchange(self, msg, what, timeout, on_progress=None, cancel=None):
        """Send `msg` with a fresh id from the call id space and wait for its `result`
        (`on_progress` gets the `event` of each `call_progress` for it meanwhile)."""
        if threading.current_thread() is threading.main_thread() and self._in is not None:
            raise RuntimeError("hook.%s from the reader thread would deadlock" % what)
        with self._calls_lock:
            self._next_call += 1
            cid = self._next_call
            slot = [threading.Event(), None, on_progress]
            self._calls[cid] = slot
        msg = dict(msg, id=cid)
        self._send(msg)
        if cancel is not None:
            def withdraw():
                while not slot[0].is_set():
                    if cancel.wait(0.05):
                        if not slot[0].is_set():
                            self._send({"type": "call_cancel", "id": cid})
                        return
            threading.Thread(target=withdraw, daemon=True).start()
        ok = slot[0].wait(timeout)
        with self._calls_lock:
            self._calls.pop(cid, None)
        if not ok:
            raise HostError("timeout", "no answer to %s within %ss" % (what, timeout))
        res = slot[1]
        if res is None:
            raise HostError("closed", "the host connection ended")
        if res.get("error") is not None:
            err = res["error"]
            if isinstance(err, dict):
                raise HostError(err.get("code", "failed"), err.get("message", ""))
            raise HostError("failed", str(err))
        return res.get("value")

    # -- input ------------------------------------------------------------------------------

    def _read_exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self._in.read(n - len(buf))
            if not chunk:
                return None
            buf += chunk
        return buf

    def _read_frame(self):
        head = self._read_exact(4)
        if head is None:
            return None
        (length,) = struct.unpack(">I", head)
        if length > MAX_FRAME:
            raise ValueError("frame of %d bytes exceeds the maximum" % length)
        body = self._read_exact(length)
        if body is None:
            return None
        return json.loads(body.decode("utf-8"))

    # -- dispatch ---------------------------------------------------------------------------

    def _register_msg(self):
        offered = self.hello.get("protocol_versions") or [1]
        common = [v for v in offered if v in PROTOCOL_VERSIONS]
        self.protocol_version = max(common) if common else max(offered)
        subs = []
        for event, tools, deadline in self._subs:
            s = {"event": event}
            if tools:
                s["tools"] = tools
            if deadline is not None:
                s["deadline_ms"] = int(deadline)
            subs.append(s)
        msg = {
            "type": "register",
            "protocol_version": self.protocol_version,
            "name": self.name,
            "subscriptions": subs,
            "tools": self._tools,
            "commands": self._commands,
            "flags": self._flags,
        }
        if self.version is not None:
            msg["version"] = str(self.version)
        if self.fail is not None:
            msg["fail"] = self.fail
        return msg

    def _invoke(self, fn, first, ctx):
        # How many arguments a handler takes is looked up once: inspect.signature costs more
        # than a small handler's own work.
        arity = self._arity.get(fn)
        if arity is None:
            arity = 2
            try:
                params = inspect.signature(fn).parameters.values()
                positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                              p.POSITIONAL_OR_KEYWORD)]
                varargs = any(p.kind == p.VAR_POSITIONAL for p in params)
                if not varargs and len(positional) < 2:
                    arity = len(positional)
            except (TypeError, ValueError):
                pass
            self._arity[fn] = arity
        if arity == 2:
            return fn(first, ctx)
        return fn(first) if arity == 1 else fn()

    def _serve(self, ctx, fn, first, shape):
        """Run one request on a worker thread and reply."""
        try:
            out = self._invoke(fn, first, ctx)
            if shape == "tool":
                if isinstance(out, dict) and "content" in out:
                    result = dict(out)
                    result["content"] = _content(out.get("content"))
                else:
                    result = {"content": _content(out)}
            elif shape == "command":
                if out is None:
                    result = {}
                elif isinstance(out, str):
                    result = {"text": out}
                else:
                    result = out
            else:
                result = {} if out is None else out
            reply = {"type": "reply", "id": ctx.id, "result": result}
        except _Cancelled:
            reply = None
        except Exception as e:  # noqa: BLE001 - a handler failure is the request's error
            sys.stderr.write("[%s] handler %s failed:\n%s" % (self.name, ctx.name,
                                                               traceback.format_exc()))
            sys.stderr.flush()
            reply = {"type": "reply", "id": ctx.id, "error": "%s: %s" % (type(e).__name__, e)
                     if str(e) else type(e).__name__}
        finally:
            with self._inflight_lock:
                self._inflight.pop(ctx.id, None)
        if reply is not None and not ctx.cancelled:
            self._send(reply)

    def _start_request(self, ctx, fn, first, shape):
        with self._inflight_lock:
            self._inflight[ctx.id] = ctx
        t = threading.Thread(target=self._serve, args=(ctx, fn, first, shape),
                             name="pi-hook-%s" % ctx.id, daemon=True)
        t.start()

    def _notify_worker(self):
        while True:
            item = self._notify_q.get()
            if item is None:
                return
            fn, payload, ctx = item
            if ctx.id is not None:
                self._serve(ctx, fn, payload, "event")
                continue
            try:
                self._invoke(fn, payload, ctx)
            except Exception:  # noqa: BLE001
                sys.stderr.write("[%s] notify handler %s failed:\n%s"
                                 % (self.name, ctx.name, traceback.format_exc()))
                sys.stderr.flush()

    def _error_reply(self, rid, message):
        self._send({"type": "reply", "id": rid, "error": message})

    def _handle(self, msg):
        """Handle one message; returns False to stop."""
        if not isinstance(msg, dict):
            return True
        t = msg.get("type")
        if t == "event":
            name = msg.get("name")
            rid = msg.get("id")
            payload = msg.get("payload")
            fn = self._event_handlers.get(name)
            ctx = Context(self, "event", rid, name, payload, msg.get("deadline_ms"))
            if rid is None:
                if fn is not None:
                    self._notify_q.put((fn, payload, ctx))
            elif fn is None:
                # Not subscribed (should not happen): an empty result changes nothing.
                self._send({"type": "reply", "id": rid, "result": {}})
            elif name in self._ordered:
                with self._inflight_lock:
                    self._inflight[rid] = ctx
                self._notify_q.put((fn, payload, ctx))
            elif name in self._inline:
                with self._inflight_lock:
                    self._inflight[rid] = ctx
                self._serve(ctx, fn, payload, "event")
            else:
                self._start_request(ctx, fn, payload, "event")
        elif t == "tool_execute":
            rid = msg.get("id")
            tool = msg.get("tool")
            fn = self._tool_handlers.get(tool)
            if fn is None:
                self._error_reply(rid, "unknown tool %r" % tool)
            else:
                ctx = Context(self, "tool_execute", rid, tool, msg.get("arguments"),
                              msg.get("deadline_ms"), msg.get("call_id"))
                self._start_request(ctx, fn, msg.get("arguments") or {}, "tool")
        elif t == "command":
            rid = msg.get("id")
            name = msg.get("name")
            fn = self._command_handlers.get(name)
            if fn is None:
                self._error_reply(rid, "unknown command %r" % name)
            else:
                ctx = Context(self, "command", rid, name, msg.get("args", ""))
                self._start_request(ctx, fn, msg.get("args", "") or "", "command")
        elif t == "complete":
            rid = msg.get("id")
            fn = self._completers.get(msg.get("name"))
            if fn is None:
                self._error_reply(rid, "no completions for %r" % msg.get("name"))
            else:
                try:
                    items = list(fn(msg.get("prefix", "") or ""))
                except Exception as e:  # a completer's failure is only an empty list
                    self._error_reply(rid, "completion failed: %s" % e)
                else:
                    self._send({"type": "reply", "id": rid, "result": {"items": items}})
        elif t == "cancel":
            with self._inflight_lock:
                ctx = self._inflight.get(msg.get("id"))
            if ctx is not None:
                ctx._cancel.set()
        elif t == "call_progress":
            with self._calls_lock:
                slot = self._calls.get(msg.get("id"))
            if slot is not None and slot[2] is not None:
                try:
                    slot[2](msg.get("event"))
                except Exception as e:  # a progress handler must not stop the reader
                    self.log("a model.complete progress handler raised: %s" % e, "warn")
        elif t == "result":
            with self._calls_lock:
                slot = self._calls.get(msg.get("id"))
            if slot is not None:
                slot[1] = msg
                slot[0].set()
        elif t == "shutdown":
            self._shutdown_reason = msg.get("reason", "shutdown")
            return False
        elif t == "hello":
            pass  # a second hello is ignored
        else:
            sys.stderr.write("[%s] ignoring unknown message type %r\n" % (self.name, t))
            sys.stderr.flush()
        return True

    def _finish(self, reason):
        with self._inflight_lock:
            for ctx in self._inflight.values():
                ctx._cancel.set()
        with self._calls_lock:
            for slot in self._calls.values():
                slot[0].set()
        self._notify_q.put(None)
        # Let notify handlers already queued finish (an audit log wants its last lines).
        if self._notify_thread is not None:
            self._notify_thread.join(1.5)
        for fn in self._on_shutdown:
            try:
                fn(reason)
            except Exception:  # noqa: BLE001
                traceback.print_exc(file=sys.stderr)

    def run(self):
        """Handshake, then serve until stdin EOF or `shutdown`. Exits the process with 0."""
        self._in = sys.stdin.buffer
        self._out = _FRAME_OUT
        self._shutdown_reason = "eof"
        code = 0
        try:
            hello = self._read_frame()
            if hello is None:
                sys.exit(0)
            if hello.get("type") != "hello":
                sys.stderr.write("[%s] expected hello, got %r\n" % (self.name, hello.get("type")))
            self.hello = hello
            self.config = hello.get("config") or {}
            if not isinstance(self.config, dict):
                self.config = {}
            for fn in self._on_hello:
                fn(hello)
            self._send(self._register_msg())
            self._notify_thread = threading.Thread(target=self._notify_worker,
                                                   name="pi-hook-notify", daemon=True)
            self._notify_thread.start()
            while not self._closed.is_set():
                msg = self._read_frame()
                if msg is None or not self._handle(msg):
                    break
        except KeyboardInterrupt:
            pass
        except (ValueError, UnicodeDecodeError) as e:
            sys.stderr.write("[%s] framing error: %s\n" % (self.name, e))
            code = 1
        self._finish(self._shutdown_reason)
        sys.stderr.flush()
        # Daemon worker threads are abandoned; exit at once, without waiting on them.
        os._exit(code)
