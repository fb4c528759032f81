// The translation between wires that the gateways use: a message sent through one protocol, read by an
// agent attached through another. Gateways import each other only through their index.ts
// (docs/ARCHITECTURE.md, checked by `npm run lint:deps`).
export { agentSyncTextOf } from './agent-sync-text.js';
export { igniteMessageOf } from './ignite-message.js';
export { nekoResultEnvelope, nekoTaskOf } from './neko-task.js';
export { ORIGIN_HEADER, originHeaders } from './origin-protocol.js';
export { RESULT_TYPE, yadonResultEnvelope, yadonTaskOf } from './yadon-task.js';
