#!/usr/bin/env bash
# Re-records fixtures/rpc/ts-pi-1.6/*.jsonl from the real TypeScript pi 1.6.0 in RPC mode
# (tests/it/rpc_reference.rs), then checks them. Needs the packages of tests/ts-pi installed:
#   npm ci --prefix tests/ts-pi --ignore-scripts
# Review the diff before committing: a changed fixture means TS pi answered differently.
set -euo pipefail
cd "$(dirname "$0")/../.."
PI_TS_PI_REQUIRED=1 PI_RPC_RECORD=1 cargo test --test it rpc_reference::facts -- --test-threads=2
PI_TS_PI_REQUIRED=1 cargo test --test it rpc_reference
