// The yadon gateway's public face for the other gateways: the documents its tasks end in.
export type { ErrorDoc, ResultDoc, TaskInput } from './result-doc.js';
