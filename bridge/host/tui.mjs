// `@earendil-works/pi-tui` for out-of-process extensions. pi draws its own screen, so the
// components exist only to be constructed (inside renderers and `ctx.ui.custom` factories that
// the bridge never runs) and render nothing; the text helpers extensions also use for plain
// strings — widths, truncation, key names — work as in pi-tui.

import { hostModule } from './stub.mjs';

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[PX^_][^\x1b]*\x1b\\/g;

/** Columns `text` takes on a terminal: escape sequences take none, wide characters two. */
export function visibleWidth(text) {
  let width = 0;
  for (const ch of String(text).replace(ANSI, '')) {
    const cp = ch.codePointAt(0);
    if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0) || (cp >= 0x300 && cp < 0x370) || cp === 0x200b) continue;
    width += isWide(cp) ? 2 : 1;
  }
  return width;
}

function isWide(cp) {
  return (
    (cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0xa4cf) || (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) || (cp >= 0x1f300 && cp <= 0x1faff) || (cp >= 0x20000 && cp <= 0x3fffd)
  );
}

/** `text` cut to at most `width` columns, ending in `ellipsis` when cut. */
export function truncateToWidth(text, width, ellipsis = '...') {
  const s = String(text);
  if (visibleWidth(s) <= width) return s;
  const room = Math.max(0, width - visibleWidth(ellipsis));
  let out = '';
  let used = 0;
  for (const ch of s.replace(ANSI, '')) {
    const w = visibleWidth(ch);
    if (used + w > room) break;
    out += ch;
    used += w;
  }
  return out + ellipsis;
}

/** `text` broken into lines of at most `width` columns, at spaces where it can. */
export function wrapTextWithAnsi(text, width) {
  const lines = [];
  for (const para of String(text).split('\n')) {
    let line = '';
    for (const word of para.split(' ')) {
      const next = line ? `${line} ${word}` : word;
      if (visibleWidth(next) <= width || !line) line = next;
      else {
        lines.push(line);
        line = word;
      }
    }
    lines.push(line);
  }
  return lines;
}

/** Items whose text contains every character of `query`, in order (pi-tui's fuzzy filter). */
export function fuzzyFilter(items, query, getText = (x) => String(x)) {
  const q = String(query).toLowerCase();
  if (!q) return items;
  return items.filter((item) => {
    const t = getText(item).toLowerCase();
    let i = 0;
    for (const ch of t) if (ch === q[i]) i++;
    return i === q.length;
  });
}

const modifiers = (prefix) => (key) => `${prefix}+${key}`;
const KEY_FUNCTIONS = {
  ctrl: modifiers('ctrl'),
  shift: modifiers('shift'),
  alt: modifiers('alt'),
  super: modifiers('super'),
  ctrlShift: modifiers('ctrl+shift'),
  ctrlAlt: modifiers('ctrl+alt'),
  shiftAlt: modifiers('shift+alt'),
};

/** Key ids (`Key.enter` is `"enter"`, `Key.ctrl("c")` is `"ctrl+c"`), as pi-tui names them. */
export const Key = new Proxy(KEY_FUNCTIONS, {
  get(t, key) {
    if (key in t) return t[key];
    return typeof key === 'string' ? key : undefined;
  },
});

/** No key reaches an out-of-process extension, so none matches. */
export const matchesKey = () => false;
export const isKeyRelease = () => false;
export const isKeyRepeat = () => false;
export const parseKey = () => undefined;
export const CURSOR_MARKER = '\x1b_pi:c\x07';
export const renderFakeCursor = (text) => text;

/** A component that is never drawn: pi's screen is pi's own. */
export class Component {
  constructor(...args) {
    this.args = args;
    this.children = [];
  }
  render() {
    return [];
  }
  invalidate() {}
  handleInput() {}
  addChild(child) {
    this.children.push(child);
  }
  removeChild(child) {
    this.children = this.children.filter((c) => c !== child);
  }
  clear() {
    this.children = [];
  }
  setText(text) {
    this.text = text;
  }
  dispose() {}
}

const components = Object.fromEntries(
  ['Text', 'Box', 'Container', 'Spacer', 'Markdown', 'SelectList', 'SettingsList', 'Input', 'Editor', 'Loader', 'TruncatedText', 'Image', 'CancellableLoader']
    .map((name) => [name, { [name]: class extends Component {} }[name]]),
);

export const exports = {
  visibleWidth, truncateToWidth, wrapTextWithAnsi, fuzzyFilter, Key, matchesKey, isKeyRelease, isKeyRepeat, parseKey,
  CURSOR_MARKER, renderFakeCursor, Component, ...components,
};

export default hostModule('@earendil-works/pi-tui', exports);
