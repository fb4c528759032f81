import type { Envelope } from '../../core/envelope.js';
import { isFrom } from './origin-protocol.js';

/** Envelope headers of an IGNITE mirror that keep the file's own values (see ignite/queue-mirror.ts). */
const IGNITE_FROM = 'ignite-from';
const IGNITE_TYPE = 'ignite-type';
const IGNITE_BODY_OMITTED = 'ignite-body-omitted';

/** A mailbox message as an agent_sync `listen` shows it, before the timestamp is added. */
export interface AgentSyncText {
  readonly from: string;
  readonly type: string;
  readonly text: string;
}

/**
 * How a bus message from another gateway appears in an agent_sync mailbox (docs/bridging.md):
 * `{from, type, text}` with text = the body unchanged — an IGNITE YAML body, a yadon or N.E.K.O.
 * result document as JSON, plain text. For an IGNITE file, `from` and `type` are the file's From and
 * X-IGNITE-Type even where the envelope had to replace them (values that are no mailbox name or type);
 * a body too large for the bus says so instead of arriving empty.
 */
export function agentSyncTextOf(
  envelope: Pick<Envelope, 'from' | 'type' | 'body' | 'headers'>,
): AgentSyncText {
  if (!isFrom(envelope, 'ignite')) return { from: envelope.from, type: envelope.type, text: envelope.body };
  const h = envelope.headers;
  const isOmitted = h[IGNITE_BODY_OMITTED] === 'true';
  return {
    from: h[IGNITE_FROM] ?? envelope.from,
    type: h[IGNITE_TYPE] ?? envelope.type,
    text: isOmitted ? '(IGNITE message body larger than 1 MiB; read it from the queue file)' : envelope.body,
  };
}
