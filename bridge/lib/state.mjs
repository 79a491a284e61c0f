// What pi 1.6's synchronous getters answer — `ctx.model`, `pi.getThinkingLevel()`,
// `pi.getActiveTools()`, `ctx.sessionManager.getBranch()`, `ctx.isIdle()` … — kept in this
// process, because a host call is a round trip and these are plain function calls. Each part is
// mirrored from what pi says: `hello`, the notify events the bridge always listens to
// (`model_select`, `thinking_level_select`, `session_info_changed`, `agent_start`/`agent_end`),
// host calls at `session_start`, and, for the parts an extension's source reads (`needs`), one
// refreshing call before each event reaches its handlers. What the bridge itself changed
// (`appendEntry`, `setActiveTools`, …) is applied at once, as pi 1.6 applies it.

import * as path from 'node:path';
import { tsModel } from './convert.mjs';

const quiet = (p) => p.catch(() => undefined);

export class State {
  constructor(hook, hello) {
    this.hook = hook;
    this.cwd = hello.cwd || process.cwd();
    this.sessionId = hello.session_id ?? '';
    this.sessionFile = hello.session_file;
    this.model = tsModel(hello.model);
    this.thinkingLevel = 'off';
    this.idle = true;
    this.sessionName = undefined;
    this.activeTools = [];
    this.allTools = [];
    this.commands = [];
    this.systemPrompt = '';
    this.partialMessage = undefined;
    this.entries = [];
    this.byId = new Map();
    this.leafId = null;
    this.sessionManager = sessionManager(this);
  }

  /** Everything pi can tell at `session_start`: model, level, tools, the session's entries. */
  async refreshAll(needs) {
    await Promise.all([
      quiet(this.hook.call('model.get', {}).then((m) => (this.model = tsModel(m)))),
      quiet(this.hook.call('thinking.get', {}).then((v) => (this.thinkingLevel = v.level))),
      this.refreshTools(),
      this.refreshEntries(),
      needs.has('commands') ? this.refreshCommands() : undefined,
    ]);
  }

  /** The parts `needs` names, before an event reaches handlers that may read them. */
  async refresh(needs) {
    const work = [];
    if (needs.has('entries')) work.push(this.refreshEntries());
    if (needs.has('tools')) work.push(this.refreshTools());
    if (needs.has('commands')) work.push(this.refreshCommands());
    if (needs.has('prompt')) work.push(quiet(this.hook.call('prompt.get', {}).then((v) => (this.systemPrompt = v.system_prompt))));
    await Promise.all(work);
  }

  refreshTools() {
    return quiet(
      this.hook.call('tools.list_active', {}).then((v) => {
        this.activeTools = v.active;
        this.allTools = v.all.map((t) => ({ name: t.name, description: t.description ?? '', parameters: t.parameters }));
      }),
    );
  }

  refreshCommands() {
    return quiet(
      this.hook.call('commands.list', {}).then((v) => {
        this.commands = v.commands.map((c) => ({
          name: c.name,
          description: c.description,
          source: c.source,
          sourceInfo: c.source_info,
        }));
      }),
    );
  }

  /** The entries appended since the last one this process knows (all of them the first time). */
  refreshEntries() {
    const last = this.entries[this.entries.length - 1];
    const params = last ? { since: last.id } : {};
    return quiet(
      this.hook.call('session.get_entries', params).then((v) => {
        for (const e of v.entries) this.addEntry(e);
        this.leafId = v.leaf_id ?? this.leafId;
      }),
    );
  }

  addEntry(entry) {
    if (!entry?.id || this.byId.has(entry.id)) return;
    this.entries.push(entry);
    this.byId.set(entry.id, entry);
    if (entry.type === 'session_info') this.sessionName = entry.name || undefined;
  }

  /** Mirrors what a notify event says about pi's state (before handlers see it). */
  observe(name, payload) {
    switch (name) {
      case 'model_select':
        this.model = tsModel(payload.model);
        break;
      case 'thinking_level_select':
        this.thinkingLevel = payload.level;
        break;
      case 'session_info_changed':
        this.sessionName = payload.name ?? undefined;
        break;
      case 'agent_start':
        this.idle = false;
        break;
      case 'agent_end':
        this.idle = true;
        this.partialMessage = undefined;
        for (const waiter of this.idleWaiters ?? []) waiter();
        this.idleWaiters = [];
        break;
      case 'message_start':
        if (payload.message?.role === 'assistant') this.partialMessage = payload.message;
        break;
      case 'before_agent_start':
        this.systemPrompt = payload.system_prompt ?? this.systemPrompt;
        break;
      default:
    }
  }

  /** Resolves once no run is in progress (`ctx.waitForIdle()`). */
  waitForIdle() {
    if (this.idle) return Promise.resolve();
    return new Promise((resolve) => (this.idleWaiters ??= []).push(resolve));
  }
}

/** The branch ending at `fromId` (the leaf by default), root first. */
function branch(state, fromId) {
  const out = [];
  let id = fromId ?? state.leafId;
  const seen = new Set();
  while (id && !seen.has(id)) {
    seen.add(id);
    const e = state.byId.get(id);
    if (!e) break;
    out.push(e);
    id = e.parentId;
  }
  return out.reverse();
}

function tree(state) {
  const nodes = new Map(state.entries.map((e) => [e.id, { entry: e, children: [] }]));
  const roots = [];
  for (const e of state.entries) {
    const node = nodes.get(e.id);
    const label = labelOf(state, e.id);
    if (label !== undefined) node.label = label;
    const parent = e.parentId && nodes.get(e.parentId);
    if (parent) parent.children.push(node);
    else roots.push(node);
  }
  return roots;
}

function labelOf(state, id) {
  let label;
  for (const e of state.entries) if (e.type === 'label' && e.targetId === id) label = e.label || undefined;
  return label;
}

/** pi 1.6's `ReadonlySessionManager`, answered from the mirrored entries. */
function sessionManager(state) {
  return {
    getCwd: () => state.cwd,
    getSessionDir: () => (state.sessionFile ? path.dirname(state.sessionFile) : ''),
    getSessionId: () => state.sessionId,
    getSessionFile: () => state.sessionFile,
    getLeafId: () => state.leafId,
    getLeafEntry: () => (state.leafId ? state.byId.get(state.leafId) : undefined),
    getEntry: (id) => state.byId.get(id),
    getLabel: (id) => labelOf(state, id),
    getBranch: (fromId) => branch(state, fromId),
    getHeader: () => ({ type: 'session', version: 3, id: state.sessionId, cwd: state.cwd }),
    getEntries: () => state.entries.slice(),
    getTree: () => tree(state),
    getSessionName: () => state.sessionName,
  };
}
