// `@earendil-works/pi-coding-agent` for out-of-process extensions: the helpers pi 1.6 exports
// that work in any process (`defineTool`, the event type guards, truncation, the agent
// directory, `withFileMutationQueue` through pi's own file lock, the event bus). pi's session,
// TUI components and built-in tool factories live in pi; those names are stand-ins that say so
// when used (see `stub.mjs`).

import { EventEmitter } from 'node:events';
import * as os from 'node:os';
import * as path from 'node:path';
import { runtime } from '../lib/runtime.mjs';
import { hostModule } from './stub.mjs';
import { inertTheme } from './theme.mjs';
import * as truncate from './truncate.mjs';

export const VERSION = '1.6.0';
export const CONFIG_DIR_NAME = '.pi';

/** pi's agent directory: `PI_CODING_AGENT_DIR` (pi passes its own to the bridge), else `~/.pi/agent`. */
export function getAgentDir() {
  const dir = process.env.PI_CODING_AGENT_DIR;
  if (dir) return dir === '~' ? os.homedir() : dir.startsWith('~/') ? path.join(os.homedir(), dir.slice(2)) : dir;
  return path.join(os.homedir(), CONFIG_DIR_NAME, 'agent');
}

export const defineTool = (tool) => tool;

export const isToolCallEventType = (toolName, event) => event.toolName === toolName;
const resultOf = (name) => (event) => event.toolName === name;
export const isBashToolResult = resultOf('bash');
export const isPowerShellToolResult = resultOf('powershell');
export const isReadToolResult = resultOf('read');
export const isEditToolResult = resultOf('edit');
export const isWriteToolResult = resultOf('write');
export const isGrepToolResult = resultOf('grep');
export const isFindToolResult = resultOf('find');
export const isLsToolResult = resultOf('ls');

/**
 * Runs `fn` while holding pi's mutation lock of `filePath` — the lock pi's own `edit` and
 * `write` take (`tools.with_file_lock`) — so an extension's read-modify-write and pi's edits of
 * the same file take turns, as they do in pi 1.6's process.
 */
export async function withFileMutationQueue(filePath, fn) {
  const hook = runtime.hook;
  if (!hook) return fn();
  const lock = await hook.call('tools.with_file_lock', { path: filePath });
  try {
    return await fn();
  } finally {
    hook.call('tools.release_file_lock', { lock_id: lock.lock_id }).catch(() => {});
  }
}

/** pi 1.6's read tool's `offset`/`limit` label: `:start-end`. */
export function formatReadLineRange(offset, limit) {
  if (offset == null && limit == null) return '';
  const start = offset ?? 1;
  return limit == null ? `:${start}` : `:${start}-${start + limit - 1}`;
}

/** The frontmatter of a Markdown file (flat `key: value` lines) and its body. */
export function parseFrontmatter(content) {
  const text = String(content).replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  if (!text.startsWith('---')) return { frontmatter: {}, body: text };
  const end = text.indexOf('\n---', 3);
  if (end === -1) return { frontmatter: {}, body: text };
  const frontmatter = {};
  for (const line of text.slice(4, end).split('\n')) {
    const m = /^([A-Za-z0-9_-]+):\s*(.*)$/.exec(line);
    if (!m) continue;
    let value = m[2].trim();
    if (/^(["']).*\1$/.test(value)) value = value.slice(1, -1);
    else if (value === 'true' || value === 'false') value = value === 'true';
    else if (/^-?\d+(\.\d+)?$/.test(value)) value = Number(value);
    frontmatter[m[1]] = value;
  }
  return { frontmatter, body: text.slice(end + 4).trim() };
}

export const stripFrontmatter = (content) => parseFrontmatter(content).body;

/** pi's event bus, within this process (extensions in other bridge processes do not hear it). */
export function createEventBus() {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  return {
    emit: (channel, data) => emitter.emit(channel, data),
    on: (channel, handler) => {
      emitter.on(channel, handler);
      return () => emitter.off(channel, handler);
    },
  };
}

export const keyText = (keybinding) => String(keybinding);
export const keyHint = (keybinding, description) => `${keybinding} ${description}`;
export const rawKeyHint = (key, description) => `${key} ${description}`;
export const getMarkdownTheme = () => inertTheme();
export const getSelectListTheme = () => inertTheme();
export const getSettingsListTheme = () => inertTheme();

export const exports = {
  VERSION, CONFIG_DIR_NAME, getAgentDir, defineTool, isToolCallEventType, isBashToolResult, isPowerShellToolResult,
  isReadToolResult, isEditToolResult, isWriteToolResult, isGrepToolResult, isFindToolResult, isLsToolResult,
  withFileMutationQueue, formatReadLineRange, parseFrontmatter, stripFrontmatter, createEventBus, keyText, keyHint,
  rawKeyHint, getMarkdownTheme, getSelectListTheme, getSettingsListTheme,
  DEFAULT_MAX_BYTES: truncate.DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES: truncate.DEFAULT_MAX_LINES,
  formatSize: truncate.formatSize, truncateHead: truncate.truncateHead, truncateTail: truncate.truncateTail,
  truncateLine: truncate.truncateLine,
};

export default hostModule('@earendil-works/pi-coding-agent', exports);
