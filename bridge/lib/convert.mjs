// The two shapes of one event: the protocol's payload (snake_case at the top level, pi's own
// camelCase inside messages and entries; hook-protocol.md §4) and the event object a pi 1.6
// extension handler receives (`{type, ...camelCase}`, docs/extensions.md). Conversions go both
// ways — payload to event, the handler's camelCase result back to the reply — and are kept
// here, apart from when handlers run, so each is one small function that can be read against
// the two documents.

/** Every event the protocol defines (hook-protocol.md §4.1): the only ones a hook can hear. */
export const PROTOCOL_EVENTS = new Set([
  'agent_start', 'agent_end', 'agent_settled', 'turn_start', 'message_start', 'message_update',
  'tool_execution_start', 'tool_execution_update', 'tool_execution_end', 'session_compact', 'session_tree',
  'session_info_changed', 'model_select', 'thinking_level_select', 'after_provider_response',
  'provider_stream_event', 'ui_prompt_start', 'ui_prompt_end', 'session_start', 'session_shutdown', 'tool_call',
  'input', 'context', 'context_with_system', 'before_agent_start', 'before_provider_headers',
  'before_provider_request', 'message_end', 'prepare_arguments', 'tool_result', 'project_trust', 'user_bash',
  'session_before_switch', 'session_before_fork', 'session_before_compact', 'session_before_tree',
  'resources_discover', 'turn_end', 'agent_before_settle', 'cache_warming_decision',
]);

/** Events the host sends without waiting (no `id`): their handlers' results are ignored. */
export const NOTIFY_EVENTS = new Set([
  'agent_start', 'agent_end', 'agent_settled', 'turn_start', 'message_start', 'message_update',
  'tool_execution_start', 'tool_execution_update', 'tool_execution_end', 'session_compact', 'session_tree',
  'session_info_changed', 'model_select', 'thinking_level_select', 'after_provider_response',
  'provider_stream_event', 'ui_prompt_start', 'ui_prompt_end',
]);

const camel = (key) => key.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
const snake = (key) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** `{tool_call_id: …}` → `{toolCallId: …}`, top level only (nested objects are pi's own shapes). */
export function camelTop(obj) {
  const out = {};
  for (const [k, v] of Object.entries(obj ?? {})) out[camel(k)] = v;
  return out;
}

/** `{isError: …}` → `{is_error: …}`, top level only; `undefined` values are left out. */
export function snakeTop(obj) {
  const out = {};
  for (const [k, v] of Object.entries(obj ?? {})) if (v !== undefined) out[snake(k)] = v;
  return out;
}

/** A model in `model.get`'s shape as pi 1.6's `Model` (`ctx.model`). */
export function tsModel(m) {
  if (!m) return undefined;
  const cost = m.cost ?? {};
  return {
    id: m.id,
    name: m.name ?? m.id,
    api: m.api,
    provider: m.provider,
    baseUrl: m.base_url ?? '',
    reasoning: !!m.reasoning,
    input: m.input ?? ['text'],
    cost: { input: cost.input ?? 0, output: cost.output ?? 0, cacheRead: cost.cache_read ?? 0, cacheWrite: cost.cache_write ?? 0 },
    contextWindow: m.context_window ?? 0,
    maxTokens: m.max_tokens ?? 0,
  };
}

/** A boundary entry of the protocol (`{type, custom_type, …}`) as pi 1.6's draft (`{type, customType, …}`). */
export function draftOf(entry) {
  return { ...camelTop(entry), type: entry.type };
}

/** pi 1.6's boundary draft back as the protocol's entry. */
export function entryOf(draft) {
  return { ...snakeTop(draft), type: draft.type };
}

/** The system-prompt options pi 1.6 hands `before_agent_start`, from what the payload says. */
function promptOptions(payload, state) {
  const sections = { ...(payload.system_prompt_options?.sections ?? {}) };
  return {
    cwd: state.cwd,
    sections,
    selectedTools: [...state.activeTools],
    hiddenTools: [],
    toolSnippets: {},
    toolGuidelines: {},
    promptGuidelines: [],
    appendSystemPrompt: sections.addendum ?? '',
    contextFiles: [],
    skills: [],
  };
}

/** The context preview of a boundary event: the protocol sends none (a named loss). */
const NO_PREVIEW = { contextEntries: [], contextMessages: [], llmMessages: [], pendingMessages: [], canContinue: false };

/** The event object pi 1.6 gives handlers of `name`, built from the protocol's payload. */
export function toEvent(name, payload, state) {
  const base = { type: name, ...camelTop(payload) };
  switch (name) {
    case 'model_select':
      return { ...base, model: tsModel(payload.model), previousModel: tsModel(payload.previous_model) };
    case 'session_before_compact':
    case 'session_before_tree': {
      const preparation = camelTop(payload.preparation);
      if (preparation.settings) preparation.settings = camelTop(preparation.settings);
      return { ...base, preparation, signal: state.signal };
    }
    case 'message_update':
      return { type: name, message: state.partialMessage, assistantMessageEvent: payload.assistant_message_event };
    case 'input':
      // pi 1.6 calls a prompt typed on the command line `interactive` too.
      return { type: name, text: payload.text, source: payload.source === 'print' ? 'interactive' : payload.source };
    case 'before_agent_start':
      return {
        type: name,
        messageType: 'user',
        prompt: payload.prompt,
        systemPrompt: payload.system_prompt,
        systemPromptOptions: promptOptions(payload, state),
      };
    case 'turn_end':
    case 'agent_before_settle': {
      const proposal = payload.proposal ?? { entries: [], continue: false };
      const event = {
        ...base,
        entries: (proposal.entries ?? []).map(draftOf),
        continue: !!proposal.continue,
        context: NO_PREVIEW,
      };
      delete event.proposal;
      if (name === 'turn_end') {
        event.toolResults = payload.tool_results ?? [];
        event.toolResultEntryIds = [];
      }
      return event;
    }
    default:
      return base;
  }
}

/** An RFC 7386 merge patch that turns `before` into `after` (`undefined` when they are equal). */
export function mergePatch(before, after) {
  if (JSON.stringify(before) === JSON.stringify(after)) return undefined;
  if (!isObject(before) || !isObject(after)) return after === undefined ? null : after;
  const patch = {};
  for (const key of Object.keys(before)) if (!(key in after) || after[key] === undefined) patch[key] = null;
  for (const [key, value] of Object.entries(after)) {
    if (value === undefined) continue;
    const p = key in before ? mergePatch(before[key], value) : value;
    if (p !== undefined) patch[key] = p;
  }
  return patch;
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `{header: value}` edits that turn `before` into `after` (`null` deletes one). */
export function headerEdits(before, after) {
  const edits = {};
  for (const k of Object.keys(before)) if (!(k in after)) edits[k] = null;
  for (const [k, v] of Object.entries(after)) if (before[k] !== v) edits[k] = v === undefined ? null : String(v);
  return Object.keys(edits).length ? edits : undefined;
}

/** A custom message as pi 1.6 writes it (`customType`, …) in the protocol's form. */
export function customMessage(m) {
  const out = { custom_type: m.customType, content: m.content ?? '' };
  if (m.display !== undefined) out.display = m.display;
  if (m.details !== undefined) out.details = m.details;
  return out;
}
