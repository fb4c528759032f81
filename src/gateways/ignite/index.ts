// What other gateways use of IGNITE's wire: which message types an agent may send, and the header-text
// rules a translated message must keep. Gateways import each other only through their index.ts
// (docs/ARCHITECTURE.md, checked by `npm run lint:deps`).
export { isSendableType } from './agent-names.js';
export { hasLineBreak, toLf } from './mime/header-text.js';
