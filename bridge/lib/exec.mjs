// `pi.exec(command, args, options)`: pi 1.6's execCommand (dist/core/exec.js), run in the
// bridge's process — which pi started below its watchdog, so what it runs cannot outlive pi.
// Same result shape, same kill rules: SIGTERM on timeout, abort or a full buffer, SIGKILL five
// seconds later.

import { spawn } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { StringDecoder } from 'node:string_decoder';

const MAX_BUFFER = 256 * 1024 * 1024;
const FORCE_KILL_MS = 5000;

export function execCommand(command, args, cwd, options = {}) {
  const maxBuffer = options.maxBuffer ?? MAX_BUFFER;
  return new Promise((resolve) => {
    const proc = spawn(command, args, { cwd, shell: false, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = new StringDecoder('utf8');
    const err = new StringDecoder('utf8');
    let stdout = '';
    let stderr = '';
    let bytes = 0;
    let truncated = false;
    let killed = false;
    let forceKill;
    const kill = () => {
      if (killed) return;
      killed = true;
      proc.kill('SIGTERM');
      forceKill = setTimeout(() => proc.exitCode === null && proc.signalCode === null && proc.kill('SIGKILL'), FORCE_KILL_MS);
    };
    const take = (data) => {
      if (truncated) return undefined;
      const room = maxBuffer - bytes;
      if (data.length <= room) {
        bytes += data.length;
        return data;
      }
      truncated = true;
      proc.stdout.destroy();
      proc.stderr.destroy();
      kill();
      return room > 0 ? data.subarray(0, room) : undefined;
    };
    if (options.signal?.aborted) kill();
    else options.signal?.addEventListener('abort', kill, { once: true });
    const timer = options.timeout > 0 ? setTimeout(kill, options.timeout) : undefined;
    proc.stdout.on('data', (d) => {
      const c = take(d);
      if (c) stdout += out.write(c);
    });
    proc.stderr.on('data', (d) => {
      const c = take(d);
      if (c) stderr += err.write(c);
    });
    let spawnError;
    proc.on('error', (e) => (spawnError = e));
    proc.on('close', (code, signal) => {
      clearTimeout(timer);
      clearTimeout(forceKill);
      options.signal?.removeEventListener('abort', kill);
      if (!truncated) {
        stdout += out.end();
        stderr += err.end();
      }
      let exitCode = code ?? (signal ? 128 + (osConstants.signals[signal] ?? 0) : 1);
      if (spawnError) {
        exitCode = 1;
        if (!stderr) stderr = spawnError.message;
      }
      resolve({ stdout, stderr, code: truncated && exitCode === 0 ? 1 : exitCode, killed, truncated });
    });
  });
}
