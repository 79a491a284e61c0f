// Running one event through an extension's handlers, as pi 1.6's ExtensionRunner runs them
// (dist/core/extensions/runner.js: emit, emitToolCall, emitToolResult, emitContext, …), and
// turning what they decided into the protocol's reply. pi asks each hook once per event; inside
// the hook, several handlers of one event (one extension registering twice, or a package's
// several entries) combine here exactly as they would inside pi 1.6's process.

import { handlerError } from './report.mjs';
import { customMessage, entryOf, headerEdits, mergePatch, snakeTop } from './convert.mjs';

const errorMessage = (e) => (e instanceof Error ? e.message : String(e));

/** Calls each handler in turn; a throw is reported and the next handler runs. */
async function each(handlers, name, event, ctx, onResult) {
  for (const { ext, fn } of handlers) {
    let result;
    try {
      result = await fn(event, ctx);
    } catch (e) {
      handlerError(ext.path, name, e);
      continue;
    }
    if ((await onResult?.(result)) === 'stop') return;
  }
}

/** `tool_call`: the first block wins; an input a handler changed in place becomes a merge patch. */
async function toolCall(handlers, event, ctx) {
  const original = structuredClone(event.input);
  for (const { fn } of handlers) {
    let result;
    try {
      result = await fn(event, ctx);
    } catch (e) {
      // pi 1.6 ends such a call with the error's message as the tool's result.
      return { block: true, reason: errorMessage(e) };
    }
    if (result?.block) {
      const reply = { block: true };
      if (result.reason !== undefined) reply.reason = String(result.reason);
      if (result.terminate === true) reply.terminate = true;
      return reply;
    }
  }
  const patch = mergePatch(original, event.input);
  return patch === undefined ? {} : { patch };
}

async function toolResult(handlers, event, ctx) {
  const current = { ...event };
  const changed = {};
  await each(handlers, 'tool_result', current, ctx, (r) => {
    if (!r) return;
    for (const key of ['content', 'details', 'structuredContent', 'isError', 'usage']) {
      if (r[key] === undefined) continue;
      current[key] = r[key];
      changed[key] = r[key];
    }
    if (r.content !== undefined && r.structuredContent === undefined) {
      delete current.structuredContent;
      delete changed.structuredContent;
    }
  });
  return snakeTop(changed);
}

async function messageEnd(handlers, event, ctx) {
  let message = event.message;
  let modified = false;
  for (const { ext, fn } of handlers) {
    try {
      const r = await fn({ ...event, message }, ctx);
      if (!r?.message) continue;
      if (r.message.role !== message.role) {
        handlerError(ext.path, 'message_end', 'message_end handlers must return a message with the same role');
        continue;
      }
      message = r.message;
      modified = true;
    } catch (e) {
      handlerError(ext.path, 'message_end', e);
    }
  }
  return modified ? { message } : {};
}

/** `context`: handlers see the conversation without its system messages and may edit it in place. */
async function context(handlers, event, ctx) {
  const system = event.messages.filter((m) => m.role === 'system');
  let visible = event.messages.filter((m) => m.role !== 'system');
  let modified = false;
  for (const { ext, fn } of handlers) {
    const shown = visible.slice();
    const snapshot = shown.slice();
    try {
      const r = await fn({ type: 'context', messages: shown }, ctx);
      const same = shown.length === snapshot.length && shown.every((m, i) => m === snapshot[i]);
      const returned = r?.messages ?? (same ? undefined : shown);
      if (!returned) continue;
      visible = returned;
      modified = true;
    } catch (e) {
      handlerError(ext.path, 'context', e);
    }
  }
  return modified ? { messages: [...system, ...visible] } : {};
}

async function chainOf(handlers, name, event, ctx, key) {
  let value = event[key];
  let modified = false;
  await each(handlers, name, event, ctx, (r) => {
    const next = name === 'before_provider_request' ? r : r?.[key];
    if (next === undefined) return;
    value = next;
    event[key] = next;
    modified = true;
  });
  return modified ? { [key]: value } : {};
}

async function headers(handlers, event, ctx) {
  const before = { ...event.headers };
  await each(handlers, 'before_provider_headers', event, ctx);
  const edits = headerEdits(before, event.headers ?? {});
  return edits ? { headers: edits } : {};
}

async function beforeAgentStart(handlers, event, ctx, ext0) {
  const sectionsBefore = { ...event.systemPromptOptions.sections };
  const messages = [];
  let systemPrompt;
  await each(handlers, 'before_agent_start', event, ctx, (r) => {
    if (!r) return;
    if (r.message) messages.push(r.message);
    if (r.systemPrompt !== undefined) systemPrompt = r.systemPrompt;
  });
  const reply = {};
  if (systemPrompt !== undefined) reply.system_prompt = String(systemPrompt);
  if (messages.length) reply.message = customMessage(messages[0]);
  if (messages.length > 1) {
    handlerError(ext0, 'before_agent_start', 'only the first of several messages from one extension reaches pi (the protocol takes one per hook)');
  }
  const after = event.systemPromptOptions.sections;
  const edits = {};
  for (const k of Object.keys(sectionsBefore)) if (!(k in after)) edits[k] = null;
  for (const [k, v] of Object.entries(after)) if (sectionsBefore[k] !== v && k !== 'preamble') edits[k] = v ?? null;
  if (Object.keys(edits).length) reply.system_prompt_options = { sections: edits };
  return reply;
}

async function input(handlers, event, ctx) {
  const text = event.text;
  let current = text;
  for (const { ext, fn } of handlers) {
    try {
      const r = await fn({ ...event, text: current }, ctx);
      if (r?.action === 'handled') return { action: 'handled' };
      if (r?.action === 'transform') current = r.text;
    } catch (e) {
      handlerError(ext.path, 'input', e);
    }
  }
  return current !== text ? { action: 'transform', text: String(current) } : {};
}

/** `session_before_*`: the last non-empty result wins whole, a `cancel` at once. */
async function cancelable(handlers, name, event, ctx) {
  let result;
  await each(handlers, name, event, ctx, (r) => {
    if (!r) return;
    result = r;
    return r.cancel ? 'stop' : undefined;
  });
  if (!result) return {};
  const reply = snakeTop(result);
  if (result.compaction) reply.compaction = snakeTop(result.compaction);
  return reply;
}

async function boundary(handlers, name, event, ctx) {
  let entries = event.entries;
  let proceed = event.continue;
  const reply = {};
  for (const { ext, fn } of handlers) {
    try {
      const r = await fn({ ...event, entries, continue: proceed }, ctx);
      if (r?.entries !== undefined) {
        entries = r.entries;
        reply.entries = entries.map(entryOf);
      }
      if (r?.continue !== undefined) {
        proceed = !!r.continue;
        reply.continue = proceed;
      }
    } catch (e) {
      handlerError(ext.path, name, e);
    }
  }
  return reply;
}

async function collect(handlers, event, ctx) {
  const paths = { skill_paths: [], prompt_paths: [], theme_paths: [] };
  await each(handlers, 'resources_discover', event, ctx, (r) => {
    for (const [from, to] of [['skillPaths', 'skill_paths'], ['promptPaths', 'prompt_paths'], ['themePaths', 'theme_paths']]) {
      if (Array.isArray(r?.[from])) paths[to].push(...r[from].map(String));
    }
  });
  return paths;
}

async function firstDecider(handlers, name, event, ctx) {
  for (const { ext, fn } of handlers) {
    try {
      const r = await fn(event, ctx);
      if (name === 'project_trust') {
        if (r && r.trusted !== 'undecided') return snakeTop(r);
      } else if (r?.result) {
        return { result: snakeTop(r.result) };
      } else if (r?.operations) {
        handlerError(ext.path, name, 'user_bash `operations` is not available to out-of-process extensions; pi runs the command');
      }
    } catch (e) {
      handlerError(ext.path, name, e);
      if (name === 'user_bash') throw e;
    }
  }
  return {};
}

async function lastOverride(handlers, event, ctx) {
  let action;
  await each(handlers, 'cache_warming_decision', event, ctx, (r) => {
    if (r?.action !== undefined) action = r.action;
  });
  return action === undefined ? {} : { action };
}

/**
 * The reply to event `name` once `handlers` (`[{ext, fn}]`) have run on `event` with `ctx`.
 * Notify and awaited-notify events answer `{}` (the helper sends nothing for a notify).
 */
export async function runHandlers(name, handlers, event, ctx) {
  switch (name) {
    case 'tool_call':
      return toolCall(handlers, event, ctx);
    case 'tool_result':
      return toolResult(handlers, event, ctx);
    case 'message_end':
      return messageEnd(handlers, event, ctx);
    case 'context':
      return context(handlers, event, ctx);
    case 'context_with_system':
      return chainOf(handlers, name, event, ctx, 'messages');
    case 'before_provider_request':
      return chainOf(handlers, name, event, ctx, 'payload');
    case 'before_provider_headers':
      return headers(handlers, event, ctx);
    case 'before_agent_start':
      return beforeAgentStart(handlers, event, ctx, handlers[0]?.ext.path);
    case 'input':
      return input(handlers, event, ctx);
    case 'session_before_switch':
    case 'session_before_fork':
    case 'session_before_compact':
    case 'session_before_tree':
      return cancelable(handlers, name, event, ctx);
    case 'turn_end':
    case 'agent_before_settle':
      return boundary(handlers, name, event, ctx);
    case 'resources_discover':
      return collect(handlers, event, ctx);
    case 'project_trust':
    case 'user_bash':
      return firstDecider(handlers, name, event, ctx);
    case 'cache_warming_decision':
      return lastOverride(handlers, event, ctx);
    default:
      await each(handlers, name, event, ctx);
      return {};
  }
}
