// The `ctx` pi 1.6 passes to handlers, commands and tools (ExtensionContext,
// ExtensionCommandContext, ExtensionToolContext in dist/core/extensions/types.d.ts), built on
// the bridge's mirrored state (`state.mjs`) and host calls. Getters answer at once; actions are
// host calls. Session replacement from a command (`newSession`, `fork`, `switchSession`) runs in
// pi, which starts a new bridge for the new session: the `withSession`/`setup` callbacks, which
// would run in this (retiring) process, are reported and skipped.

import { complete, stream } from './model.mjs';
import { log, unavailable } from './report.mjs';

const MODES = { interactive: 'tui', rpc: 'rpc', json: 'json', print: 'print' };

/** pi 1.6's `ctx.mode` for the protocol's `hello.mode`. */
export const modeOf = (hello) => MODES[hello.mode] ?? 'print';

/** A model registry answered from what this process knows: the current model. */
function modelRegistry(state) {
  const known = () => (state.model ? [state.model] : []);
  return {
    // A model pi knows by this name, as far as the bridge can tell: `pi.setModel` asks pi, which
    // refuses an unknown one.
    find: (provider, id) => state.model?.provider === provider && state.model?.id === id
      ? state.model
      : { provider, id, name: id, api: undefined, reasoning: false, input: ['text'] },
    getAll: known,
    getAvailable: known,
    // pi runs the request with the user's credentials (`model.complete`): they never come here.
    hasConfiguredAuth: (model) => state.model?.provider === model?.provider,
    complete,
    stream,
    getApiKey: async () => {
      unavailable('ctx.modelRegistry.getApiKey', "keys stay in pi");
      return undefined;
    },
  };
}

/** `ctx` for event handlers: `signal` fires when pi withdraws the request. */
export function eventContext(bridge, signal) {
  const { state, hook } = bridge;
  return {
    ui: bridge.ui,
    mode: bridge.mode,
    hasUI: bridge.hasUI,
    cwd: state.cwd,
    sessionManager: state.sessionManager,
    modelRegistry: modelRegistry(state),
    get model() {
      return state.model;
    },
    scopedModels: [],
    get thinkingLevel() {
      return state.thinkingLevel;
    },
    isIdle: () => state.idle,
    isProjectTrusted: () => true,
    signal,
    abort: () => {
      hook.call('agent.abort', {}).catch((e) => log(`agent.abort failed: ${e.message}`, 'warn'));
    },
    hasPendingMessages: () => false,
    shutdown: () => unavailable('ctx.shutdown', 'later protocol work: host.shutdown'),
    getContextUsage: () => {
      unavailable('ctx.getContextUsage', 'later protocol work: ui.get_context_usage');
      return undefined;
    },
    compact: (options) => {
      const params = options?.customInstructions ? { custom_instructions: options.customInstructions } : {};
      hook.call('session.compact', params).then(
        (v) => options?.onComplete?.({ summary: v.summary, firstKeptEntryId: v.first_kept_entry_id, tokensBefore: v.tokens_before, details: v.details }),
        (e) => (options?.onError ? options.onError(new Error(e.hostMessage ?? e.message)) : log(`ctx.compact failed: ${e.message}`, 'warn')),
      );
    },
    getSystemPrompt: () => state.systemPrompt,
  };
}

/** A session replacement through `method`; callbacks that would run in this process are skipped. */
async function replace(hook, method, params, options) {
  if (options?.withSession) unavailable(`withSession of ctx.${method === 'session.new' ? 'newSession' : method.slice(8)}`, 'pi starts a new bridge for the new session');
  if (options?.setup) unavailable('setup of ctx.newSession');
  try {
    const v = await hook.call(method, params);
    return { cancelled: !!v.cancelled };
  } catch (e) {
    log(`${method} failed: ${e.message}`, 'warn');
    return { cancelled: true };
  }
}

/** `ctx` for command handlers: the event context plus session control. */
export function commandContext(bridge, signal) {
  const { hook, state } = bridge;
  const ctx = eventContext(bridge, signal);
  return Object.assign(ctx, {
    getSystemPromptOptions: () => ({ cwd: state.cwd, sections: {}, selectedTools: [...state.activeTools] }),
    waitForIdle: () => state.waitForIdle(),
    newSession: (options) => replace(hook, 'session.new', options?.parentSession ? { parent_session: options.parentSession } : {}, options),
    fork: (entryId, options) => replace(hook, 'session.fork', { entry_id: entryId, position: options?.position ?? 'before' }, options),
    switchSession: (sessionPath, options) => replace(hook, 'session.switch', { session_file: sessionPath }, options),
    navigateTree: async (targetId, options) => {
      const params = { entry_id: targetId };
      if (options?.summarize !== undefined) params.summarize = !!options.summarize;
      if (options?.customInstructions) params.custom_instructions = options.customInstructions;
      if (options?.label) params.label = options.label;
      if (options?.replaceInstructions) unavailable('replaceInstructions of ctx.navigateTree');
      try {
        const v = await hook.call('session.navigate_tree', params);
        if (v.editor_text) bridge.ui.setEditorText(v.editor_text);
        return { cancelled: !!v.cancelled };
      } catch (e) {
        log(`session.navigate_tree failed: ${e.message}`, 'warn');
        return { cancelled: true };
      }
    },
    reload: async () => unavailable('ctx.reload', 'later protocol work: host.reload'),
  });
}

/** `ctx` for a tool's `execute`: the event context plus nested tool calls. */
export function toolContext(bridge, signal, toolCallId) {
  const { hook, state } = bridge;
  const ctx = eventContext(bridge, signal);
  return Object.assign(ctx, {
    get tools() {
      return state.allTools.filter((t) => state.activeTools.includes(t.name));
    },
    executeTool: async (name, args) => {
      const toolCall = { type: 'toolCall', id: `${toolCallId}/${name}`, name, arguments: args ?? {} };
      try {
        const v = await hook.call('tools.execute', { tool: name, arguments: args ?? {}, parent_call_id: toolCallId });
        const result = { content: v.content ?? [], details: v.details ?? {} };
        if (v.structured_content !== undefined) result.structuredContent = v.structured_content;
        return { toolCall, result, isError: !!v.is_error };
      } catch (e) {
        return { toolCall, result: { content: [{ type: 'text', text: e.hostMessage ?? e.message }], details: {} }, isError: true };
      }
    },
  });
}
