// What other gateways use of N.E.K.O.'s wire: the agent name a channel runs as and a task as the wire
// shows it. Gateways import each other only through their index.ts (docs/ARCHITECTURE.md, checked by
// `npm run lint:deps`).
export { channelAgentName } from './neko-events.js';
export { publicTask } from './neko-wire.js';
