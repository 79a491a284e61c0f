// Loaded into TypeScript pi 1.6 by the GitHub Copilot tests (`node --import`): requests to
// GitHub and to the Copilot endpoint a token names go to the test's servers instead.
// PI_TEST_REDIRECTS is a JSON list of [from, to] URL prefixes, the first match wins; every
// other request is untouched. As in token-url-redirect.mjs, whatever pi later assigns to
// `globalThis.fetch` (undici's) is wrapped too.
const redirects = JSON.parse(process.env.PI_TEST_REDIRECTS ?? "[]");
const target = (url) => {
    for (const [from, to] of redirects) if (url.startsWith(from)) return to + url.slice(from.length);
    return undefined;
};
const redirecting = (fetch) => (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const to = target(url);
    if (to === undefined) return fetch(input, init);
    return typeof input === "string" || input instanceof URL ? fetch(to, init) : fetch(new Request(to, input), init);
};
let current = redirecting(globalThis.fetch);
Object.defineProperty(globalThis, "fetch", {
    configurable: true,
    get: () => current,
    set: (fetch) => {
        current = redirecting(fetch);
    },
});
