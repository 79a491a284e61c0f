// A host module as extensions import it: the exports the bridge implements, and for every other
// name a stand-in that reports the name when it is used (see `report.unavailable`). pi 1.6's
// packages export hundreds of names, most of them TUI components that only renderers and
// `ctx.ui.custom` factories touch; those never run out of process, so an extension that merely
// imports them loads and the rest of it runs.

import { unavailable } from '../lib/report.mjs';

/** A stand-in for `name` of `moduleName`: callable and extendable, it reports itself when used. */
export function standIn(moduleName, name) {
  const what = `${name} (from ${moduleName})`;
  const fn = function (...args) {
    unavailable(what);
    return undefined;
  };
  Object.defineProperty(fn, 'name', { value: name });
  return fn;
}

/** Names a module object must not pretend to have: a `then` would make it look like a promise. */
const NEVER = new Set(['then', 'default', '__esModule', 'constructor', 'toJSON']);

/**
 * The module object for `moduleName`: `exports` as given, and a stand-in for any other string
 * name. The names the module really implements are kept apart (`implemented`), so the loader
 * can tell an extension at load which of its imports will not work.
 */
export function hostModule(moduleName, exports) {
  const made = new Map();
  const target = { ...exports };
  return new Proxy(target, {
    has(t, key) {
      return key in t || (typeof key === 'string' && !NEVER.has(key));
    },
    get(t, key) {
      if (key in t) return t[key];
      if (key === '__esModule') return true;
      if (typeof key !== 'string' || NEVER.has(key)) return undefined;
      if (!made.has(key)) made.set(key, standIn(moduleName, key));
      return made.get(key);
    },
  });
}

/** Whether `name` is really implemented by the module built from `exports`. */
export function implemented(exports, name) {
  return Object.prototype.hasOwnProperty.call(exports, name);
}
