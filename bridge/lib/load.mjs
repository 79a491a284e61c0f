// Loading an extension source as pi 1.6 does (dist/core/extensions/loader.js): a `.ts`, `.js`
// or `.mjs` file, or a directory — its `package.json` `pi.extensions` entries, else its
// `index.ts` / `index.js` — each module imported through jiti (the loader pi 1.6 uses, same
// version) with pi's packages resolved to the bridge's host modules, and its default export
// called with the `pi` API. Before that, the source is read for what will not work out of
// process, so the user is told at load (`report.unavailable`), not halfway through a session.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { createJiti } from 'jiti';
import { implemented } from '../host/stub.mjs';
import { unavailable } from './report.mjs';

/**
 * pi's packages as extensions import them (under both scopes pi 1.6 accepts), each loaded only
 * when an extension imports it: TypeBox alone takes longer to load than the rest of the bridge.
 */
const HOST = {
  'pi-coding-agent': () => import('../host/coding-agent.mjs'),
  'pi-ai': () => import('../host/ai.mjs'),
  'pi-ai/compat': () => import('../host/ai.mjs'),
  'pi-tui': () => import('../host/tui.mjs'),
  'pi-agent-core': () => import('../host/agent-core.mjs'),
};
const TYPEBOX = ['typebox', 'typebox/compile', 'typebox/value'];

/** What the scanned sources import: `specifiers`, and the named imports of pi's packages. */
export function newImports() {
  return { specifiers: new Set(), named: [] };
}

const hostName = (specifier) => /^@(?:earendil-works|mariozechner)\/(pi-[a-z-]+(?:\/compat)?)$/.exec(specifier)?.[1];

/** The modules jiti hands extensions instead of resolving them, for what `imports` names. */
async function virtualModules(imports) {
  const modules = {};
  const used = [...imports.specifiers];
  if (used.some((s) => /^(@sinclair\/)?typebox\b/.test(s))) {
    const loaded = await Promise.all(TYPEBOX.map((m) => import(m)));
    TYPEBOX.forEach((m, i) => {
      modules[m] = loaded[i];
      modules[`@sinclair/${m}`] = loaded[i];
    });
  }
  const names = new Set(used.map(hostName).filter((n) => n && HOST[n]));
  for (const name of names) {
    const module = await HOST[name]();
    modules[`@earendil-works/${name}`] = module.default;
    modules[`@mariozechner/${name}`] = module.default;
    for (const [names, from] of imports.named) {
      if (from !== name || name === 'pi-tui') continue; // components only draw, and nothing draws here
      for (const raw of names.split(',')) {
        const n = raw.trim().replace(/^type\s+.*/, '').split(/\s+as\s+/)[0].trim();
        if (n && !implemented(module.exports, n)) unavailable(`${n} (from @earendil-works/${name})`);
      }
    }
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

/** What `source` (one module's text) will need that cannot run here, what it reads, and imports. */
export function scan(source, needs, imports) {
  for (const [needle, what] of UNAVAILABLE_CALLS) if (source.includes(needle)) unavailable(what);
  if (/\bsessionManager\b/.test(source)) needs.add('entries');
  if (/\bget(Active|All)Tools\b|\.tools\b|\bsystemPromptOptions\b/.test(source)) needs.add('tools');
  if (/\bgetCommands\b/.test(source)) needs.add('commands');
  if (/\bgetSystemPrompt\b/.test(source)) needs.add('prompt');
  for (const [, spec] of source.matchAll(/(?:from|import|require)\s*\(?\s*["']([^"'./][^"']*)["']/g)) {
    imports.specifiers.add(spec);
  }
  const named = /import\s+(?!type\b)\{([^}]*)\}\s*from\s*["']@(?:earendil-works|mariozechner)\/(pi-[a-z-]+(?:\/compat)?)["']/g;
  for (const [, names, module] of source.matchAll(named)) imports.named.push([names, module]);
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
export function scanEntry(entry, needs, imports) {
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
    scan(text, needs, imports);
    todo.push(...localImports(file, text));
  }
}

/** The factory an entry exports by default; throws pi 1.6's message when there is none. */
export async function importFactory(entry, imports) {
  const modules = await virtualModules(imports);
  const jiti = createJiti(import.meta.url, { moduleCache: false, virtualModules: modules, tryNative: false });
  const factory = await jiti.import(entry, { default: true });
  if (typeof factory !== 'function') throw new Error(`Extension does not export a valid factory function: ${entry}`);
  return factory;
}
