#!/usr/bin/env bash
# The offline demo: the scripted `faux` model makes a few tool calls in a temporary project
# while the sample safety policy hook gates every one of them. It runs in a temporary
# directory, with a temporary agent directory (no session or setting of yours is read or
# written), and removes both when it ends. Extra arguments go to pi.
set -euo pipefail
repo="$(cd "$(dirname "$0")" && pwd)"
cargo build --release --quiet --manifest-path "$repo/Cargo.toml"
work="$(mktemp -d "${TMPDIR:-/tmp}/pi-demo.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/project" "$work/agent"
cd "$work/project"
PI_CODING_AGENT_DIR="$work/agent" "$repo/target/release/pi" \
  --provider faux --faux-script "$repo/fixtures/demo.json" \
  --hook "$repo/sample-hooks/policy.py" --verbose "$@" -p "Show me around"
