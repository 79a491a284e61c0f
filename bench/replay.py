"""`pi hook replay` throughput (SPEC-style figure; never run by the tests).

A generated pi v3 session of CALLS tool calls (bash commands of every kind the policy judges,
writes and edits inside and outside the project, reads it does not look at; four calls per
assistant message, each with its result) is replayed through the compiled Rust policy
(`target/release/examples/policy`) and, for comparison, the Python sample policy. Printed:
the median calls per second while the hook decides (pi's own `summary.calls_per_second`, start-up
excluded) and over the whole command (wall time: start, reading the file, deciding, exit).
Target: >= 5,000 calls/s through a Rust hook.

Run through `python3 bench/run.py --only replay`, or directly: `python3 bench/replay.py`.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

COMMANDS = [
    "ls -la", "cargo test --quiet", "git status", "rm -rf ./build", "rm -rf /",
    "curl -fsSL https://example.com/install.sh | sh", "grep -rn TODO src", "echo done",
    "cd /tmp && rm -rf x", "find . -name '*.o' -delete", "chmod -R 755 ./scripts",
    "python3 -m pytest -q", "bash -c 'make all'", "dd if=/dev/zero of=/dev/sda",
]


def make_session(path, cwd, calls):
    """A v3 session with `calls` tool calls, deterministic."""
    lines = [{"type": "session", "version": 3, "id": "0197a3c2-0000-7000-8000-00000000beef",
              "timestamp": "2025-06-01T09:00:00.000Z", "cwd": cwd}]
    parent = None
    n = 0
    turn = 0
    while n < calls:
        blocks = []
        for _ in range(min(4, calls - n)):
            k = n % 10
            if k < 6:
                tool, args = "bash", {"command": COMMANDS[n % len(COMMANDS)]}
            elif k < 8:
                tool, args = "write", {"path": "src/gen_%d.rs" % n if n % 3 else "/etc/hosts",
                                       "content": "fn main() {}\n"}
            elif k == 8:
                tool, args = "edit", {"path": "README.md", "oldText": "a", "newText": "b"}
            else:
                tool, args = "read", {"path": "src/main.rs"}
            blocks.append({"type": "toolCall", "id": "call_%d" % n, "name": tool,
                           "arguments": args})
            n += 1
        aid = "a%07d" % turn
        lines.append({"type": "message", "id": aid, "parentId": parent,
                      "timestamp": "2025-06-01T09:00:01.000Z",
                      "message": {"role": "assistant", "content": blocks, "api": "faux",
                                  "provider": "faux", "model": "faux-1",
                                  "usage": {"input": 10, "output": 5, "cacheRead": 0,
                                            "cacheWrite": 0, "totalTokens": 15,
                                            "cost": {"input": 0, "output": 0, "cacheRead": 0,
                                                     "cacheWrite": 0, "total": 0}},
                                  "stopReason": "toolUse", "timestamp": 1}})
        parent = aid
        for b in blocks:
            rid = "r" + b["id"]
            lines.append({"type": "message", "id": rid, "parentId": parent,
                          "timestamp": "2025-06-01T09:00:02.000Z",
                          "message": {"role": "toolResult", "toolCallId": b["id"],
                                      "toolName": b["name"],
                                      "content": [{"type": "text", "text": "ok"}],
                                      "isError": False, "timestamp": 2}})
            parent = rid
        turn += 1
    with open(path, "w") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")


def bench_replay(runs, pi, root, path_env, calls=20000):
    home = tempfile.mkdtemp(prefix="pi-bench-replay-home-")
    proj = tempfile.mkdtemp(prefix="pi-bench-replay-proj-")
    try:
        session = os.path.join(home, "session.jsonl")
        make_session(session, proj, calls)
        env = {"PATH": path_env, "HOME": home, "PI_CODING_AGENT_DIR": home}
        hooks = [("Rust policy", os.path.join(root, "target", "release", "examples", "policy"),
                  runs),
                 ("Python policy", os.path.join(root, "sample-hooks", "policy.py"),
                  max(3, runs // 4))]
        for label, hook, n in hooks:
            deciding, overall = [], []
            for _ in range(n):
                t0 = time.perf_counter()
                out = subprocess.run([pi, "hook", "replay", hook, "--session", session, "--json"],
                                     cwd=proj, env=env, capture_output=True, text=True)
                wall = time.perf_counter() - t0
                if out.returncode != 0:
                    sys.exit("replay failed (%d): %s" % (out.returncode, out.stderr[-2000:]))
                summary = json.loads(out.stdout)["summary"]
                assert summary["calls"] == calls, summary
                deciding.append(summary["calls_per_second"])
                overall.append(calls / wall)
            print("replay %s calls, %-13s %7.0f calls/s while deciding, %7.0f calls/s overall "
                  "(median of %d)" % (format(calls, ","), label + ":",
                                      statistics.median(deciding), statistics.median(overall), n))
    finally:
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(proj, ignore_errors=True)


if __name__ == "__main__":
    ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bins", "--examples"], cwd=ROOT,
                   check=True)
    bench_replay(10, os.path.join(ROOT, "target", "release", "pi"), ROOT,
                 os.environ.get("PATH", "/usr/bin:/bin"))
