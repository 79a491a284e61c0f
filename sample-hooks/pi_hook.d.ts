/**
 * Types for pi_hook.js, the dependency-free Node helper for pi hooks. Put both files next to
 * your hook; with TypeScript or a `// @ts-check` JavaScript file:
 *
 *   const { Hook, block, allow } = require('./pi_hook.js');   // or: import ... from
 *
 * Field names are the protocol's (snake_case; hook-protocol.md is the normative description);
 * pi's own data (messages, content blocks) keeps pi's camelCase shape.
 */

/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

// ---------------------------------------------------------------------------------------------
// Content and replies
// ---------------------------------------------------------------------------------------------

export interface TextBlock { type: 'text'; text: string }
export interface ImageBlock { type: 'image'; data: string; mimeType: string }
export type ContentBlock = TextBlock | ImageBlock;
/** What a tool handler or `ctx.progress` accepts: a string, one block, or blocks. */
export type ContentLike = string | ContentBlock | ContentBlock[];

/** `tool_call` (gate): block, or patch the input (RFC 7386 merge patch), or neither. */
export interface GateReply { block?: boolean; reason?: string; patch?: Record<string, Json> }
/** `input` (chain). */
export interface InputReply { action?: 'continue' | 'transform' | 'handled'; text?: string }
/** `tool_result` (chain): a partial patch of the result. */
export interface ToolResultReply { content?: ContentBlock[]; details?: Json; is_error?: boolean }
/** A custom message a hook puts into the context. */
export interface InjectedMessage {
  custom_type: string;
  content: string | ContentBlock[];
  display?: boolean;
  details?: Json;
}
/** `turn_end` / `agent_before_settle` (boundary). */
export interface BoundaryReply {
  entries?: Json[];
  messages?: InjectedMessage[];
  continue?: boolean;
}
/** `session_before_*` (cancelable): cancel, or event-specific replacement fields. */
export interface CancelableReply { cancel?: boolean; [field: string]: Json | undefined }
/** `resources_discover` (collect). */
export interface DiscoverReply { skill_paths?: string[]; prompt_paths?: string[]; theme_paths?: string[] }
/** `project_trust` (first decider). */
export interface TrustReply { trusted?: 'yes' | 'no' | 'undecided'; remember?: boolean }
/** `user_bash` (first decider): the hook ran the command itself. */
export interface UserBashReply {
  result?: { output: string; exit_code: number | null; cancelled?: boolean; truncated?: boolean };
}

/** What a tool handler may return. */
export interface ToolResult { content: ContentBlock[]; details?: Json; is_error?: boolean }
export type ToolReturn = ContentLike | ToolResult | undefined;
/** What a command handler may return: text to show, a `{text}` object, or nothing. */
export type CommandReturn = string | { text?: string } | undefined | void;

// ---------------------------------------------------------------------------------------------
// Event payloads (the common ones typed; every other event's payload is an object)
// ---------------------------------------------------------------------------------------------

export interface ToolCallPayload { tool_call_id: string; tool_name: string; input: Record<string, Json> }
export interface ToolResultPayload extends ToolCallPayload {
  content: ContentBlock[];
  details: Json;
  is_error: boolean;
}
export interface InputPayload { text: string; source: 'interactive' | 'rpc' | 'print' | 'extension' | string; images?: ImageBlock[] }
export interface SessionStartPayload { reason: string; [field: string]: Json }
export interface SessionShutdownPayload { reason: string; [field: string]: Json }

/** Reply types by event; events not listed take any object (or nothing). */
export interface EventReplies {
  tool_call: GateReply;
  input: InputReply;
  tool_result: ToolResultReply;
  turn_end: BoundaryReply;
  agent_before_settle: BoundaryReply;
  project_trust: TrustReply;
  user_bash: UserBashReply;
  resources_discover: DiscoverReply;
  session_before_switch: CancelableReply;
  session_before_fork: CancelableReply;
  session_before_compact: CancelableReply;
  session_before_tree: CancelableReply;
}
export interface EventPayloads {
  tool_call: ToolCallPayload;
  tool_result: ToolResultPayload;
  input: InputPayload;
  session_start: SessionStartPayload;
  session_shutdown: SessionShutdownPayload;
}
type PayloadOf<E extends string> = E extends keyof EventPayloads ? EventPayloads[E] : Record<string, Json>;
type ReplyOf<E extends string> = E extends keyof EventReplies ? EventReplies[E] : Record<string, Json>;
type MaybePromise<T> = T | Promise<T>;

// ---------------------------------------------------------------------------------------------
// hello
// ---------------------------------------------------------------------------------------------

export interface HookModel {
  provider: string;
  id: string;
  name?: string;
  api: string;
  base_url?: string;
  reasoning: boolean;
  input: string[];
  context_window?: number;
  max_tokens?: number;
  cost?: { input: number; output: number; cache_read: number; cache_write: number };
}

export interface Hello {
  type: 'hello';
  protocol_versions: number[];
  host: { name: string; version: string };
  /** The name the host knows this hook by (settings `name`, else the file name). */
  hook_name: string;
  cwd: string;
  mode: 'interactive' | 'print' | 'json' | 'rpc';
  /** Absent with `--no-session` and in `pi hook test` / `check` / `replay`. */
  session_id?: string;
  session_file?: string;
  config: Record<string, Json>;
  capabilities: { ui: Partial<Record<'notify' | 'confirm' | 'select' | 'input' | 'editor' | 'set_status' | 'set_widget' | 'set_title' | 'set_editor_text' | 'set_theme', boolean>>; methods: string[] };
  model?: HookModel;
  flags?: Record<string, boolean | string>;
}

// ---------------------------------------------------------------------------------------------
// The helper
// ---------------------------------------------------------------------------------------------

/** The host answered a `call` with an error (or the connection closed: code `closed`). */
export class HostError extends Error {
  code: 'unavailable' | 'invalid_params' | 'unknown_method' | 'not_found' | 'failed' | 'cancelled' | 'busy' | 'too_large' | 'closed' | string;
  hostMessage: string;
  constructor(code: string, message: string);
}

export interface Subscription { event: string; tools?: string[]; deadline_ms?: number }

export class Context<P = Record<string, Json>> {
  readonly hook: Hook;
  readonly kind: 'event' | 'tool_execute' | 'command' | 'complete';
  /** Undefined for notify events. */
  readonly id: number | undefined;
  /** The event, tool or command name. */
  readonly name: string;
  readonly payload: P;
  readonly deadlineMs: number | undefined;
  /** The model's tool call id (`tool_execute` only). */
  readonly callId: string | undefined;
  /** True once the host sent `cancel` for this request. */
  readonly cancelled: boolean;
  /** Fires on `cancel`: pass it to fetch, child_process, timers. */
  readonly signal: AbortSignal;
  readonly config: Record<string, Json>;
  readonly cwd: string;
  onCancel(fn: () => void): void;
  /** Throws if cancelled (the reply is then dropped). */
  checkCancelled(): void;
  /** Partial tool output (cumulative: replaces the previous one); tools only. */
  progress(content: ContentLike, details?: Json): void;
  call<T = Json>(method: string, params?: Record<string, Json>): Promise<T>;
  /** `ui.set_theme`: switch pi's theme (and the user's `theme` setting), as 1.6's `ctx.ui.setTheme`. */
  setTheme(name: string): Promise<{ success: boolean; error?: string }>;
  /** `model.complete`: one request through pi's providers and keys; resolves to the assistant message (pi-ai's shape). `onEvent` gets `text_delta` / `thinking_delta` events; `signal` withdraws it (rejects with HostError `cancelled`). */
  complete(params: Record<string, Json>, options?: { signal?: AbortSignal; onEvent?: (event: Json) => void }): Promise<Json>;
}

export interface OnOptions {
  /** Tool-name filters (exact or glob) for tool events. */
  tools?: string[];
  deadlineMs?: number;
  /** Serve this event one at a time, in order with notify events. */
  ordered?: boolean;
}

export interface ToolDecl {
  name: string;
  description: string;
  /** A JSON Schema of type `object`. */
  parameters?: Record<string, Json>;
  promptSnippet?: string;
  promptGuidelines?: string[];
  sequential?: boolean;
  /** `direct` (default), `model-only`, `deferred` or `hidden` (hook-protocol.md, `register`). */
  exposure?: 'direct' | 'model-only' | 'deferred' | 'hidden';
  /** The JSON Schema (an object) of the results' `structured_content`. */
  outputSchema?: Record<string, Json>;
}

/** Argument completions for `/name ` (`complete`): strings or `{value, description}`. */
export type CompletionItems = Array<string | { value: string; description?: string }>;

export interface CommandOptions {
  /** Answers `complete` for the command's arguments; registers it with `completions: true`. */
  complete?: (prefix: string, ctx: Context<string>) => MaybePromise<CompletionItems | undefined | null>;
}

export type EventHandler<E extends string> = (payload: PayloadOf<E>, ctx: Context<PayloadOf<E>>) => MaybePromise<ReplyOf<E> | undefined | void>;

export class Hook {
  constructor(name: string, opts?: { version?: string; fail?: 'closed' | 'open' });
  readonly name: string;
  /** The host's `hello` (empty until it arrives). */
  hello: Hello | Record<string, never>;
  config: Record<string, Json>;
  protocolVersion: number | undefined;
  readonly cwd: string;
  readonly capabilities: Hello['capabilities'] | Record<string, never>;

  on<E extends string>(event: E, handler: EventHandler<E>): this;
  on<E extends string>(event: E, opts: OnOptions, handler: EventHandler<E>): this;
  tool(decl: ToolDecl, handler: (args: Record<string, Json>, ctx: Context<Record<string, Json>>) => MaybePromise<ToolReturn>): this;
  /**
   * A tool named at run time: part of `register` before the handshake, `tools.register` after
   * it (a name added this way before is replaced). Resolves to the names registered.
   */
  addTool(decl: ToolDecl, handler: (args: Record<string, Json>, ctx: Context<Record<string, Json>>) => MaybePromise<ToolReturn>): Promise<string[]>;
  command(name: string, handler: (args: string, ctx: Context<string>) => MaybePromise<CommandReturn>, opts?: CommandOptions): this;
  command(name: string, description: string, handler: (args: string, ctx: Context<string>) => MaybePromise<CommandReturn>, opts?: CommandOptions): this;
  flag(name: string, opts?: { description?: string; type?: 'boolean' | 'string'; default?: boolean | string }): this;
  /** Runs before `register`; a promise it returns is awaited first (a rejection ends the hook). */
  onHello(fn: (hello: Hello) => void | Promise<void>): this;
  onShutdown(fn: (reason: string) => void): this;
  log(message: string, level?: 'debug' | 'info' | 'warn' | 'error'): void;
  /** Ask the host; resolves to `value`, rejects with HostError. */
  call<T = Json>(method: string, params?: Record<string, Json>): Promise<T>;
  /** `ui.set_theme`: switch pi's theme (and the user's `theme` setting), as 1.6's `ctx.ui.setTheme`. */
  setTheme(name: string): Promise<{ success: boolean; error?: string }>;
  /** `model.complete`: one request through pi's providers and keys; resolves to the assistant message (pi-ai's shape). `onEvent` gets `text_delta` / `thinking_delta` events; `signal` withdraws it (rejects with HostError `cancelled`). */
  complete(params: Record<string, Json>, options?: { signal?: AbortSignal; onEvent?: (event: Json) => void }): Promise<Json>;
  subscribe<E extends string>(event: E, handler: EventHandler<E>): Promise<Subscription[]>;
  subscribe<E extends string>(event: E, opts: OnOptions, handler: EventHandler<E>): Promise<Subscription[]>;
  unsubscribe(...events: string[]): Promise<Subscription[]>;
  /** Handshake, then serve until stdin EOF or `shutdown`. */
  run(): void;
}

export function block(reason: string): GateReply;
export function patch(obj: Record<string, Json>): GateReply;
export function allow(): Record<string, never>;
export function transform(text: string): InputReply;
export function handled(): InputReply;
export function text(s: string): TextBlock;
export function toolResult(content: ContentLike, details?: Json): ToolResult;
export const PROTOCOL_VERSIONS: number[];
