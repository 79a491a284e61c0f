#!/usr/bin/env node
// pi's extension bridge: runs one pi 1.6 TypeScript extension source, unchanged, as a hook
// (hook-protocol.md). pi starts it as `node bridge/main.mjs SOURCE` for a `.ts`/`.js` extension
// entry (`-e`, the extensions directories, the settings' `extensions`), one process per source,
// and supervises it as any hook: a crash, a hang or an exit in the extension costs pi that
// extension's answers, never pi itself.
//
// stdout carries only protocol frames: the hook helper sends `console.log` and friends to stderr
// (the hook's log) from the moment it is loaded, before any extension code runs.

import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { Hook } = require('../sample-hooks/pi_hook.js');

const { Bridge } = await import('./lib/bridge.mjs');
const { runtime } = await import('./lib/runtime.mjs');
const { setSink } = await import('./lib/report.mjs');

const source = process.argv[2];
if (!source) {
  process.stderr.write('usage: node bridge/main.mjs EXTENSION (a .ts/.js/.mjs file or an extension directory)\n');
  process.exit(2);
}

const hook = new Hook(process.env.PI_HOOK_NAME || 'extension');
runtime.hook = hook;
const bridge = new Bridge(hook, source);
hook.onHello(async (hello) => {
  if (hello.hook_name) hook.name = hello.hook_name;
  setSink((message, level) => hook.log(message, level));
  await bridge.start(hello);
});
// An extension's stray rejection or exception is its own failure, reported; the bridge serves on
// (pi 1.6 reports such errors and keeps the extension loaded).
process.on('unhandledRejection', (e) => process.stderr.write(`[${hook.name}] unhandled rejection: ${e && e.stack ? e.stack : e}\n`));
process.on('uncaughtException', (e) => process.stderr.write(`[${hook.name}] uncaught exception: ${e && e.stack ? e.stack : e}\n`));
hook.run();
