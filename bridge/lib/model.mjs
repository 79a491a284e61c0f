// Model requests from extensions — pi-ai's `complete`/`completeSimple`/`stream`/`streamSimple`
// and `ctx.modelRegistry.complete`/`stream` — as the protocol's `model.complete`: pi runs the
// request through its own providers with the user's credentials, so the key never enters this
// process. As pi-ai's, `complete` never rejects: a failure is an assistant message with
// `stopReason: "error"` and `errorMessage`, a withdrawn request one with `stopReason: "aborted"`.

import { runtime } from './runtime.mjs';

/** The protocol's params for pi-ai's `(model, context, options)`. */
function params(model, context, options) {
  const p = { messages: context?.messages ?? [] };
  if (model?.provider && model?.id) p.model = { provider: model.provider, id: model.id };
  if (context?.systemPrompt) p.system_prompt = context.systemPrompt;
  if (context?.tools?.length) {
    p.tools = context.tools.map((t) => ({ name: t.name, description: t.description ?? '', parameters: t.parameters ?? {} }));
  }
  if (options?.maxTokens) p.max_tokens = options.maxTokens;
  const level = options?.reasoning ?? options?.reasoningEffort;
  if (level) p.thinking = level;
  return p;
}

/** pi-ai's assistant message for a request that did not complete. */
function failed(model, stopReason, errorMessage) {
  const zero = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
  return {
    role: 'assistant',
    content: [],
    api: model?.api,
    provider: model?.provider,
    model: model?.id,
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: zero },
    stopReason,
    errorMessage,
    timestamp: Date.now(),
  };
}

async function run(model, context, options, onEvent) {
  if (!runtime.hook) return failed(model, 'error', 'model requests need pi (the bridge is not connected)');
  try {
    return await runtime.hook.complete(params(model, context, options), { signal: options?.signal, onEvent });
  } catch (e) {
    if (e.code === 'cancelled' || options?.signal?.aborted) return failed(model, 'aborted', 'Request was aborted');
    return failed(model, 'error', e.message);
  }
}

/** pi-ai's `complete`: resolves to the assistant message. */
export function complete(model, context, options) {
  return run(model, context, options);
}

/**
 * pi-ai's `stream`: an async iterable of `AssistantMessageEvent`s (`start`, `text_delta`,
 * `thinking_delta`, then `done` or `error`) with `result()`. The deltas are pi's; the partial
 * message they carry holds the text so far.
 */
export function stream(model, context, options) {
  const queue = [];
  let wake = null;
  let finished = false;
  const partial = failed(model, 'stop', undefined);
  delete partial.errorMessage;
  const push = (event) => {
    queue.push(event);
    wake?.();
  };
  const result = run(model, context, options, (event) => {
    const i = event.contentIndex ?? 0;
    const kind = event.type === 'thinking_delta' ? 'thinking' : 'text';
    partial.content[i] ??= kind === 'thinking' ? { type: 'thinking', thinking: '' } : { type: 'text', text: '' };
    partial.content[i][kind] += event.delta ?? '';
    push({ ...event, partial });
  }).then((message) => {
    const ok = message.stopReason !== 'error' && message.stopReason !== 'aborted';
    push(ok ? { type: 'done', reason: message.stopReason, message } : { type: 'error', reason: message.stopReason, error: message });
    finished = true;
    wake?.();
    return message;
  });
  queue.push({ type: 'start', partial });
  return {
    result: () => result,
    async *[Symbol.asyncIterator]() {
      for (;;) {
        if (queue.length) {
          yield queue.shift();
          continue;
        }
        if (finished) return;
        await new Promise((r) => (wake = r));
        wake = null;
      }
    },
  };
}
