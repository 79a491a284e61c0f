// Loading an extension source as pi 1.6 does (dist/core/extensions/loader.js): a `.ts`, `.js`
// or `.mjs` file, or a directory — its `package.json` `pi.extensions` entries, else its
// `index.ts` / `index.js` — each module imported through jiti (the loader pi 1.6 uses, same
// version) with pi's packages resolved to the bridge's host modules, and its default export
// called with the `pi` API. Before that, the source is read for what will not work out of
// process, so the user is told at load (`report.unavailable`), not halfway through a session.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { createJiti } from 'jiti';
import * as typebox from 'typebox';
import * as typeboxCompile from 'typebox/compile';
import * as typeboxValue from 'typebox/value';
import agentCore, { exports as agentCoreExports } from '../host/agent-core.mjs';
import ai, { exports as aiExports } from '../host/ai.mjs';
import codingAgent, { exports as codingAgentExports } from '../host/coding-agent.mjs';
import tui, { exports as tuiExports } from '../host/tui.mjs';
import { implemented } from '../host/stub.mjs';
import { unavailable } from './report.mjs';

/** pi's packages as extensions import them, under both scopes pi 1.6 accepts. */
const HOST = {
  'pi-coding-agent': [codingAgent, codingAgentExports],
  'pi-ai': [ai, aiExports],
  'pi-ai/compat': [ai, aiExports],
  'pi-tui': [tui, tuiExports],
  'pi-agent-core': [agentCore, agentCoreExports],
};

function virtualModules() {
  const modules = {
    typebox,
    'typebox/compile': typeboxCompile,
    'typebox/value': typeboxValue,
    '@sinclair/typebox': typebox,
    '@sinclair/typebox/compile': typeboxCompile,
    '@sinclair/typebox/value': typeboxValue,
  };
  for (const [name, [module]] of Object.entries(HOST)) {
    modules[`@earendil-works/${name}`] = module;
    modules[`@mariozechner/${name}`] = module;
  }
  return modules;
}

/** The entry files of an extension source, or an error saying why there are none. */
export function resolveEntries(source) {
  const resolved = path.resolve(source);
  let stat;
  try {
    stat = fs.statSync(resolved);
  } catch {
    throw new Error(`extension ${source} does not exist`);
  }
  if (!stat.isDirectory()) return [resolved];
  const manifest = path.join(resolved, 'package.json');
  if (fs.existsSync(manifest)) {
    let pkg;
    try {
      pkg = JSON.parse(fs.readFileSync(manifest, 'utf8'));
    } catch (e) {
      throw new Error(`cannot read ${manifest}: ${e.message}`);
    }
    const listed = Array.isArray(pkg?.pi?.extensions) ? pkg.pi.extensions : [];
    const entries = listed.map((p) => path.resolve(resolved, String(p))).filter((p) => fs.existsSync(p));
    if (entries.length) return entries;
  }
  for (const index of ['index.ts', 'index.js']) {
    if (fs.existsSync(path.join(resolved, index))) return [path.join(resolved, index)];
  }
  throw new Error(`extension directory ${source} has no package.json "pi.extensions" entry and no index.ts or index.js`);
}

/** Calls that exist in pi 1.6's API but draw on pi's screen or need pi's internals. */
const UNAVAILABLE_CALLS = [
  ['ui.custom(', 'ctx.ui.custom'],
  ['setFooter(', 'ctx.ui.setFooter'],
  ['setHeader(', 'ctx.ui.setHeader'],
  ['setEditorComponent(', 'ctx.ui.setEditorComponent'],
  ['addAutocompleteProvider(', 'ctx.ui.addAutocompleteProvider'],
  ['onTerminalInput(', 'ctx.ui.onTerminalInput'],
  ['setWorkingIndicator(', 'ctx.ui.setWorkingIndicator'],
  ['setWorkingMessage(', 'ctx.ui.setWorkingMessage'],
  ['setWorkingVisible(', 'ctx.ui.setWorkingVisible'],
  ['setHiddenThinkingLabel(', 'ctx.ui.setHiddenThinkingLabel'],
  ['pasteToEditor(', 'ctx.ui.pasteToEditor'],
  ['getEditorText(', 'ctx.ui.getEditorText'],
  ['getContextUsage(', 'ctx.getContextUsage'],
  ['.shutdown()', 'ctx.shutdown'],
  ['.reload()', 'ctx.reload'],
];

/** What `source` (one module's text) will need that cannot run here, and what it reads. */
export function scan(source, needs) {
  for (const [needle, what] of UNAVAILABLE_CALLS) if (source.includes(needle)) unavailable(what);
  if (/\bsessionManager\b/.test(source)) needs.add('entries');
  if (/\bget(Active|All)Tools\b|\.tools\b|\bsystemPromptOptions\b/.test(source)) needs.add('tools');
  if (/\bgetCommands\b/.test(source)) needs.add('commands');
  if (/\bgetSystemPrompt\b/.test(source)) needs.add('prompt');
  const imports = /import\s+(?!type\b)\{([^}]*)\}\s*from\s*["']@(?:earendil-works|mariozechner)\/(pi-[a-z-]+(?:\/compat)?)["']/g;
  for (const [, names, module] of source.matchAll(imports)) {
    const host = HOST[module];
    if (!host || module === 'pi-tui') continue; // components only draw, and nothing draws here
    for (const raw of names.split(',')) {
      const name = raw.trim().replace(/^type\s+.*/, '').split(/\s+as\s+/)[0].trim();
      if (name && !implemented(host[1], name)) unavailable(`${name} (from @earendil-works/${module})`);
    }
  }
}

/** The local modules an entry imports (`./x.ts`), so their text is scanned too. */
function localImports(file, text) {
  const out = [];
  for (const [, spec] of text.matchAll(/from\s*["'](\.{1,2}\/[^"']+)["']/g)) {
    const p = path.resolve(path.dirname(file), spec);
    for (const candidate of [p, `${p}.ts`, `${p}.js`]) {
      if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) {
        out.push(candidate);
        break;
      }
    }
  }
  return out;
}

/** Reads every module an entry reaches locally and scans it (see `scan`). */
export function scanEntry(entry, needs) {
  const seen = new Set();
  const todo = [entry];
  while (todo.length) {
    const file = todo.pop();
    if (seen.has(file)) continue;
    seen.add(file);
    let text;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    scan(text, needs);
    todo.push(...localImports(file, text));
  }
}

/** The factory an entry exports by default; throws pi 1.6's message when there is none. */
export async function importFactory(entry) {
  const jiti = createJiti(import.meta.url, { moduleCache: false, virtualModules: virtualModules(), tryNative: false });
  const factory = await jiti.import(entry, { default: true });
  if (typeof factory !== 'function') throw new Error(`Extension does not export a valid factory function: ${entry}`);
  return factory;
}
