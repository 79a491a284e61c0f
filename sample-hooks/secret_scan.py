#!/usr/bin/env python3
"""secret_scan: find and redact likely secrets.

* Registers the `scan_secrets` tool: scans a file or directory tree for likely secrets (AWS
  access keys, private key blocks, GitHub/Slack/Stripe/Google tokens, `api_key = "..."`-style
  assignments), streams progress every PROGRESS_EVERY files, stops on cancel, and returns the
  findings with the secret values redacted.
* Answers `resources_discover` with the `security-review` skill that ships next to this
  directory (`../skills/security-review`, sent as an absolute path).
* Watches `tool_result` of `read` and `bash`: when the output contains a likely secret it
  returns a patch of `content` with the secrets redacted and a note
  "[secret_scan: redacted N likely secret(s)]", so the model never sees them.

Config: `progress_every` (files between progress frames, default 50), `max_file_bytes`
(default 2 MiB), `redact_tool_results` (default true).

Run: pi --hook sample-hooks/secret_scan.py
"""

import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # keep __pycache__ out of the hooks directory
sys.path.insert(0, HERE)
from pi_hook import Hook, tool_result  # noqa: E402

hook = Hook("secret_scan", version="1.0.0", fail="open")

SKILL_DIR = os.path.normpath(os.path.join(HERE, "..", "skills", "security-review"))
SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", "target", ".venv", "venv", "__pycache__",
             ".mypy_cache", ".pytest_cache", "dist", ".tox", ".idea"}

# (kind, regex, group holding the secret value or 0 for the whole match)
PATTERNS = [
    ("private key", re.compile(
        r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[\s\S]*?-----END \1PRIVATE KEY(?: BLOCK)?-----)?"), 0),
    ("AWS access key id", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b"), 0),
    ("AWS secret access key", re.compile(
        r"(?i)aws_?secret_?(?:access_?)?key[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"), 1),
    ("GitHub token", re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b"), 0),
    ("GitHub fine-grained token", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b"), 0),
    ("Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), 0),
    ("Slack webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9_/]{20,}"), 0),
    ("Stripe secret key", re.compile(r"\b(?:sk|rk)_live_[A-Za-z0-9]{16,}\b"), 0),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"), 0),
    ("OpenAI/Anthropic API key", re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{32,}\b"), 0),
    ("generic secret assignment", re.compile(
        r"(?i)\b[\w.-]*(?:api[_-]?key|apikey|secret|token|passw(?:or)?d|pwd|access[_-]?key|"
        r"auth[_-]?key|client[_-]?secret)[\w.-]*[\"']?\s*[:=]\s*[\"']([^\"'\s]{8,})[\"']"), 1),
]

PLACEHOLDER = re.compile(r"(?i)^(?:x+|\*+|\.+|<[^>]*>|\$\{?[A-Z_]+\}?|changeme|example|"
                         r"your[_-].*|dummy.*|test.*|placeholder.*|redacted.*|\{\{.*\}\})$")


def redact_value(kind, value):
    if kind == "private key":
        m = re.match(r"(-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----)", value)
        head = m.group(1) if m else "-----BEGIN PRIVATE KEY-----"
        return head + "[REDACTED]" + ("-----END" + head[len("-----BEGIN"):]
                                      if "-----END" in value else "")
    keep = 4 if len(value) >= 16 else 0
    return value[:keep] + "[REDACTED]"


def find_secrets(text):
    """Non-overlapping findings: dicts {kind, start, end, line, redacted}."""
    spans = []
    for kind, rx, group in PATTERNS:
        for m in rx.finditer(text):
            start, end = m.span(group)
            value = m.group(group)
            if group and PLACEHOLDER.match(value):
                continue
            if any(s < end and start < e for s, e, _, _ in spans):
                continue
            spans.append((start, end, kind, value))
    spans.sort()
    out = []
    for start, end, kind, value in spans:
        out.append({"kind": kind, "start": start, "end": end,
                    "line": text.count("\n", 0, start) + 1,
                    "redacted": redact_value(kind, value)})
    return out


def redact(text):
    """(redacted text, number of secrets)."""
    found = find_secrets(text)
    if not found:
        return text, 0
    parts, pos = [], 0
    for f in found:
        parts.append(text[pos:f["start"]])
        parts.append(f["redacted"])
        pos = f["end"]
    parts.append(text[pos:])
    return "".join(parts), len(found)


# ------------------------------------------------------------------------------------------
# The tool
# ------------------------------------------------------------------------------------------


def iter_files(root):
    if os.path.isfile(root):
        yield root
        return
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            yield os.path.join(dirpath, name)


def read_text(path, limit):
    try:
        if os.path.islink(path) or not os.path.isfile(path) or os.path.getsize(path) > limit:
            return None
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None  # binary
    return data.decode("utf-8", errors="replace")


@hook.tool(
    "scan_secrets",
    "Scan a file or directory for likely secrets (cloud keys, private keys, API tokens, "
    "hard-coded passwords). Values are redacted in the output.",
    {
        "type": "object",
        "properties": {
            "path": {"type": "string",
                     "description": "File or directory to scan, relative to the project "
                                    "(default \".\")"},
            "max_files": {"type": "integer", "minimum": 1,
                          "description": "Stop after this many files (default 5000)"},
        },
        "additionalProperties": False,
    },
    prompt_snippet="scan_secrets: find likely secrets (keys, tokens, passwords) in files",
    prompt_guidelines=["Use scan_secrets before committing or publishing code, and during "
                       "security reviews."],
)
def scan_secrets(args, ctx):
    cwd = hook.cwd
    raw = args.get("path") or "."
    root = raw if os.path.isabs(raw) else os.path.join(cwd, os.path.expanduser(raw))
    if not os.path.exists(root):
        raise FileNotFoundError("no such file or directory: %s" % raw)
    max_files = int(args.get("max_files") or 5000)
    every = int(hook.config.get("progress_every") or 50)
    limit = int(hook.config.get("max_file_bytes") or 2 * 1024 * 1024)
    findings, scanned, truncated = [], 0, False
    for path in iter_files(root):
        if ctx.cancelled:
            return tool_result("Cancelled after %d files." % scanned,
                               {"files_scanned": scanned, "findings": findings,
                                "cancelled": True})
        if scanned >= max_files:
            truncated = True
            break
        text = read_text(path, limit)
        scanned += 1
        if text:
            rel = os.path.relpath(path, cwd)
            for f in find_secrets(text):
                findings.append({"file": rel, "line": f["line"], "kind": f["kind"],
                                 "redacted": f["redacted"]})
        if scanned % every == 0:
            ctx.progress("scan_secrets: %d files scanned, %d likely secret(s) so far"
                         % (scanned, len(findings)),
                         {"files_scanned": scanned, "findings": len(findings)})
    lines = ["Scanned %d file(s) under %s%s: %d likely secret(s)."
             % (scanned, raw, " (stopped at max_files)" if truncated else "", len(findings))]
    for f in findings[:200]:
        lines.append("%s:%d: %s: %s" % (f["file"], f["line"], f["kind"], f["redacted"]))
    if len(findings) > 200:
        lines.append("... and %d more (see details)" % (len(findings) - 200))
    return tool_result("\n".join(lines), {"files_scanned": scanned, "truncated": truncated,
                                          "findings": findings})


# ------------------------------------------------------------------------------------------
# Events
# ------------------------------------------------------------------------------------------


@hook.on("resources_discover")
def discover(payload, ctx):
    if os.path.isfile(os.path.join(SKILL_DIR, "SKILL.md")):
        return {"skill_paths": [SKILL_DIR]}
    hook.log("security-review skill not found at %s" % SKILL_DIR, level="warn")
    return {"skill_paths": []}


@hook.on("tool_result", tools=["read", "bash"], inline=True)
def redact_result(payload, ctx):
    if hook.config.get("redact_tool_results") is False:
        return {}
    content = payload.get("content") or []
    total, out = 0, []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(
                block.get("text"), str):
            new, n = redact(block["text"])
            total += n
            if n:
                block = dict(block, text=new)
        out.append(block)
    if not total:
        return {}
    out.append({"type": "text", "text": "[secret_scan: redacted %d likely secret(s)]" % total})
    return {"content": out}


if __name__ == "__main__":
    hook.run()
