#!/usr/bin/env python3
"""Benchmarks for pi (SPEC.md section 9). Prints medians; never run by the tests.

Usage: python3 bench/run.py [--runs N]   (builds the release binary first)

Figures:
  - `pi --version` wall time
  - a 50-tool-call faux print run: wall time and peak RSS, without hooks and with the Python
    policy hook gating every call
  - hook gate round trips (Rust and Python policy) and the time 5 gate hooks add per call
    (`cargo bench --bench hooks`)
Each child is started with posix_spawn and reaped with wait4, so wall time and peak RSS
(ru_maxrss) are the child's own, not Python's.
"""
import argparse
import json
import os
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet", "--examples"], cwd=ROOT, check=True)

    home = tempfile.mkdtemp(prefix="pi-bench-home-")
    proj = tempfile.mkdtemp(prefix="pi-bench-proj-")
    with open(os.path.join(proj, "data.txt"), "w") as f:
        f.write("\n".join(f"line {i}" for i in range(200)))
    script = os.path.join(home, "fifty.json")
    fifty_call_script(script)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home,
           "PI_CODING_AGENT_DIR": home}

    walls = [run_once([PI, "--version"], None, env)[0] for _ in range(args.runs)]
    print(f"pi --version            wall median {statistics.median(walls)*1000:.2f} ms "
          f"(min {min(walls)*1000:.2f} ms, {args.runs} runs)")

    runs = [run_once([PI, "--provider", "faux", "--faux-script", script, "-p", "go"], proj, env)
            for _ in range(max(5, args.runs // 2))]
    w = statistics.median(r[0] for r in runs)
    rss = statistics.median(r[1] for r in runs)
    print(f"50-tool-call faux run   wall median {w*1000:.1f} ms, peak RSS median {rss/1024:.1f} MB "
          f"({len(runs)} runs)")

    policy = os.path.join(ROOT, "sample-hooks", "policy.py")
    runs = [run_once([PI, "--provider", "faux", "--faux-script", script, "--hook", policy, "-p", "go"],
                     proj, env)
            for _ in range(max(5, args.runs // 2))]
    wh = statistics.median(r[0] for r in runs)
    rssh = statistics.median(r[1] for r in runs)
    print(f"same, Python policy gate  wall median {wh*1000:.1f} ms, peak RSS median {rssh/1024:.1f} MB "
          f"(pi's own RSS; {len(runs)} runs)")
    sys.stdout.flush()
    subprocess.run(["cargo", "bench", "--quiet", "--bench", "hooks"], cwd=ROOT, check=True)


if __name__ == "__main__":
    main()
