// `ctx.ui` for out-of-process extensions: pi 1.6's `ExtensionUIContext` on the protocol's
// `ui.*` calls (hook-protocol.md §7). Where pi 1.6 has no UI (print and JSON mode) the context is
// its no-op one, answered here without asking pi, exactly as pi 1.6 answers it. What draws on
// pi's screen from inside the extension — custom components, footers, editors, key handlers —
// cannot cross the process boundary and is reported by name (see `report.unavailable`).

import { inertTheme } from '../host/theme.mjs';
import { fire, log, unavailable } from './report.mjs';

/** Fire-and-forget: pi 1.6's setters return nothing, so a refusal can only be logged. */
const send = fire;

/** A dialog: the host's answer, or `dismissed` when the caller's signal aborts first. */
function dialog(hook, method, params, opts, pick, dismissed) {
  if (opts?.signal?.aborted) return Promise.resolve(dismissed);
  if (opts?.timeout > 0) params.timeout_ms = Math.round(opts.timeout);
  const asked = hook.call(method, params).then(pick, (e) => {
    log(`${method} failed: ${e.message}`, 'warn');
    return dismissed;
  });
  if (!opts?.signal) return asked;
  return Promise.race([
    asked,
    new Promise((resolve) => opts.signal.addEventListener('abort', () => resolve(dismissed), { once: true })),
  ]);
}

const unavailableSetter = (name) => () => unavailable(`ctx.ui.${name}`);

/** The parts of pi 1.6's UI context that out of process are reported and do nothing. */
function undrawable() {
  return {
    onTerminalInput: () => {
      unavailable('ctx.ui.onTerminalInput');
      return () => {};
    },
    setWorkingMessage: unavailableSetter('setWorkingMessage'),
    setWorkingVisible: unavailableSetter('setWorkingVisible'),
    setWorkingIndicator: unavailableSetter('setWorkingIndicator'),
    setHiddenThinkingLabel: unavailableSetter('setHiddenThinkingLabel'),
    setFooter: unavailableSetter('setFooter'),
    setHeader: unavailableSetter('setHeader'),
    custom: async () => {
      unavailable('ctx.ui.custom');
      return undefined;
    },
    pasteToEditor: unavailableSetter('pasteToEditor'),
    getEditorText: () => {
      unavailable('ctx.ui.getEditorText');
      return '';
    },
    addAutocompleteProvider: unavailableSetter('addAutocompleteProvider'),
    setEditorComponent: unavailableSetter('setEditorComponent'),
    getEditorComponent: () => undefined,
    getAllThemes: () => [],
    getTheme: () => undefined,
    getToolsExpanded: () => false,
    setToolsExpanded: unavailableSetter('setToolsExpanded'),
  };
}

/** pi 1.6's UI context where there is no UI: dialogs answer "dismissed", setters do nothing. */
export function noOpUi() {
  const theme = inertTheme();
  return {
    select: async () => undefined,
    confirm: async () => false,
    input: async () => undefined,
    editor: async () => undefined,
    notify: () => {},
    setStatus: () => {},
    setWidget: () => {},
    setTitle: () => {},
    setEditorText: () => {},
    ...undrawable(),
    get theme() {
      return theme;
    },
    setTheme: () => ({ success: false, error: 'UI not available' }),
  };
}

/** pi 1.6's UI context served by pi's front end through `ui.*` calls. */
export function hostUi(hook) {
  const theme = inertTheme();
  return {
    select: (title, options, opts) =>
      dialog(hook, 'ui.select', { title: String(title), options: options.map(String) }, opts, (v) => v.value ?? undefined, undefined),
    confirm: (title, message, opts) =>
      dialog(hook, 'ui.confirm', { title: String(title), message: String(message ?? '') }, opts, (v) => !!v.confirmed, false),
    input: (title, placeholder, opts) => {
      const params = { title: String(title) };
      if (placeholder !== undefined) params.placeholder = String(placeholder);
      return dialog(hook, 'ui.input', params, opts, (v) => v.value ?? undefined, undefined);
    },
    editor: (title, prefill) => {
      const params = { title: String(title) };
      if (prefill !== undefined) params.prefill = String(prefill);
      return dialog(hook, 'ui.editor', params, undefined, (v) => v.value ?? undefined, undefined);
    },
    notify: (message, type) => send(hook, 'ui.notify', { message: String(message), level: type ?? 'info' }),
    setStatus: (key, text) => send(hook, 'ui.set_status', text === undefined ? { key } : { key, text: String(text) }),
    setWidget: (key, content, options) => {
      if (typeof content === 'function') {
        unavailable('ctx.ui.setWidget with a component factory', 'string lines are shown');
        return;
      }
      const params = { key };
      if (content !== undefined) params.lines = content.map(String);
      if (options?.placement) params.placement = options.placement === 'belowEditor' ? 'below_editor' : 'above_editor';
      send(hook, 'ui.set_widget', params);
    },
    setTitle: (title) => send(hook, 'ui.set_title', { title: String(title) }),
    setEditorText: (text) => send(hook, 'ui.set_editor_text', { text: String(text) }),
    ...undrawable(),
    get theme() {
      return theme;
    },
    setTheme: (name) => {
      if (typeof name !== 'string') {
        unavailable('ctx.ui.setTheme with a Theme object', 'pass a theme name');
        return { success: false, error: 'Theme objects are not available to out-of-process extensions' };
      }
      // pi 1.6 answers at once; pi's answer comes later and only a refusal is logged.
      hook.call('ui.set_theme', { name }).then(
        (v) => v.success || log(`ctx.ui.setTheme("${name}"): ${v.error}`, 'warn'),
        (e) => log(`ui.set_theme failed: ${e.message}`, 'warn'),
      );
      return { success: true };
    },
  };
}
