// The one connection to pi this process has, for the host modules: `withFileMutationQueue`
// from `@earendil-works/pi-coding-agent` takes pi's own file lock, so the module needs the hook
// that the bridge's main module creates. Host modules are loaded once, by the bridge, and shared
// with every extension it loads, so they all see this object.

export const runtime = {
  /** The `Hook` of `sample-hooks/pi_hook.js`, set once the bridge starts. */
  hook: null,
};
