"""The 50-call run over HTTP and its physical floor (imported by bench/run.py, figure `floor`).

A scripted model on a local keep-alive HTTP server (OpenAI chat-completions SSE) asks for 50
`bash` calls (`echo step N`), then answers "done". pi runs against it with and without the
stdlib Python policy gate on every call. The server logs when each request arrives, which
splits pi's wall time into start-up (process start to the first request), the turns (request
to request) and the end (last request to exit).

The floor is what any agent must spend on the same work, measured right after in the same
run by the simplest program that does it: the 51 requests pi sent, replayed byte for byte to
the same server over one keep-alive connection (opening it included), and 50 `bash -c` spawns
of the same commands (posix_spawn + wait, output to a pipe that is drained), in pi's order —
request, command, request… The ratio pi / floor is printed next to the figure. The replay
client is Python, so the floor carries Python's per-request cost: it is, if anything, generous
to pi.

With the gate, no host can avoid the hook's own costs either: its interpreter starting and
registering, a `tool_call` round trip before each command, and its exit once told to shut down
(a host owes a hook its graceful shutdown before it exits). The gate run's floor drives the
same hook directly, in the same order (start, then per turn: request, gate event, command;
then shutdown and the wait for its exit), so the ratio says what pi adds, not what Python
costs.

Also printed, as the floor was measured before: the sum of each kind of work in its own tight
loop (all the requests, then all the commands, then the hook's whole life). No agent reaches
it: a loop of one kind keeps its code and data hot, while a turn goes from the HTTP client to
the hook to a new process and back, and the in-order floor — the same work by a program that
does nothing else — takes 10–20% longer than that sum on this machine.
"""
import http.client
import json
import os
import socket
import statistics
import struct
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CALLS = 50


def _chunk(delta, finish=None):
    return "data: " + json.dumps({
        "id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0,
        "model": "bench-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }) + "\n\n"


def tool_reply(turn, calls, name, args):
    """The SSE body of the model's `turn`-th reply (0-based): one call of tool `name` with
    `args` while turn < calls, then "done"."""
    out = [_chunk({"role": "assistant", "content": ""})]
    if turn < calls:
        out.append(_chunk({"tool_calls": [{"index": 0, "id": f"call_{turn}", "type": "function",
                                           "function": {"name": name,
                                                        "arguments": json.dumps(args)}}]}))
        out.append(_chunk({}, "tool_calls"))
    else:
        out.append(_chunk({"content": "done"}))
        out.append(_chunk({}, "stop"))
    out.append("data: " + json.dumps({
        "id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0,
        "model": "bench-model", "choices": [],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}) + "\n\n")
    out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def reply(turn):
    """The SSE body of the model's `turn`-th reply (0-based): a `bash` call per turn."""
    return tool_reply(turn, CALLS, "bash", {"command": f"echo step {turn}"})


class MockModel:
    """The scripted model. Which reply a request gets is decided by how many tool results its
    body carries, so a replayed request gets the same reply pi got."""

    def __init__(self, reply_of=reply):
        self.log = []  # (perf_counter at arrival, body)
        self.lock = threading.Lock()
        mock = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self):
                super().setup()
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_POST(self):
                t = time.perf_counter()
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                turn = body.count(b'"role":"tool"')
                with mock.lock:
                    mock.log.append((t, body))
                data = reply_of(turn)
                # One write: headers and body in separate segments would meet the client's
                # delayed ACK (40 ms a turn) and measure TCP, not the agent.
                head = ("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                        f"Content-Length: {len(data)}\r\n\r\n").encode()
                self.wfile.write(head + data)

            def log_message(self, *_):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def port(self):
        return self.server.server_address[1]

    def take_log(self):
        with self.lock:
            log, self.log = self.log, []
        return log

    def models_json(self):
        return {"providers": {"bench": {
            "baseUrl": f"http://127.0.0.1:{self.port}/v1", "api": "openai-completions",
            "apiKey": "bench-key", "models": [{"id": "bench-model"}]}}}

    def close(self):
        self.server.shutdown()


def _connect(port):
    conn = http.client.HTTPConnection("127.0.0.1", port)
    conn.connect()
    conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return conn


def _post(conn, body):
    conn.request("POST", "/v1/chat/completions", body=body,
                 headers={"Content-Type": "application/json"})
    conn.getresponse().read()


def _bash(i, env):
    """Runs the `i`-th command as `bash -c`, drains its output and waits for it."""
    bash = "/bin/bash"
    r, w = os.pipe()
    pid = os.posix_spawn(bash, [bash, "-c", f"echo step {i}"], env, file_actions=[
        (os.POSIX_SPAWN_DUP2, w, 1), (os.POSIX_SPAWN_DUP2, w, 2)])
    os.close(w)
    while os.read(r, 65536):
        pass
    os.close(r)
    os.waitpid(pid, 0)


def _send(pipe, msg):
    data = json.dumps(msg).encode()
    pipe.write(struct.pack(">I", len(data)) + data)
    pipe.flush()


def _recv(pipe):
    head = pipe.read(4)
    if len(head) < 4:
        raise SystemExit("the hook closed its stdout during the floor measurement")
    (n,) = struct.unpack(">I", head)
    return json.loads(pipe.read(n))


def _start_hook(hook, cwd, env):
    """`hook` started, greeted and registered."""
    p = subprocess.Popen([hook], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, cwd=cwd, env=env)
    _send(p.stdin, {"type": "hello", "protocol_versions": [1],
                    "host": {"name": "bench", "version": "0"}, "hook_name": "policy",
                    "cwd": cwd, "mode": "print", "config": {},
                    "capabilities": {"ui": {"notify": True}, "methods": []}})
    while _recv(p.stdout).get("type") != "register":
        pass
    return p


def _gate(p, i):
    """The `i`-th call's `tool_call` event, answered."""
    _send(p.stdin, {"type": "event", "id": i + 1, "name": "tool_call", "deadline_ms": 30000,
                    "payload": {"tool_call_id": f"call_{i}", "tool_name": "bash",
                                "input": {"command": f"echo step {i}"}}})
    while _recv(p.stdout).get("type") != "reply":
        pass


def _stop_hook(p):
    _send(p.stdin, {"type": "shutdown", "reason": "quit"})
    p.stdin.close()
    p.wait()


def replay(port, bodies):
    """Seconds to send `bodies` in order over one keep-alive connection, reading each reply.
    Connecting counts, as it does for pi: the server starts a thread per connection, and the
    first request waits for it."""
    t0 = time.perf_counter()
    conn = _connect(port)
    for b in bodies:
        _post(conn, b)
    dt = time.perf_counter() - t0
    conn.close()
    return dt


def bash_spawns(env):
    """Seconds to run the 50 commands as `bash -c`, each waited for, output drained."""
    t0 = time.perf_counter()
    for i in range(CALLS):
        _bash(i, env)
    return time.perf_counter() - t0


def hook_floor(hook, cwd, env):
    """Seconds for `hook` to start and register, answer 50 `tool_call` events, then exit when
    told to shut down."""
    t0 = time.perf_counter()
    p = _start_hook(hook, cwd, env)
    for i in range(CALLS):
        _gate(p, i)
    _stop_hook(p)
    return time.perf_counter() - t0


def in_order(port, bodies, hook, cwd, env):
    """Seconds for the same operations in pi's order, with nothing between them: the hook
    started (with the gate), then each turn's request, its call's gate event and its `bash -c`,
    then the last request and the hook's shutdown."""
    t0 = time.perf_counter()
    p = _start_hook(hook, cwd, env) if hook else None
    conn = _connect(port)
    for i, b in enumerate(bodies):
        _post(conn, b)
        if i < CALLS:
            if p:
                _gate(p, i)
            _bash(i, env)
    conn.close()
    if p:
        _stop_hook(p)
    return time.perf_counter() - t0


def split(log, t_start, t_end):
    """Start-up, median turn and end, in seconds, from one run's request log."""
    times = [t for t, _ in log]
    gaps = [b - a for a, b in zip(times, times[1:])]
    return times[0] - t_start, statistics.median(gaps), t_end - times[-1]


def bench_floor(runs, run_once, pi, proj, home, env, policy):
    """Prints pi's 50-call HTTP run (no hook, Python gate) beside its floors."""
    mock = MockModel()
    with open(os.path.join(home, "models.json"), "w") as f:
        json.dump(mock.models_json(), f)
    base = [pi, "--provider", "bench", "--model", "bench-model", "--no-session"]
    cases = [("50-call HTTP run", base + ["-p", "go"], None),
             ("same, Python policy gate", base + ["--hook", policy, "-p", "go"], policy)]
    for label, argv, hook in cases:
        walls, starts, turns, ends, floors, sums, hooks = [], [], [], [], [], [], []
        for _ in range(runs):
            mock.take_log()
            t0 = time.perf_counter()
            wall, _rss = run_once(argv, proj, env)
            t1 = t0 + wall
            log = mock.take_log()
            if len(log) != CALLS + 1:
                raise SystemExit(f"{label}: expected {CALLS + 1} requests, saw {len(log)}")
            s, turn, e = split(log, t0, t1)
            bodies = [b for _, b in log]
            floors.append(in_order(mock.port, bodies, hook, proj, env))
            mock.take_log()
            parts = replay(mock.port, bodies) + bash_spawns(env)
            if hook:
                hooks.append(hook_floor(hook, proj, env))
                parts += hooks[-1]
            mock.take_log()
            sums.append(parts)
            walls.append(wall)
            starts.append(s)
            turns.append(turn)
            ends.append(e)
        ms = lambda xs: statistics.median(xs) * 1000  # noqa: E731
        ratio = lambda fs: statistics.median(w / f for w, f in zip(walls, fs))  # noqa: E731
        print(f"{label:<26} wall median {ms(walls):.1f} ms (start-up {ms(starts):.1f} ms, "
              f"turn {ms(turns):.2f} ms, end {ms(ends):.1f} ms); floor {ms(floors):.1f} ms: "
              f"median ratio {ratio(floors):.2f} ({runs} runs); the sum of each kind's own loop "
              f"{ms(sums):.1f} ms"
              + (f" (the hook's own start, 50 round trips and exit {ms(hooks):.1f} ms)"
                 if hooks else "")
              + f": ratio {ratio(sums):.2f}")
    mock.close()


def bench_instructions(pi, proj, home, env):
    """pi's own instructions for the 50-call HTTP run (no hook), counted by callgrind: the
    watchdog, the shells and the model server are not counted. Unlike the wall figures it
    does not move with the machine's load, so a change to pi's per-turn work shows in one
    run. valgrind follows forks, so the watchdog pi forks at start reports its own count, which
    is not pi's and is left out."""
    import re
    import shutil
    if not shutil.which("valgrind"):
        print("pi instructions            skipped: valgrind is not installed")
        return
    mock = MockModel()
    with open(os.path.join(home, "models.json"), "w") as f:
        json.dump(mock.models_json(), f)
    argv = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", pi,
            "--provider", "bench", "--model", "bench-model", "--no-session", "-p", "go"]
    r = subprocess.run(argv, cwd=proj, env=env, capture_output=True, text=True)
    requests = len(mock.take_log())
    mock.close()
    # The first process valgrind names is pi; a child it forks (its watchdog) reports too.
    first = re.search(r"==(\d+)==", r.stderr)
    m = first and re.search(r"==" + first.group(1) + r"==\s+I\s+refs:\s+([\d,]+)", r.stderr)
    if r.returncode != 0 or not m or requests != CALLS + 1:
        raise SystemExit(f"pi instructions: the run failed ({requests} requests)\n{r.stderr[-2000:]}")
    total = int(m.group(1).replace(",", ""))
    print(f"pi instructions            {total / 1e6:.1f} M for the 50-call HTTP run "
          f"({total / (CALLS + 1) / 1e3:.0f} k a turn, start-up included)")
