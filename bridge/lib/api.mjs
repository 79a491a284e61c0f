// pi 1.6's `ExtensionAPI` (the `pi` an extension's factory receives) on the hook protocol.
// Registrations made while the factory runs become the `register` handshake; later ones become
// `subscribe` and `tools.register`. Actions are host calls; pi 1.6's are fire-and-forget (they
// return nothing), so a refusal from pi is logged under the extension's name. As in pi 1.6,
// actions may not be called while the factory runs, only from handlers.

import { customMessage } from './convert.mjs';
import { execCommand } from './exec.mjs';
import { fire as fireCall, log, unavailable } from './report.mjs';

const NOT_INITIALIZED = 'Extension runtime not initialized. Action methods cannot be called during extension loading.';

/** One loaded extension: what its factory registered. */
export function newExtension(extPath) {
  return { path: extPath, handlers: new Map(), tools: new Map(), commands: new Map(), flags: new Map() };
}

const DELIVER = { steer: 'steer', followUp: 'follow_up', nextTurn: 'next_turn' };

export function createApi(bridge, ext) {
  const { hook } = bridge;
  const act = (fn) => (...args) => {
    if (!bridge.started) throw new Error(NOT_INITIALIZED);
    return fn(...args);
  };
  const fire = (method, params) => fireCall(hook, method, params);
  const renderer = (name) => () => unavailable(`pi.${name}`, 'pi draws its own screen');

  return {
    on(event, handler) {
      const list = ext.handlers.get(event) ?? [];
      const entry = { ext, fn: handler };
      list.push(entry);
      ext.handlers.set(event, list);
      bridge.listen(event);
      return () => {
        const l = ext.handlers.get(event);
        const i = l ? l.indexOf(entry) : -1;
        if (i >= 0) l.splice(i, 1);
      };
    },
    registerTool(tool) {
      if (typeof tool?.parameters !== 'object' || tool.parameters === null || Array.isArray(tool.parameters)) {
        throw new Error(`Tool "${tool?.name}" registered by extension "${ext.path}" must define an object parameter schema.`);
      }
      ext.tools.set(tool.name, tool);
      bridge.addTool(ext, tool);
    },
    registerCommand(name, options) {
      if (typeof name !== 'string' || name.length === 0) {
        throw new Error(`Command registered by extension "${ext.path}" must have a non-empty string name. Use pi.registerCommand("name", { description, handler }).`);
      }
      if (typeof options?.handler !== 'function') throw new Error(`Command "/${name}" registered by extension "${ext.path}" must define handler().`);
      if (bridge.registered) {
        unavailable(`pi.registerCommand("${name}") after start-up`, 'register commands in the factory');
        return;
      }
      ext.commands.set(name, { name, ...options });
    },
    registerShortcut: (shortcut) => unavailable(`pi.registerShortcut("${shortcut}")`, 'later protocol work: register.shortcuts'),
    registerFlag(name, options) {
      if (options?.default !== undefined && typeof options.default !== options.type) {
        throw new Error(`Invalid default for flag "${name}": expected ${options.type}, got ${typeof options.default}`);
      }
      ext.flags.set(name, { name, ...options });
    },
    getFlag(name) {
      const flag = ext.flags.get(name);
      if (!flag) return undefined;
      const given = bridge.hello.flags?.[name];
      if (given === undefined) return flag.default;
      return flag.type === 'string' ? (typeof given === 'string' ? given : undefined) : given === true || given === 'true';
    },
    registerMessageRenderer: renderer('registerMessageRenderer'),
    registerMarkdownTransformer: renderer('registerMarkdownTransformer'),
    registerEntryRenderer: renderer('registerEntryRenderer'),
    registerToolRenderer: renderer('registerToolRenderer'),
    sendMessage: act((message, options) => {
      const params = customMessage(message);
      if (options?.deliverAs) params.deliver_as = DELIVER[options.deliverAs] ?? options.deliverAs;
      if (options?.triggerTurn !== undefined) params.trigger_turn = !!options.triggerTurn;
      fire('message.send', params);
    }),
    sendUserMessage: act((content, options) => {
      const params = { content };
      if (options?.deliverAs) params.deliver_as = DELIVER[options.deliverAs] ?? options.deliverAs;
      fire('message.send_user', params);
    }),
    appendEntry: act((customType, data) => {
      fire('session.append_entry', { custom_type: customType, data: data ?? null });
    }),
    setSessionName: act((name) => {
      bridge.state.sessionName = String(name);
      fire('session.set_name', { name: String(name) });
    }),
    getSessionName: act(() => bridge.state.sessionName),
    setLabel: act((entryId, label) => fire('session.set_label', label === undefined ? { entry_id: entryId } : { entry_id: entryId, label })),
    exec: act((command, args, options) => execCommand(command, args ?? [], options?.cwd ?? bridge.state.cwd, options)),
    getActiveTools: act(() => [...bridge.state.activeTools]),
    getAllTools: act(() => bridge.state.allTools.map((t) => ({ ...t }))),
    getSettings: act(() => {
      unavailable('pi.getSettings', "pi's settings stay in pi");
      return {};
    }),
    setActiveTools: act((names) => {
      bridge.state.activeTools = names.filter((n) => bridge.state.allTools.some((t) => t.name === n));
      hook.call('tools.set_active', { names }).then(
        (v) => (bridge.state.activeTools = v.active),
        (e) => log(`tools.set_active failed: ${e.message}`, 'warn'),
      );
    }),
    getCommands: act(() => bridge.state.commands.map((c) => ({ ...c }))),
    setModel: act(async (model) => {
      try {
        await hook.call('model.set', { provider: model.provider, id: model.id });
        return true;
      } catch (e) {
        log(`pi.setModel(${model.provider}/${model.id}): ${e.hostMessage ?? e.message}`, 'info');
        return false;
      }
    }),
    getThinkingLevel: act(() => bridge.state.thinkingLevel),
    setThinkingLevel: act((level) => {
      hook.call('thinking.set', { level }).then(
        (v) => (bridge.state.thinkingLevel = v.level),
        (e) => log(`thinking.set failed: ${e.message}`, 'warn'),
      );
    }),
    registerProvider(nameOrProvider, config) {
      if (typeof nameOrProvider !== 'string' || !config) {
        unavailable('pi.registerProvider with a provider object', 'register a models.json-style config by name');
        return;
      }
      const functions = ['streamSimple', 'refreshModels'].filter((k) => typeof config[k] === 'function');
      if (functions.length || typeof config.oauth?.login === 'function') {
        unavailable(`pi.registerProvider("${nameOrProvider}") with ${functions.concat(config.oauth ? ['oauth'] : []).join(', ')}`, 'a provider implemented in the extension cannot run in pi');
        return;
      }
      fire('provider.register', { name: nameOrProvider, ...config });
    },
    unregisterProvider: (name) => fire('provider.unregister', { name }),
    registerMcpServer: act((name, server) => fire('mcp.register', { name, server })),
    unregisterMcpServer: (name) => unavailable(`pi.unregisterMcpServer("${name}")`),
    getMcpServers: () => [],
    registerVirtualModel: () => unavailable('pi.registerVirtualModel'),
    unregisterVirtualModel: () => unavailable('pi.unregisterVirtualModel'),
    events: bridge.events,
  };
}
