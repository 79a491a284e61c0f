// `@earendil-works/pi-ai` (and its `/compat` entry) for out-of-process extensions: what pi 1.6
// gives extensions that works without pi's providers — TypeBox's `Type`, `StringEnum` and
// `uuidv7` — as pi 1.6 defines them — and the model calls (`complete`, `completeSimple`,
// `stream`, `streamSimple`), which pi runs with its own providers and keys (`lib/model.mjs`).

import { randomBytes } from 'node:crypto';
import { Type } from 'typebox';
import { complete, stream } from '../lib/model.mjs';
import { hostModule } from './stub.mjs';

/** pi 1.6's `StringEnum`: `{type: "string", enum}`, which every provider's schema dialect takes. */
export function StringEnum(values, options) {
  return Type.Unsafe({
    type: 'string',
    enum: values,
    ...(options?.description && { description: options.description }),
    ...(options?.default && { default: options.default }),
  });
}

let lastMs = 0;
let seq = 0;

/** A UUID version 7 (time-ordered), monotonic within this process as pi-ai's is. */
export function uuidv7(timestampMs) {
  let ms = timestampMs ?? Date.now();
  if (timestampMs === undefined) {
    if (ms <= lastMs) {
      ms = lastMs;
      seq++;
    } else {
      seq = 0;
    }
    lastMs = ms;
  }
  const b = randomBytes(16);
  const t = BigInt(ms);
  for (let i = 5; i >= 0; i--) b[i] = Number((t >> BigInt((5 - i) * 8)) & 0xffn);
  b[6] = 0x70 | ((seq >> 8) & 0x0f);
  b[7] = seq & 0xff;
  b[8] = 0x80 | (b[8] & 0x3f);
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export const exports = { Type, StringEnum, uuidv7, complete, completeSimple: complete, stream, streamSimple: stream };

export default hostModule('@earendil-works/pi-ai', exports);
