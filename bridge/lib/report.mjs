// What the bridge tells the user about an extension: the parts of pi's in-process API that
// cannot work in another process (each named once, as `NAME is not available to out-of-process
// extensions`), and errors thrown by its handlers. Both go out as `log` frames, which pi
// records under the extension's name and shows as warnings, and to stderr when the protocol
// is not up yet. Kept in one place so every caller words them the same way.

const reported = new Set();
let sink = null;
const early = [];

/** Where reports go once the hook runs: `fn(message, level)`. Reports made before are sent then. */
export function setSink(fn) {
  sink = fn;
  for (const [message, level] of early.splice(0)) fn(message, level);
}

/** A log line at `level` (`info`, `warn`, `error`). */
export function log(message, level = 'info') {
  if (sink) sink(message, level);
  else early.push([message, level]);
}

/** `what` cannot run out of process: said once per process, however often it is called. */
export function unavailable(what, why) {
  if (reported.has(what)) return;
  reported.add(what);
  log(`${what} is not available to out-of-process extensions${why ? ` (${why})` : ''}`, 'warn');
}

/** Whether `unavailable(what)` was reported (tests and `pi hooks` read the log instead). */
export function wasReported(what) {
  return reported.has(what);
}

/** A handler of `event` threw: reported as pi 1.6 reports an extension error, the run goes on. */
export function handlerError(extensionPath, event, error) {
  const message = error instanceof Error ? error.message : String(error);
  const stack = error instanceof Error && error.stack ? `\n${error.stack}` : '';
  log(`Extension error (${extensionPath}, ${event}): ${message}`, 'error');
  process.stderr.write(`[${extensionPath}] ${event} handler failed: ${message}${stack}\n`);
}

/**
 * Calls whose answer nobody awaits (pi 1.6's setters return nothing), still unanswered. The bridge waits for them before it answers the request they were made in, so a
 * user sees what a handler showed before what its answer caused, as in pi 1.6's process.
 */
const unanswered = new Set();

/**
 * Methods pi answers without waiting for this hook, so waiting for them cannot deadlock: the
 * UI setters and session entries. `message.send` may wait for a run that needs this hook's
 * answers, and is never waited for.
 */
const TRACKED = /^(ui\.|session\.(append_entry|set_name|set_label)$)/;

/** The last `ui.*` setter sent: the next waits for its answer (see `fire`). */
let lastUi = Promise.resolve();

/**
 * `hook.call(method, params)`, without waiting for the answer; a refusal is logged. `ui.*`
 * setters go one at a time — pi serves a hook's calls concurrently, and a status set twice must
 * end as the second said, as it does in pi 1.6's process.
 */
export function fire(hook, method, params) {
  const send = () =>
    hook.call(method, params).then(
      () => undefined,
      (e) => log(`${method} failed: ${e.message}`, 'warn'),
    );
  let p;
  if (method.startsWith('ui.')) {
    p = lastUi.then(send);
    lastUi = p;
  } else {
    p = send();
  }
  if (!TRACKED.test(method)) return p;
  unanswered.add(p);
  p.finally(() => unanswered.delete(p));
  return p;
}

/** Resolves once every call fired so far has been answered. */
export function settled() {
  return unanswered.size ? Promise.all([...unanswered]).then(() => undefined) : Promise.resolve();
}
