// `@earendil-works/pi-agent-core` for out-of-process extensions: its agent loop is pi's, so
// only stand-ins are here (extensions import its types, which vanish when TypeScript is
// stripped, and rarely a value).

import { hostModule } from './stub.mjs';

export const exports = {};

export default hostModule('@earendil-works/pi-agent-core', exports);
