// A theme out of process: pi draws the screen, so colours and styles an extension asks of
// `ctx.ui.theme` (or `getMarkdownTheme()`) cannot reach it. Every styling method returns the
// text it was given, unstyled, so status lines and notifications keep their words.

function unstyled(...args) {
  for (let i = args.length - 1; i >= 0; i--) {
    if (typeof args[i] === 'string') return args[i];
  }
  return '';
}

/** A theme whose every method returns its text argument; `name` is the theme pi reports. */
export function inertTheme(name = 'dark') {
  return new Proxy(
    { name },
    {
      get(t, key) {
        if (key in t) return t[key];
        if (key === 'then' || typeof key !== 'string') return undefined;
        return unstyled;
      },
    },
  );
}
