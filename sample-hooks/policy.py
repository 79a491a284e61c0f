#!/usr/bin/env python3
"""policy: a safety gate for pi's bash, write and edit tools.

Blocks (with a reason naming the rule):
  * recursive deletes (rm -r/-R/--recursive, find ... -delete) of the project directory itself,
    or of anything outside it: `rm -rf /`, `rm -rf ~`, `rm -r ../x`, `rm -fr /etc`;
    `rm -rf ./build` inside the project is fine. `cd DIR && rm -rf x` is followed.
  * downloads piped into a shell or interpreter: `curl ... | sh`, `wget -qO- ... | bash`,
    `bash <(curl ...)`, `sh -c "$(curl ...)"`, `eval "$(wget ...)"`;
  * recursive chmod/chown/chgrp outside the project (`chmod -R 777 /`);
  * mkfs, dd onto a block device (`dd of=/dev/sda`), redirects onto a block device;
  * the classic fork bomb `:(){ :|:& };:`;
  * write/edit whose path resolves (relative to the project, `~` expanded, symlinks followed)
    outside the project directory.
Everything else is allowed.

Config (the `config` object of the hook's settings entry):
  extra_patterns: list of regular expressions; a bash command matching one is blocked.
  allow_paths:    list of extra directories write/edit and rm may touch (e.g. "/tmp").

Run: pi --hook sample-hooks/policy.py
"""

import os
import re
import shlex
import sys

sys.dont_write_bytecode = True  # keep __pycache__ out of the hooks directory
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pi_hook import Hook, allow, block  # noqa: E402

hook = Hook("policy", version="1.0.0", fail="closed")

# ------------------------------------------------------------------------------------------
# Paths
# ------------------------------------------------------------------------------------------

HOME = os.path.expanduser("~")


def project_dir():
    return os.path.realpath(hook.cwd)


def extra_allowed():
    out = []
    for p in (hook.config or {}).get("allow_paths") or []:
        out.append(os.path.realpath(os.path.expanduser(str(p))))
    return out


def within(path, root):
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def resolve(raw, cwd):
    """Resolve a path like pi's tools do: strip a leading `@`, expand `~`, join relative paths
    to `cwd`, then follow symlinks and `..`. Returns None when it cannot be known."""
    s = raw[1:] if raw.startswith("@") else raw
    if s == "~" or s.startswith("~/"):
        s = HOME + s[1:]
    elif s.startswith("~"):
        return None  # ~user: someone else's home
    for var in ("$HOME", "${HOME}"):
        if s == var or s.startswith(var + "/"):
            s = HOME + s[len(var):]
    for var in ("$PWD", "${PWD}", "$PI_PROJECT_DIR", "${PI_PROJECT_DIR}"):
        if s == var or s.startswith(var + "/"):
            s = (cwd or project_dir()) + s[len(var):]
    if "$" in s or "`" in s:
        return None
    if not os.path.isabs(s):
        if cwd is None:
            return None
        s = os.path.join(cwd, s)
    return os.path.realpath(s)


def describe(path):
    return "the project directory" if path == project_dir() else path


# ------------------------------------------------------------------------------------------
# Bash analysis
# ------------------------------------------------------------------------------------------

SHELLS = r"(?:ba|z|k|da|a|c|tc|fi|mk)?sh|python[0-9.]*|perl|ruby|node|php"
DOWNLOADERS = r"curl|wget|fetch|aria2c|http|https|xh"
PIPE_TO_SHELL = re.compile(
    r"\b(?:%s)\b[^|;&\n]*\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+)?(?:\S*/)?(?:%s)\b"
    % (DOWNLOADERS, SHELLS))
PROCESS_SUBST = re.compile(
    r"(?:\b(?:%s)\b|(?:^|[\s;&|])(?:source|\.))\s+(?:-\S+\s+)*<\(\s*(?:%s)\b"
    % (SHELLS, DOWNLOADERS))
CMD_SUBST = re.compile(
    r"(?:\b(?:%s)\b\s+-c|\beval)\s+[\"']?\$\(\s*(?:%s)\b|\beval\s+[\"']?`\s*(?:%s)\b"
    % (SHELLS, DOWNLOADERS, DOWNLOADERS))
FORK_BOMB = re.compile(r"([A-Za-z_:][\w:]*)\s*\(\)\s*\{\s*\1\s*\|\s*\1\s*&\s*\}\s*;?\s*\1")
BLOCK_DEVICE = r"/dev/(?:sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|md\d|dm-\d)"
DD_DEVICE = re.compile(r"\bdd\b[^;&|\n]*\bof=%s" % BLOCK_DEVICE)
REDIRECT_DEVICE = re.compile(r">\s*%s" % BLOCK_DEVICE)
MKFS = re.compile(r"(?:^|[\s;&|(`])(?:sudo\s+)?(?:\S*/)?(?:mkfs(?:\.\w+)?|mke2fs|mkswap|wipefs)\b")

WRAPPERS = {"sudo", "doas", "env", "command", "exec", "nohup", "time", "nice", "ionice",
            "builtin", "then", "do", "else", "elif", "if", "while", "until", "!", "{", "xargs",
            "stdbuf", "timeout", "busybox"}
CONTROL = {";", "&&", "||", "|", "&", "|&", "(", ")", ";;", "\n"}


def split_segments(cmd):
    """Split a shell command into simple commands (lists of words). Raises ValueError on
    unbalanced quotes."""
    cmd = cmd.replace("`", " ; ").replace("\n", " ; ")
    lex = shlex.shlex(cmd, posix=True, punctuation_chars=";&|()<>")
    lex.whitespace_split = True
    lex.commenters = "#"
    segments, cur = [], []
    for tok in lex:
        if tok in CONTROL or (tok and set(tok) <= set(";&|()")):
            if cur:
                segments.append(cur)
            cur = []
        elif tok in ("<", ">", ">>", "<<", "<<<", ">&", "<&", "&>", "&>>", ">|", "<>"):
            cur.append(tok)
        else:
            cur.append(tok)
    if cur:
        segments.append(cur)
    return segments


def strip_wrappers(words):
    i = 0
    while i < len(words):
        w = words[i]
        if w in WRAPPERS:
            i += 1
            # options of sudo/env/nice/timeout... and timeout's duration
            while i < len(words) and (words[i].startswith("-") or re.match(r"^\d+[smhd]?$", words[i])):
                i += 1
            continue
        if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w):  # VAR=value prefix
            i += 1
            continue
        break
    return words[i:]


def operands(words):
    """Split a command's arguments into (flags, operands), honouring `--`."""
    flags, ops, dashdash = [], [], False
    skip = False
    for w in words:
        if skip:
            skip = False
            continue
        if dashdash or not w.startswith("-") or w == "-":
            if w in ("<", ">", ">>", "2>", "&>"):
                skip = True
                continue
            ops.append(w)
        elif w == "--":
            dashdash = True
        else:
            flags.append(w)
    return flags, ops


def is_recursive(flags, letters="rR"):
    for f in flags:
        if f == "--recursive":
            return True
        if f.startswith("-") and not f.startswith("--") and any(c in f for c in letters):
            return True
    return False


def check_target(op, cwd, what, root_ok=False):
    """Reason to block `what` (e.g. "recursive delete") of operand `op`, or None. `root_ok`:
    the project directory itself is a fine target (find's start point)."""
    proj = project_dir()
    path = resolve(op, cwd)
    if path is None:
        return ("Blocked by policy rule 'no-%s-outside-project': %s of %r, whose location "
                "cannot be determined (variables, ~user or an unknown cwd); use a literal path "
                "inside the project." % (what.replace(" ", "-"), what, op))
    if path == proj and not root_ok:
        return ("Blocked by policy rule 'no-%s-outside-project': %s of %r would remove the "
                "whole project directory." % (what.replace(" ", "-"), what, op))
    if within(path, proj) or any(within(path, a) for a in extra_allowed()):
        return None
    return ("Blocked by policy rule 'no-%s-outside-project': %s of %r resolves to %s, which is "
            "outside the project directory %s." % (what.replace(" ", "-"), what, op, path, proj))


def check_words(words, state, depth):
    words = strip_wrappers(words)
    if not words:
        return None
    prog = os.path.basename(words[0])
    args = words[1:]
    if prog == "cd":
        target = args[0] if args else "~"
        if target == "-":
            state["cwd"] = None
        else:
            base = state["cwd"]
            state["cwd"] = resolve(target, base) if (base or os.path.isabs(target)
                                                     or target.startswith("~")) else None
        return None
    if prog in ("pushd",) and args:
        state["cwd"] = resolve(args[0], state["cwd"]) if state["cwd"] else None
        return None
    if prog == "rm":
        flags, ops = operands(args)
        if is_recursive(flags):
            for op in ops:
                r = check_target(op, state["cwd"], "recursive delete")
                if r:
                    return r
        return None
    if prog in ("chmod", "chown", "chgrp"):
        flags, ops = operands(args)
        if is_recursive(flags, "R") and len(ops) >= 2:
            for op in ops[1:]:
                r = check_target(op, state["cwd"], "recursive " + prog)
                if r:
                    return r
        return None
    if prog == "find" and ("-delete" in args or any(
            a in ("-exec", "-execdir") and i + 1 < len(args) and os.path.basename(args[i + 1]) == "rm"
            for i, a in enumerate(args))):
        starts = []
        for a in args:
            if a.startswith("-") or a in ("(", "!", ")"):
                break
            starts.append(a)
        for op in starts or ["."]:
            r = check_target(op, state["cwd"], "recursive delete", root_ok=True)
            if r:
                return r
        return None
    if re.match(r"^(?:%s)$" % SHELLS, prog) and "-c" in args and depth < 4:
        i = args.index("-c")
        if i + 1 < len(args):
            return check_bash(args[i + 1], depth + 1, state["cwd"])
    if prog == "eval" and args and depth < 4:
        return check_bash(" ".join(args), depth + 1, state["cwd"])
    return None


RM_FALLBACK = re.compile(r"\brm\s+(?:-\S*\s+)*-\S*[rR]\S*\s+(?:-\S+\s+)*[\"']?(/|~|\.\.|\$)")


def check_bash(cmd, depth=0, cwd=None):
    if cwd is None and depth == 0:
        cwd = project_dir()
    if FORK_BOMB.search(cmd):
        return "Blocked by policy rule 'no-fork-bomb': the command defines a fork bomb."
    if PIPE_TO_SHELL.search(cmd) or PROCESS_SUBST.search(cmd) or CMD_SUBST.search(cmd):
        return ("Blocked by policy rule 'no-download-to-shell': the command pipes a download "
                "straight into a shell or interpreter. Download the script to a file, review "
                "it, then run it.")
    if MKFS.search(cmd):
        return "Blocked by policy rule 'no-mkfs': the command would format a file system."
    if DD_DEVICE.search(cmd) or REDIRECT_DEVICE.search(cmd):
        return ("Blocked by policy rule 'no-raw-disk-write': the command writes directly to a "
                "block device.")
    for pat in (hook.config or {}).get("extra_patterns") or []:
        try:
            if re.search(pat, cmd):
                return ("Blocked by policy rule 'extra_patterns': the command matches the "
                        "configured pattern %r." % pat)
        except re.error as e:
            hook.log("bad extra_patterns entry %r: %s" % (pat, e), level="warn")
    try:
        segments = split_segments(cmd)
    except ValueError:
        # Unparsable (unbalanced quotes): fall back to a conservative regex.
        if RM_FALLBACK.search(cmd):
            return ("Blocked by policy rule 'no-recursive-delete-outside-project': the command "
                    "cannot be parsed and looks like a recursive delete outside the project.")
        return None
    state = {"cwd": cwd}
    for words in segments:
        r = check_words(words, state, depth)
        if r:
            return r
    return None


# ------------------------------------------------------------------------------------------
# The gate
# ------------------------------------------------------------------------------------------


def check_write(tool, path):
    if not isinstance(path, str) or not path:
        return None
    proj = project_dir()
    resolved = resolve(path, proj)
    if resolved is None:
        return ("Blocked by policy rule 'no-write-outside-project': %s to %r, whose location "
                "cannot be determined." % (tool, path))
    if within(resolved, proj) or any(within(resolved, a) for a in extra_allowed()):
        return None
    return ("Blocked by policy rule 'no-write-outside-project': %s to %r resolves to %s, which "
            "is outside the project directory %s." % (tool, path, resolved, proj))


# Decided from the payload alone, so answered on the reading thread (no thread per call).
@hook.on("tool_call", tools=["bash", "write", "edit"], inline=True)
def gate(payload, ctx):
    tool = payload.get("tool_name")
    inp = payload.get("input") or {}
    if tool == "bash":
        reason = check_bash(str(inp.get("command", "")))
    elif tool in ("write", "edit"):
        reason = check_write(tool, inp.get("path"))
    else:
        reason = None
    return block(reason) if reason else allow()


if __name__ == "__main__":
    hook.run()
