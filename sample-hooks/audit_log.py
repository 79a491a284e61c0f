#!/usr/bin/env python3
"""audit_log: append one JSON line per agent event to an audit file.

By default it subscribes to the notify events agent_start, agent_end, turn_start,
tool_execution_start and tool_execution_end (no reply; they never slow the agent down), to
session_start and session_shutdown (awaited notifies: acknowledged with an empty reply), and to
message_end (a chain event: it answers with an empty result, which leaves the message
unchanged).

Each line: {"ts": ISO-8601 UTC, "event": name, "session_id": ..., "summary": {...}} where the
summary keeps the useful fields of the payload (tool name, call id, is_error, the bash command
or the path of a file tool, stop reason, message role) and truncates long strings.

The file: env PI_AUDIT_LOG, else config `path`, else `.pi/audit.jsonl` in the project
directory (relative paths are relative to the project directory). Config `events`: a list of
event names to subscribe to instead of the default set. Config `max_field` (default 200):
string truncation.

Run: pi --hook sample-hooks/audit_log.py
"""

import datetime
import json
import os
import sys
import threading

sys.dont_write_bytecode = True  # keep __pycache__ out of the hooks directory
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pi_hook import Hook  # noqa: E402

hook = Hook("audit_log", version="1.0.0", fail="open")

NOTIFY = ["agent_start", "agent_end", "turn_start", "tool_execution_start",
          "tool_execution_end"]
AWAITED = ["session_start", "session_shutdown"]
CHAIN = ["message_end"]

_lock = threading.Lock()
_file = None


def log_path():
    p = os.environ.get("PI_AUDIT_LOG") or hook.config.get("path") or os.path.join(".pi",
                                                                                 "audit.jsonl")
    p = os.path.expanduser(p)
    if not os.path.isabs(p):
        p = os.path.join(hook.cwd, p)
    return p


def clip(v, n=None):
    n = n or int(hook.config.get("max_field") or 200)
    if isinstance(v, str):
        return v if len(v) <= n else v[:n] + "...(%d chars)" % len(v)
    return v


def text_of(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content
                         if isinstance(b, dict) and b.get("type") == "text")
    return ""


def summarize(name, p):
    if not isinstance(p, dict):
        return {}
    s = {}
    for key in ("tool_call_id", "tool_name", "is_error", "turn_index", "reason", "stop_reason",
                "cwd"):
        if key in p:
            s[key] = clip(p[key])
    args = p.get("args") or p.get("input")
    if isinstance(args, dict):
        for key in ("command", "path", "pattern"):
            if key in args:
                s[key] = clip(args[key])
    if "result" in p:
        r = p["result"]
        content = r.get("content") if isinstance(r, dict) else r
        s["result"] = clip(text_of(content))
    msg = p.get("message")
    if isinstance(msg, dict):
        s["role"] = msg.get("role")
        if msg.get("stop_reason") or msg.get("stopReason"):
            s["stop_reason"] = msg.get("stop_reason") or msg.get("stopReason")
        s["text"] = clip(text_of(msg.get("content")))
    msgs = p.get("messages")
    if isinstance(msgs, list):
        s["messages"] = len(msgs)
    return s


def append(name, payload):
    global _file
    line = {
        "ts": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds"),
        "event": name,
        "session_id": hook.hello.get("session_id") or os.environ.get("PI_SESSION_ID"),
        "summary": summarize(name, payload),
    }
    data = json.dumps(line, ensure_ascii=False, default=str) + "\n"
    with _lock:
        if _file is None:
            path = log_path()
            os.makedirs(os.path.dirname(path), exist_ok=True)
            _file = open(path, "a", encoding="utf-8")
        _file.write(data)
        _file.flush()


def subscribe(name):
    @hook.on(name, ordered=True)  # one thread, arrival order: the file's lines stay in order
    def handler(payload, ctx):
        try:
            append(name, payload)
        except OSError as e:
            hook.log("cannot write the audit log: %s" % e, level="error")
        return {}  # empty reply for awaited/chain events; ignored for notify events
    return handler


@hook.on_hello
def _subscribe(hello):
    events = hook.config.get("events")
    if not isinstance(events, list) or not events:
        events = NOTIFY + AWAITED + CHAIN
    for name in dict.fromkeys(str(e) for e in events):
        subscribe(name)


@hook.on_shutdown
def _close(reason):
    with _lock:
        if _file is not None:
            _file.close()


if __name__ == "__main__":
    hook.run()
