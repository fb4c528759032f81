// What other gateways use of the HTTP gateway: the browser-request guard and the malformed-request
// reply that the N.E.K.O. control API shares with it. Gateways import each other only through their
// index.ts (docs/ARCHITECTURE.md, checked by `npm run lint:deps`).
export { clientErrorHandler } from './client-error.js';
export { RequestGuard } from './request-guard.js';
