#!/usr/bin/env python3
"""expand_aliases: an input transformer.

Subscribes to `input` (a chain event). Every `@@name` in the user's text whose name is a
configured alias is replaced by the alias text and the hook answers `transform`; unknown
`@@names` are left alone. Input that is exactly `/ping` is answered `handled` (the agent does
nothing with it) after a `ui.notify` "pong" (an `unavailable` answer, as in print mode, is
fine). Anything else: `continue` (an empty reply).

Config: `aliases` — an object {name: text}, merged over the defaults below (a null value
removes a default).

Run: pi --hook sample-hooks/expand_aliases.py
"""

import os
import re
import sys

sys.dont_write_bytecode = True  # keep __pycache__ out of the hooks directory
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pi_hook import Hook, HostError, handled, transform  # noqa: E402

hook = Hook("expand_aliases", version="1.0.0", fail="open")

DEFAULT_ALIASES = {
    "tests": "Run the test suite and fix any failures.",
    "review": "Review the uncommitted changes (git diff) for bugs, security problems and "
              "missing tests; list findings by severity.",
    "explain": "Explain how this code works, starting from its entry points.",
    "commit": "Write a concise conventional commit message for the staged changes.",
}

ALIAS = re.compile(r"(?<![\w@])@@([A-Za-z0-9_][A-Za-z0-9_.-]*)")


def aliases():
    table = dict(DEFAULT_ALIASES)
    cfg = hook.config.get("aliases")
    if isinstance(cfg, dict):
        for k, v in cfg.items():
            if v is None:
                table.pop(k, None)
            else:
                table[str(k)] = str(v)
    return table


def expand(text):
    table = aliases()
    count = [0]

    def sub(m):
        name = m.group(1)
        # a trailing "." ends the sentence, not the name
        tail = ""
        while name and name not in table and name[-1] in ".-":
            name, tail = name[:-1], name[-1] + tail
        if name in table:
            count[0] += 1
            return table[name] + tail
        return m.group(0)

    return ALIAS.sub(sub, text), count[0]


@hook.on("input")
def on_input(payload, ctx):
    text = payload.get("text") or ""
    if text.strip() == "/ping":
        try:
            hook.call("ui.notify", {"message": "pong", "level": "info"}, timeout=10)
        except HostError as e:
            if e.code not in ("unavailable", "unknown_method"):
                hook.log("ui.notify failed: %s" % e, level="warn")
        return handled()
    new, n = expand(text)
    if n:
        return transform(new)
    return {}


if __name__ == "__main__":
    hook.run()
