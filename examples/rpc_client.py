"""pi --mode rpc from Python: one prompt, its reply streamed. $PI names the command."""
import json, os, shlex, subprocess, sys

cmd = shlex.split(os.environ.get("PI", "pi")) + ["--mode", "rpc"]
pi = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, encoding="utf-8")
pi.stdin.write(json.dumps({"id": "1", "type": "prompt", "message": sys.argv[1]}) + "\n")
pi.stdin.flush()
for line in pi.stdout:  # one JSON object per line: responses and events
    msg = json.loads(line)
    if msg["type"] == "response" and not msg["success"]: sys.exit(msg["error"])
    if msg.get("assistantMessageEvent", {}).get("type") == "text_delta":
        print(msg["assistantMessageEvent"]["delta"], end="", flush=True)
    if msg["type"] == "agent_settled": print(); break
pi.stdin.close()  # EOF: pi ends the session and exits 0
sys.exit(pi.wait())
