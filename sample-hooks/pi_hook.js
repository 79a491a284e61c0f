'use strict';
/**
 * pi_hook.js: a dependency-free helper for writing pi hooks in Node.js (>= 18; CommonJS).
 *
 * A pi hook is any executable that speaks length-prefixed JSON over stdin/stdout: every frame
 * is a 4-byte big-endian unsigned length followed by that many bytes of UTF-8 JSON (one
 * object). The host writes `hello` first; the hook answers `register`; then the host sends
 * `event`, `tool_execute`, `command`, `cancel`, `result` and `shutdown`, and the hook answers
 * with `reply`, `progress`, `call` and `log` (and changes what it listens to with
 * `subscribe` / `unsubscribe`: `await hook.subscribe(event, handler)`).
 *
 *   #!/usr/bin/env node
 *   const { Hook, block, allow } = require('./pi_hook.js');
 *   const hook = new Hook('my-policy', { version: '1.0' });
 *
 *   hook.on('tool_call', { tools: ['bash'] }, async (payload, ctx) => {
 *     if ((payload.input.command || '').includes('sudo')) return block('sudo is not allowed.');
 *     return allow();
 *   });
 *
 *   hook.tool({ name: 'hello', description: 'Say hello',
 *               parameters: { type: 'object', properties: {} } },
 *     async (args, ctx) => { ctx.progress('thinking...'); return 'hello'; });
 *
 *   hook.command('ping', 'Reply pong', async (args, ctx) => {
 *     try { await hook.call('ui.notify', { message: 'pong', level: 'info' }); } catch (e) {}
 *   });
 *
 *   hook.run();
 *
 * Handlers may be sync or async. Requests are served concurrently (each is a Promise); notify
 * events (no `id`) and subscriptions made with `{ ordered: true }` are served one at a time
 * in arrival order. `hook.call(method, params)` returns a Promise of the host's `value` and
 * rejects with a HostError (`code`, `message`). A handler that throws makes the request fail
 * (`reply {id, error}`). stdout carries only frames: console.log/info/debug are redirected to
 * stderr when this module is loaded. The process exits 0 on stdin EOF or `shutdown`.
 */

const PROTOCOL_VERSIONS = [1];

// stdout carries only frames: from the moment this module is loaded, console output — and
// anything else written to process.stdout, such as a library's progress bar or a terminal
// escape sequence — goes to stderr (the hook's log) instead; frames go through the original
// writer, kept here.
const writeFrame = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, encoding, callback) => process.stderr.write(chunk, encoding, callback);
console.log = console.error;
console.info = console.error;
console.debug = console.error;
const MAX_FRAME = 16 * 1024 * 1024;

// ------------------------------------------------------------------------------------------
// Reply helpers
// ------------------------------------------------------------------------------------------

/** Gate reply (tool_call): do not run the tool; `reason` goes to the model. */
const block = (reason) => ({ block: true, reason: String(reason) });
/** Gate reply (tool_call): an RFC 7386 merge patch of the tool input (null deletes a key). */
const patch = (obj) => ({ patch: obj });
/** Gate reply: no objection (also a fine empty reply for any event). */
const allow = () => ({});
/** Input reply: replace the user's text. */
const transform = (text) => ({ action: 'transform', text: String(text) });
/** Input reply: the hook handled the input; the agent does nothing with it. */
const handled = () => ({ action: 'handled' });
/** One text content block. */
const text = (s) => ({ type: 'text', text: String(s) });

function toContent(value) {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') return [text(value)];
  if (Array.isArray(value)) return value;
  if (typeof value === 'object') return [value];
  return [text(String(value))];
}

/** A tool as `register` and `tools.register` declare it, from the helper's camelCase form. */
function toolDecl(decl) {
  const d = {
    name: decl.name,
    description: decl.description || '',
    parameters: decl.parameters || { type: 'object', properties: {} },
    sequential: !!decl.sequential,
  };
  const snippet = decl.promptSnippet || decl.prompt_snippet;
  const guidelines = decl.promptGuidelines || decl.prompt_guidelines;
  const outputSchema = decl.outputSchema || decl.output_schema;
  if (snippet) d.prompt_snippet = snippet;
  if (guidelines && guidelines.length) d.prompt_guidelines = [...guidelines];
  if (decl.exposure) d.exposure = decl.exposure;
  if (outputSchema) d.output_schema = outputSchema;
  return d;
}

/** A tool result with details: `content` is a string or a list of content blocks. */
function toolResult(content, details) {
  const out = { content: toContent(content) };
  if (details !== undefined) out.details = details;
  return out;
}

class HostError extends Error {
  constructor(code, message) {
    super(`${code}: ${message}`);
    this.name = 'HostError';
    this.code = code;
    this.hostMessage = message;
  }
}

class Cancelled extends Error {
  constructor() {
    super('cancelled');
    this.name = 'Cancelled';
  }
}

// ------------------------------------------------------------------------------------------
// Context
// ------------------------------------------------------------------------------------------

class Context {
  constructor(hook, kind, id, name, payload, deadlineMs, callId) {
    this.hook = hook;
    this.kind = kind; // 'event' | 'tool_execute' | 'command' | 'complete'
    this.id = id; // undefined for notify events
    this.name = name;
    this.payload = payload;
    this.deadlineMs = deadlineMs;
    this.callId = callId;
    this.cancelled = false;
    this._onCancel = [];
    /** An AbortSignal that fires on `cancel` (pass it to fetch, child_process, timers...). */
    this._ac = new AbortController();
    this.signal = this._ac.signal;
  }

  _cancel() {
    if (this.cancelled) return;
    this.cancelled = true;
    this._ac.abort();
    for (const fn of this._onCancel) {
      try { fn(); } catch (e) { /* ignore */ }
    }
  }

  /** Run `fn` when the request is cancelled. */
  onCancel(fn) {
    if (this.cancelled) fn(); else this._onCancel.push(fn);
  }

  /** Throw if cancelled (the reply is then dropped). */
  checkCancelled() {
    if (this.cancelled) throw new Cancelled();
  }

  /** Stream partial tool output (cumulative: replaces the previous progress). */
  progress(content, details) {
    if (this.kind !== 'tool_execute' || this.id === undefined) return;
    const msg = { type: 'progress', id: this.id, content: toContent(content) };
    if (details !== undefined) msg.details = details;
    this.hook._send(msg);
  }

  call(method, params) {
    return this.hook.call(method, params);
  }

  setTheme(name) {
    return this.hook.setTheme(name);
  }

  complete(params, options) {
    return this.hook.complete(params, options);
  }

  get config() { return this.hook.config; }
  get cwd() { return this.hook.cwd; }
}

// ------------------------------------------------------------------------------------------
// The hook
// ------------------------------------------------------------------------------------------

class Hook {
  constructor(name, opts = {}) {
    this.name = name;
    this.version = opts.version;
    this.fail = opts.fail; // 'closed' | 'open' | undefined
    this.hello = {};
    this.config = {};
    this.protocolVersion = undefined;
    this._subs = [];
    this._events = new Map();
    this._ordered = new Set();
    this._tools = [];
    this._toolHandlers = new Map();
    this._commands = [];
    this._commandHandlers = new Map();
    this._completers = new Map();
    this._flags = [];
    this._registered = false;
    this._onHello = [];
    this._onShutdown = [];
    this._calls = new Map();
    /** Progress callbacks of `model.complete` calls in flight, by call id. */
    this._progress = new Map();
    this._nextCall = 0;
    this._inflight = new Map();
    this._queue = Promise.resolve(); // ordered work
    this._buf = Buffer.alloc(0);
    this._gotHello = false;
    this._closing = false;
  }

  get cwd() {
    return process.env.PI_PROJECT_DIR || this.hello.cwd || process.cwd();
  }

  get capabilities() {
    return this.hello.capabilities || {};
  }

  // -- registration -----------------------------------------------------------------------

  /**
   * Subscribe: `on(event, handler)` or `on(event, {tools, deadlineMs, ordered}, handler)`.
   * `handler(payload, ctx)` returns (or resolves to) the reply result; undefined means `{}`.
   */
  on(event, opts, handler) {
    if (typeof opts === 'function') { handler = opts; opts = {}; }
    opts = opts || {};
    if (this._events.has(event)) {
      throw new Error(`already subscribed to ${event} (one subscription per event)`);
    }
    this._events.set(event, handler);
    if (opts.ordered) this._ordered.add(event);
    const sub = { event };
    if (opts.tools && opts.tools.length) sub.tools = [...opts.tools];
    const deadline = opts.deadlineMs !== undefined ? opts.deadlineMs : opts.deadline_ms;
    if (deadline !== undefined && deadline !== null) sub.deadline_ms = deadline;
    this._subs.push(sub);
    return this;
  }

  /**
   * Register a tool: decl {name, description, parameters, promptSnippet?, promptGuidelines?,
   * sequential?}; `handler(args, ctx)` returns a string, content blocks, or toolResult(...).
   */
  tool(decl, handler) {
    this._tools = this._tools.filter((t) => t.name !== decl.name);
    this._tools.push(toolDecl(decl));
    this._toolHandlers.set(decl.name, handler);
    return this;
  }

  /**
   * A tool whose name is known only while the hook runs: before `register` it joins the
   * handshake as `tool()` does; after it, the host is asked with `tools.register` (a name this
   * method registered before is replaced). Resolves to the names the host registered.
   */
  async addTool(decl, handler) {
    if (!this._registered) {
      this.tool(decl, handler);
      return [decl.name];
    }
    this._toolHandlers.set(decl.name, handler);
    const value = await this.call('tools.register', { tools: [toolDecl(decl)] });
    return value.registered;
  }

  /**
   * Register `/name`: `handler(args: string, ctx)`; a string result becomes {text}. With
   * `opts.complete`, `complete(prefix, ctx)` answers the argument completions the interactive
   * editor asks for: a list of strings or `{value, description}` (nothing, or a throw, shows
   * no list).
   */
  command(name, description, handler, opts) {
    if (typeof description === 'function') { opts = handler; handler = description; description = ''; }
    const c = { name, description: description || '' };
    if (opts && typeof opts.complete === 'function') {
      c.completions = true;
      this._completers.set(name, opts.complete);
    }
    this._commands.push(c);
    this._commandHandlers.set(name, handler);
    return this;
  }

  flag(name, { description = '', type = 'boolean', default: dflt } = {}) {
    const f = { name, description, type };
    if (dflt !== undefined) f.default = dflt;
    this._flags.push(f);
    return this;
  }

  /**
   * `fn(hello)` runs after hello and before register (config-dependent registrations). A
   * promise it returns is awaited before `register` is sent; a rejection ends the process.
   */
  onHello(fn) { this._onHello.push(fn); return this; }

  /** `fn(reason)` runs before exit. */
  onShutdown(fn) { this._onShutdown.push(fn); return this; }

  // -- output -----------------------------------------------------------------------------

  _send(msg) {
    if (this._closing && msg.type !== 'log') { /* still try: the host may be reading */ }
    const body = Buffer.from(JSON.stringify(msg), 'utf8');
    const head = Buffer.alloc(4);
    head.writeUInt32BE(body.length, 0);
    // One write per frame: Node queues writes in order, so frames never interleave.
    try {
      writeFrame(Buffer.concat([head, body]));
    } catch (e) {
      this._exit('broken pipe');
    }
  }

  log(message, level = 'info') {
    this._send({ type: 'log', level, message: String(message) });
  }

  /** Ask the host; resolves to `value`, rejects with HostError. */
  call(method, params = {}) {
    return this._exchange({ type: 'call', method, params: params === undefined ? {} : params });
  }

  /**
   * `ui.set_theme`: switch pi's terminal UI to the theme called `name` (it becomes the user's
   * `theme` setting). Resolves to `{success, error?}` as pi 1.6's `ctx.ui.setTheme` returns:
   * `error` names an unknown theme (listing the ones there are) or a mode without a terminal UI.
   */
  setTheme(name) {
    return this.call('ui.set_theme', { name });
  }

  /**
   * `model.complete`: one model request through pi's providers and keys (the key stays in
   * pi). `params`: `{messages, model?: {provider, id}, system_prompt?, tools?, max_tokens?,
   * thinking?}`. `options.onEvent(event)` gets each streamed `text_delta` / `thinking_delta`;
   * `options.signal` (an AbortSignal) withdraws the request (`call_cancel`), which then rejects
   * with HostError `cancelled`. Resolves to the assistant message, in pi-ai's shape.
   */
  async complete(params, options = {}) {
    const { signal, onEvent } = options;
    if (signal?.aborted) throw new HostError('cancelled', 'the model request was cancelled');
    const id = this._nextCall + 1;
    if (onEvent) this._progress.set(id, onEvent);
    const cancel = () => this._send({ type: 'call_cancel', id });
    signal?.addEventListener('abort', cancel, { once: true });
    try {
      const value = await this._exchange({ type: 'call', method: 'model.complete', params });
      return value.message;
    } finally {
      signal?.removeEventListener('abort', cancel);
      this._progress.delete(id);
    }
  }

  /**
   * Start receiving `event` from now on (after `register`): `subscribe(event, handler)` or
   * `subscribe(event, {tools, deadlineMs}, handler)`. A subscription to an event the hook
   * already has is replaced. Resolves to the hook's subscriptions as the host now has them;
   * rejects with HostError (`invalid_params`) when the host refuses, and nothing changed.
   */
  async subscribe(event, opts, handler) {
    if (typeof opts === 'function') { handler = opts; opts = {}; }
    opts = opts || {};
    const sub = { event };
    if (opts.tools && opts.tools.length) sub.tools = [...opts.tools];
    const deadline = opts.deadlineMs !== undefined ? opts.deadlineMs : opts.deadline_ms;
    if (deadline !== undefined && deadline !== null) sub.deadline_ms = deadline;
    const previous = this._events.get(event);
    // Installed first: the host may send the event as soon as it applied the change.
    this._events.set(event, handler);
    try {
      const value = await this._exchange({ type: 'subscribe', subscriptions: [sub] });
      return value.subscriptions;
    } catch (e) {
      if (previous === undefined) this._events.delete(event); else this._events.set(event, previous);
      throw e;
    }
  }

  /**
   * Stop receiving `events` for everything dispatched from now on; resolves to the hook's
   * subscriptions. Handlers stay installed: an event already being dispatched may still come.
   */
  async unsubscribe(...events) {
    const value = await this._exchange({ type: 'unsubscribe', events });
    return value.subscriptions;
  }

  _exchange(msg) {
    const id = ++this._nextCall;
    return new Promise((resolve, reject) => {
      this._calls.set(id, { resolve, reject });
      this._send({ ...msg, id });
    });
  }

  // -- dispatch ---------------------------------------------------------------------------

  _register() {
    const offered = this.hello.protocol_versions || [1];
    const common = offered.filter((v) => PROTOCOL_VERSIONS.includes(v));
    this.protocolVersion = common.length ? Math.max(...common) : Math.max(...offered);
    const msg = {
      type: 'register',
      protocol_version: this.protocolVersion,
      name: this.name,
      subscriptions: this._subs,
      tools: this._tools,
      commands: this._commands,
      flags: this._flags,
    };
    if (this.version !== undefined) msg.version = String(this.version);
    if (this.fail !== undefined) msg.fail = this.fail;
    return msg;
  }

  async _serve(ctx, fn, first, shape) {
    let reply;
    try {
      const out = await fn(first, ctx);
      let result;
      if (shape === 'tool') {
        if (out && typeof out === 'object' && !Array.isArray(out) && 'content' in out) {
          result = { ...out, content: toContent(out.content) };
        } else {
          result = { content: toContent(out) };
        }
      } else if (shape === 'command') {
        result = out === undefined || out === null ? {} : typeof out === 'string' ? { text: out } : out;
      } else if (shape === 'complete') {
        result = { items: Array.isArray(out) ? out : [] };
      } else {
        result = out === undefined || out === null ? {} : out;
      }
      reply = { type: 'reply', id: ctx.id, result };
    } catch (e) {
      if (e instanceof Cancelled) {
        reply = null;
      } else {
        process.stderr.write(`[${this.name}] handler ${ctx.name} failed: ${e && e.stack ? e.stack : e}\n`);
        const msg = e && e.message !== undefined ? `${e.name || 'Error'}: ${e.message}` : String(e);
        reply = { type: 'reply', id: ctx.id, error: msg };
      }
    } finally {
      this._inflight.delete(ctx.id);
    }
    if (reply && !ctx.cancelled) this._send(reply);
  }

  _startRequest(ctx, fn, first, shape, ordered) {
    this._inflight.set(ctx.id, ctx);
    if (ordered) {
      this._queue = this._queue.then(() => this._serve(ctx, fn, first, shape));
    } else {
      this._serve(ctx, fn, first, shape);
    }
  }

  _notify(fn, payload, ctx) {
    this._queue = this._queue.then(async () => {
      try {
        await fn(payload, ctx);
      } catch (e) {
        process.stderr.write(`[${this.name}] notify handler ${ctx.name} failed: ${e && e.stack ? e.stack : e}\n`);
      }
    });
  }

  _handle(msg) {
    if (!msg || typeof msg !== 'object') return;
    switch (msg.type) {
      case 'event': {
        const fn = this._events.get(msg.name);
        const ctx = new Context(this, 'event', msg.id === null ? undefined : msg.id, msg.name, msg.payload, msg.deadline_ms);
        if (ctx.id === undefined) {
          if (fn) this._notify(fn, msg.payload, ctx);
        } else if (!fn) {
          this._send({ type: 'reply', id: ctx.id, result: {} });
        } else {
          this._startRequest(ctx, fn, msg.payload, 'event', this._ordered.has(msg.name));
        }
        break;
      }
      case 'tool_execute': {
        const fn = this._toolHandlers.get(msg.tool);
        if (!fn) { this._send({ type: 'reply', id: msg.id, error: `unknown tool ${msg.tool}` }); break; }
        const ctx = new Context(this, 'tool_execute', msg.id, msg.tool, msg.arguments, msg.deadline_ms, msg.call_id);
        this._startRequest(ctx, fn, msg.arguments || {}, 'tool', false);
        break;
      }
      case 'command': {
        const fn = this._commandHandlers.get(msg.name);
        if (!fn) { this._send({ type: 'reply', id: msg.id, error: `unknown command ${msg.name}` }); break; }
        const ctx = new Context(this, 'command', msg.id, msg.name, msg.args || '', msg.deadline_ms);
        this._startRequest(ctx, fn, msg.args || '', 'command', false);
        break;
      }
      case 'complete': {
        const fn = this._completers.get(msg.name);
        if (!fn) { this._send({ type: 'reply', id: msg.id, error: `no completions for ${msg.name}` }); break; }
        const ctx = new Context(this, 'complete', msg.id, msg.name, msg.prefix || '');
        this._startRequest(ctx, fn, msg.prefix || '', 'complete', false);
        break;
      }
      case 'cancel': {
        const ctx = this._inflight.get(msg.id);
        if (ctx) ctx._cancel();
        break;
      }
      case 'call_progress': {
        const onEvent = this._progress.get(msg.id);
        if (onEvent) {
          try {
            onEvent(msg.event);
          } catch (e) {
            this.log(`a model.complete progress handler threw: ${e && e.message}`, 'warn');
          }
        }
        break;
      }
      case 'result': {
        const pending = this._calls.get(msg.id);
        if (!pending) break;
        this._calls.delete(msg.id);
        if (msg.error !== undefined && msg.error !== null) {
          const err = msg.error;
          if (typeof err === 'object') pending.reject(new HostError(err.code || 'failed', err.message || ''));
          else pending.reject(new HostError('failed', String(err)));
        } else {
          pending.resolve(msg.value === undefined ? null : msg.value);
        }
        break;
      }
      case 'shutdown':
        this._exit(msg.reason || 'shutdown');
        break;
      case 'hello':
        break; // a second hello is ignored
      default:
        process.stderr.write(`[${this.name}] ignoring unknown message type ${JSON.stringify(msg.type)}\n`);
    }
  }

  _onHelloMsg(hello) {
    if (hello.type !== 'hello') {
      process.stderr.write(`[${this.name}] expected hello, got ${JSON.stringify(hello.type)}\n`);
    }
    this.hello = hello;
    this.config = hello.config && typeof hello.config === 'object' && !Array.isArray(hello.config) ? hello.config : {};
    const pending = this._onHello.map((fn) => fn(hello)).filter((r) => r && typeof r.then === 'function');
    const register = () => {
      this._registered = true;
      this._send(this._register());
    };
    if (!pending.length) {
      register();
      return;
    }
    Promise.all(pending).then(register, (e) => {
      process.stderr.write(`[${this.name}] start-up failed: ${e && e.stack ? e.stack : e}\n`);
      this._exit('start-up failed', 1);
    });
  }

  _onData(chunk) {
    this._buf = this._buf.length ? Buffer.concat([this._buf, chunk]) : chunk;
    while (this._buf.length >= 4 && !this._closing) {
      const len = this._buf.readUInt32BE(0);
      if (len > MAX_FRAME) {
        process.stderr.write(`[${this.name}] framing error: frame of ${len} bytes\n`);
        this._exit('framing error', 1);
        return;
      }
      if (this._buf.length < 4 + len) break;
      const body = this._buf.subarray(4, 4 + len);
      this._buf = this._buf.subarray(4 + len);
      let msg;
      try {
        msg = JSON.parse(body.toString('utf8'));
      } catch (e) {
        process.stderr.write(`[${this.name}] framing error: ${e.message}\n`);
        this._exit('framing error', 1);
        return;
      }
      if (!this._gotHello) {
        this._gotHello = true;
        this._onHelloMsg(msg);
      } else {
        this._handle(msg);
      }
    }
  }

  _exit(reason, code = 0) {
    if (this._closing) return;
    this._closing = true;
    for (const ctx of this._inflight.values()) ctx._cancel();
    for (const p of this._calls.values()) p.reject(new HostError('closed', 'the host connection ended'));
    this._calls.clear();
    const finish = async () => {
      // Let queued notify handlers finish (at most 1.5 s), then the shutdown callbacks.
      await Promise.race([this._queue, new Promise((r) => setTimeout(r, 1500).unref())]);
      for (const fn of this._onShutdown) {
        try { await fn(reason); } catch (e) { process.stderr.write(`${e && e.stack ? e.stack : e}\n`); }
      }
      process.exitCode = code;
      // Flush stdout before exiting; do not wait for forever-pending work.
      if (process.stdout.writableLength > 0) {
        process.stdout.once('drain', () => process.exit(code));
        setTimeout(() => process.exit(code), 500).unref();
      } else {
        process.exit(code);
      }
    };
    finish();
  }

  /** Handshake, then serve until stdin EOF or `shutdown`. */
  run() {
    process.stdout.on('error', () => this._exit('broken pipe'));
    process.stdin.on('data', (chunk) => this._onData(chunk));
    process.stdin.on('end', () => this._exit('eof'));
    process.stdin.on('error', () => this._exit('eof'));
    process.on('SIGPIPE', () => this._exit('broken pipe'));
  }
}

module.exports = {
  Hook,
  Context,
  HostError,
  block,
  patch,
  allow,
  transform,
  handled,
  text,
  toolResult,
  PROTOCOL_VERSIONS,
};
