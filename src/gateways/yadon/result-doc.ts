import { firstCodePoints, pyStrip } from '../../core/python/text.js';

/** A worker's or the manager's `result` document (spec yadon.md 3.2); key order is the wire order. */
export type ResultDoc = {
  readonly type: 'result';
  readonly id: string;
  readonly from: string;
  readonly status: string;
  readonly payload: { readonly output: string; readonly summary: string };
};

/** A server-generated `error` document (spec yadon.md 3.4). */
export type ErrorDoc = {
  readonly type: 'error';
  readonly from: string;
  readonly message: string;
};

/**
 * One collected sub-result as the manager received it: normally a {@link ResultDoc} or an
 * {@link ErrorDoc}, but a worker's reply is collected unchanged, so any JSON object.
 */
export type CollectedEntry = Readonly<Record<string, unknown>>;

/** Summary shown when an output is blank. */
export const EMPTY_SUMMARY = '(出力なし)';
const SUMMARY_CODE_POINTS = 200;

/** Builds a `result` document with the wire key order. */
export function resultDoc(fields: Omit<ResultDoc, 'type'>): ResultDoc {
  return { type: 'result', id: fields.id, from: fields.from, status: fields.status, payload: fields.payload };
}

/** Builds an `error` document. */
export function errorDoc(from: string, message: string): ErrorDoc {
  return { type: 'error', from, message };
}

/** A worker summary: the first 200 code points of the stripped output, or `(出力なし)` when blank. */
export function summarize(output: string): string {
  const stripped = pyStrip(output);
  return stripped === '' ? EMPTY_SUMMARY : firstCodePoints(stripped, SUMMARY_CODE_POINTS);
}

/**
 * How executing one task ended: a reply document, a crash worth retrying (the agent process was killed
 * from outside), or a cancel (the host is stopping; the task is left for the restart rules).
 */
export type TaskOutcome =
  | { readonly kind: 'done'; readonly doc: ResultDoc | ErrorDoc }
  | { readonly kind: 'crashed'; readonly reason: string }
  | { readonly kind: 'canceled' };

/** A task as an agent executes it. */
export interface TaskInput {
  readonly id: string;
  readonly instruction: string;
  /** Absolute working directory of the task. */
  readonly projectDir: string;
}
