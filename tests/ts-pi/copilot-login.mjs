// Runs pi 1.6.0's own GitHub Copilot login (`login`) or token exchange (`refresh <entry>`)
// for tests/it/oauth_copilot.rs, against the test's servers (with copilot-redirect.mjs
// imported). The login's questions are answered with PI_TEST_ANSWER (blank: github.com); its
// events go to stderr, one JSON line each, and the credential 1.6 stores to stdout.
import { githubCopilotOAuth } from "./node_modules/@earendil-works/pi-ai/dist/auth/oauth/github-copilot.js";

const [mode, entry] = process.argv.slice(2);
const signal = new AbortController().signal;
let credential;
if (mode === "login") {
    credential = await githubCopilotOAuth.login({
        signal,
        prompt: async () => process.env.PI_TEST_ANSWER ?? "",
        notify: (event) => process.stderr.write(`${JSON.stringify(event)}\n`),
    });
} else if (mode === "refresh") {
    credential = await githubCopilotOAuth.refresh(JSON.parse(entry), signal);
} else {
    throw new Error("usage: copilot-login.mjs login | refresh <entry>");
}
process.stdout.write(`${JSON.stringify(credential)}\n`);
