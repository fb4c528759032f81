import { isMap, parseDocument, stringify } from 'yaml';
import type { Envelope, Priority } from '../../core/envelope.js';
import { hasLineBreak, isSendableType, toLf } from '../ignite/index.js';

/** The X-IGNITE-Type written when the envelope type cannot be one (it holds `/` or starts with `.`). */
export const FALLBACK_IGNITE_TYPE = 'message';

/** The IGNITE side of a bus message: what goes into the MIME headers and the YAML body. */
export interface IgniteMessage {
  readonly type: string;
  readonly priority: Priority;
  readonly body: string;
  readonly threadId?: string;
}

function isYamlMapping(text: string): boolean {
  try {
    const doc = parseDocument(text, { uniqueKeys: false });
    return doc.errors.length === 0 && isMap(doc.contents);
  } catch {
    // The parser gave up: certainly not a mapping.
    return false;
  }
}

/**
 * How a bus message from another gateway is written into an IGNITE queue (docs/bridging.md): X-IGNITE-Type
 * is the envelope type, priority and thread carry over, and the body is YAML. A body that already is a
 * YAML mapping (an IGNITE body, a yadon or N.E.K.O. result document, any JSON object) is kept as it is;
 * anything else (agent_sync text) becomes the literal block of body field `message`, which reads back
 * exactly. A type IGNITE cannot carry is written as `message` and kept as body field `type`. Line ends
 * become LF (spec/ignite.md 2.3).
 */
export function igniteMessageOf(
  envelope: Pick<Envelope, 'type' | 'priority' | 'body' | 'thread'>,
): IgniteMessage {
  const isTypeKept = isSendableType(envelope.type) && !hasLineBreak(envelope.type);
  const body = toLf(envelope.body);
  const fields = isTypeKept ? { message: body } : { type: envelope.type, message: body };
  return {
    type: isTypeKept ? envelope.type : FALLBACK_IGNITE_TYPE,
    priority: envelope.priority,
    body: isTypeKept && isYamlMapping(body) ? body : stringify(fields, { lineWidth: 0 }),
    ...(envelope.thread !== undefined && !hasLineBreak(envelope.thread) && { threadId: envelope.thread }),
  };
}
