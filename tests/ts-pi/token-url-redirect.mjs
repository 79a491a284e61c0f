// Loaded into TypeScript pi by the OAuth tests (`node --import`): its Anthropic token
// requests go to the test's token server (PI_OAUTH_ANTHROPIC_TOKEN_URL), the one endpoint
// pi 1.6 offers no setting for. Every other request is untouched. pi installs its own fetch
// (undici's) at start-up, so whatever is assigned to `globalThis.fetch` is wrapped too.
const target = process.env.PI_OAUTH_ANTHROPIC_TOKEN_URL;
const anthropicTokenUrl = "https://platform.claude.com/v1/oauth/token";
const redirecting = (fetch) => (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    if (target && url === anthropicTokenUrl) return fetch(target, init);
    return fetch(input, init);
};
let current = redirecting(globalThis.fetch);
Object.defineProperty(globalThis, "fetch", {
    configurable: true,
    get: () => current,
    set: (fetch) => {
        current = redirecting(fetch);
    },
});
