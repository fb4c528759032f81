import type { Envelope, EnvelopeInput } from '../../core/envelope.js';
import { pyJson } from '../../core/python/json-dumps.js';
import type { ErrorDoc, ResultDoc, TaskInput } from '../yadon/index.js';
import { originHeaders } from './origin-protocol.js';

/** The type of every reply document a task-running gateway mails back (yadon, N.E.K.O.). */
export const RESULT_TYPE = 'result';

/**
 * The yadon task a bus message from another gateway runs as (spec/yadon.md 4.6, docs/bridging.md): id =
 * the envelope id, instruction = the body unchanged (agent_sync text, an IGNITE YAML body), project_dir =
 * the agent's default. Null for a `result`: a reply addressed to the agent is never run as a task, so two
 * task runners cannot answer each other forever.
 */
export function yadonTaskOf(
  envelope: Pick<Envelope, 'id' | 'type' | 'body'>,
  defaultProjectDir: string,
): TaskInput | null {
  if (envelope.type === RESULT_TYPE) return null;
  return { id: envelope.id, instruction: envelope.body, projectDir: defaultProjectDir };
}

/**
 * The reply to a bus sender: type `result`, body = the reply document's JSON exactly as the socket would
 * have written it, thread = the envelope id of the task, marked as coming from yadon.
 */
export function yadonResultEnvelope(reply: {
  readonly agent: string;
  readonly to: string;
  readonly taskMessageId: string;
  readonly doc: ResultDoc | ErrorDoc;
}): EnvelopeInput {
  return {
    from: reply.agent,
    to: reply.to,
    type: RESULT_TYPE,
    thread: reply.taskMessageId,
    headers: originHeaders('yadon'),
    body: pyJson(reply.doc, { nonFinite: 'null' }),
  };
}
