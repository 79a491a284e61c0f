// One extension source in one hook process: loads its modules when `hello` arrives, turns what
// their factories registered into the `register` handshake (subscriptions, tools, commands,
// flags), and serves pi's requests by running the extensions' handlers (`dispatch.mjs`) with
// pi 1.6's `ctx` (`context.mjs`) over mirrored state (`state.mjs`). The framing, request
// bookkeeping and cancellation are the Node hook helper's (`sample-hooks/pi_hook.js`).

import { createEventBus } from '../host/coding-agent.mjs';
import { createApi, newExtension } from './api.mjs';
import { commandContext, eventContext, modeOf } from './context.mjs';
import { NOTIFY_EVENTS, PROTOCOL_EVENTS, toEvent } from './convert.mjs';
import { runHandlers } from './dispatch.mjs';
import { importFactory, newImports, resolveEntries, scanEntry } from './load.mjs';
import { handlerError, log, settled, unavailable } from './report.mjs';
import { State } from './state.mjs';
import { prepareHandler, toolDecl, toolHandler } from './tools.mjs';
import { hostUi, noOpUi } from './ui.mjs';

/** Events the bridge hears whatever the extension listens to: they keep `state` true. */
const MIRRORED = ['session_start', 'model_select', 'thinking_level_select', 'session_info_changed', 'agent_start', 'agent_end'];

export class Bridge {
  constructor(hook, source) {
    this.hook = hook;
    this.source = source;
    this.extensions = [];
    this.needs = new Set();
    this.events = createEventBus();
    this.started = false;
    this.registered = false;
    this.listening = new Set();
  }

  /** `hello` arrived: load the source and declare what it registered (before `register`). */
  async start(hello) {
    this.hello = hello;
    this.state = new State(this.hook, hello);
    this.mode = modeOf(hello);
    this.hasUI = this.mode === 'tui' || this.mode === 'rpc';
    this.ui = this.hasUI ? hostUi(this.hook) : noOpUi();
    for (const entry of resolveEntries(this.source)) {
      const imports = newImports();
      scanEntry(entry, this.needs, imports);
      await this.load(entry, imports);
    }
    this.declare();
    this.started = true;
    this.registered = true;
  }

  /**
   * One entry: imported and its factory run. An entry that fails (a syntax error, a throwing
   * factory) is reported as pi 1.6 reports it and left out — what it registered before the
   * failure is dropped — and the bridge serves the others, as pi 1.6 runs without it.
   */
  async load(entry, imports) {
    const ext = newExtension(entry);
    const api = createApi(this, ext);
    try {
      const factory = await importFactory(entry, imports);
      await factory(api);
      this.extensions.push(ext);
    } catch (e) {
      log(`Failed to load extension ${entry}: ${e instanceof Error ? e.message : String(e)}`, 'error');
      process.stderr.write(`[${entry}] ${e && e.stack ? e.stack : e}\n`);
    }
  }

  /** Tools, commands and flags of every extension, into the helper's `register`. */
  declare() {
    const events = new Set(MIRRORED);
    const prepared = [];
    for (const ext of this.extensions) {
      for (const event of ext.handlers.keys()) if (PROTOCOL_EVENTS.has(event)) events.add(event);
      for (const tool of ext.tools.values()) {
        if (this.toolNamed(tool.name) !== tool) continue; // the first registration wins, as in pi 1.6
        this.hook.tool(toolDecl(tool), toolHandler(this, tool));
        if (tool.prepareArguments) prepared.push(tool.name);
      }
      for (const cmd of ext.commands.values()) {
        const opts = cmd.getArgumentCompletions ? { complete: (prefix) => this.complete(cmd, prefix) } : undefined;
        this.hook.command(cmd.name, cmd.description ?? '', (args, hctx) => this.command(cmd, args, hctx), opts);
      }
      for (const flag of ext.flags.values()) {
        this.hook.flag(flag.name, { description: flag.description ?? '', type: flag.type, default: flag.default });
      }
    }
    for (const event of events) {
      this.listening.add(event);
      this.hook.on(event, { ordered: true }, (payload, hctx) => this.dispatch(event, payload, hctx));
    }
    if (prepared.length) this.hook.on('prepare_arguments', { tools: prepared }, prepareHandler(this));
  }

  /** The extension tool called `name`, the first registered winning as in pi 1.6. */
  toolNamed(name) {
    for (const ext of this.extensions) if (ext.tools.has(name)) return ext.tools.get(name);
    return undefined;
  }

  /** `pi.registerTool`: part of `register` while loading, `tools.register` after. */
  addTool(ext, tool, attempt = 0) {
    if (!this.registered) return; // `declare` registers what loaded
    this.hook.addTool(toolDecl(tool), toolHandler(this, tool)).then(
      () => this.state.refreshTools(),
      (e) => {
        // pi refuses `tools.register` while it is still starting (a start-up `session_start`
        // handler, where pi 1.6 allows it); the tool is registered once pi has started.
        if (e.code === 'unavailable' && attempt < 100) {
          setTimeout(() => this.addTool(ext, tool, attempt + 1), 50).unref();
          return;
        }
        log(`pi.registerTool("${tool.name}") failed: ${e.message}`, 'warn');
      },
    );
  }

  /** Makes sure pi sends `event` (a subscription now, or in `register` while loading). */
  listen(event) {
    if (!PROTOCOL_EVENTS.has(event)) {
      unavailable(`pi.on("${event}")`, 'pi does not send this event to hooks');
      return;
    }
    if (!this.registered || this.listening.has(event)) return; // `declare` subscribes what loaded
    this.listening.add(event);
    // Requests are served in arrival order, with notify events, as pi 1.6 emits them one by one.
    this.hook
      .subscribe(event, { ordered: true }, (payload, hctx) => this.dispatch(event, payload, hctx))
      .catch((e) => log(`cannot listen to ${event}: ${e.message}`, 'warn'));
  }

  /** The mirrored state the extension's source reads, brought up to date. */
  async beforeDispatch() {
    if (this.needs.size) await this.state.refresh(this.needs);
  }

  async dispatch(name, payload, hctx) {
    if (name === 'session_start') await this.state.refreshAll(this.needs);
    else await this.beforeDispatch();
    this.state.observe(name, payload);
    const handlers = this.extensions.flatMap((ext) => ext.handlers.get(name) ?? []);
    if (!handlers.length) return {};
    this.state.signal = hctx.signal;
    const event = toEvent(name, payload, this.state);
    const ctx = eventContext(this, NOTIFY_EVENTS.has(name) ? undefined : hctx.signal);
    const reply = await runHandlers(name, handlers, event, ctx);
    await settled();
    return reply;
  }

  /**
   * `/name args`. pi 1.6 awaits a command however long it takes; pi waits for a hook's reply
   * only until the command's deadline, so a command still running a second before it is
   * answered then and goes on working (its host calls may outlive the reply).
   */
  async command(cmd, args, hctx) {
    await this.beforeDispatch();
    const run = Promise.resolve()
      .then(() => cmd.handler(args, commandContext(this, hctx.signal)))
      .then(settled)
      .then(() => ({}));
    const early = Math.max(0, (hctx.deadlineMs ?? 30000) - 1000);
    let timer;
    const answered = new Promise((resolve) => {
      timer = setTimeout(() => resolve({}), early);
      timer.unref();
    });
    try {
      return await Promise.race([run, answered]);
    } catch (e) {
      handlerError(this.extensionOf(cmd), `/${cmd.name}`, e);
      throw e;
    } finally {
      clearTimeout(timer);
      run.catch((e) => handlerError(this.extensionOf(cmd), `/${cmd.name}`, e));
    }
  }

  async complete(cmd, prefix) {
    try {
      const items = (await cmd.getArgumentCompletions(prefix)) ?? [];
      return items.map((i) => (typeof i === 'string' ? i : { value: String(i.value), description: i.description ?? i.label }));
    } catch (e) {
      handlerError(this.extensionOf(cmd), `/${cmd.name} completions`, e);
      return [];
    }
  }

  extensionOf(cmd) {
    return this.extensions.find((e) => e.commands.get(cmd.name) === cmd)?.path ?? this.source;
  }
}
