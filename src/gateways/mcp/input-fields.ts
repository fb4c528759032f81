import { z } from 'zod';
import { ENVELOPE_ID_PATTERN, MAX_BODY_BYTES, ONE_LINE_TEXT, PRIORITIES } from '../../core/envelope.js';
import { MAILBOX_NAME_PATTERN } from '../../core/names.js';

/*
 * Tool input fields. Each schema carries an error message that starts with one of our codes, so a
 * validation failure reported by the MCP SDK ("Input validation error: ... <message> at <field>") still
 * names the code the model (and docs/errors.md) knows.
 */

const usage = (what: string): { error: string } => ({ error: `USAGE_INVALID: ${what}` });

/** A mailbox (agent) name; a bad one is MAILBOX_NAME_INVALID. */
export const mailboxField = z
  .string(usage('expected a mailbox name (a string)'))
  .regex(MAILBOX_NAME_PATTERN, {
    error: `MAILBOX_NAME_INVALID: a mailbox name must match ${MAILBOX_NAME_PATTERN.source}`,
  });

/** Message type, e.g. `note`, `task`, `review`, `result`. */
export const messageTypeField = z
  .string(usage('expected a message type (a string)'))
  .regex(/^[A-Za-z0-9_][A-Za-z0-9_.:/-]{0,127}$/, {
    error:
      'ENVELOPE_INVALID: a message type is 1-128 letters, digits or _ . : / -, not starting with . : / -',
  })
  .describe('Message type: a short word the recipient acts on, e.g. "note", "task", "review", "result".');

/** Message body (text; JSON or YAML are fine as text). */
export const bodyField = z
  .string(usage('expected the body as a string'))
  .max(MAX_BODY_BYTES, { error: `ENVELOPE_INVALID: a body is at most ${MAX_BODY_BYTES} bytes` })
  .describe('The message text. Structured data can be sent as JSON or YAML text.');

/** Delivery priority. */
export const priorityField = z
  .enum(PRIORITIES, usage(`priority must be one of ${PRIORITIES.join(', ')}`))
  .optional()
  .describe('critical | high | normal (default) | low. Mailboxes hand out by priority, then send order.');

/** Conversation thread. */
export const threadField = z
  .string(usage('expected a thread (a string)'))
  .min(1, { error: 'ENVELOPE_INVALID: a thread is 1-256 characters without line breaks' })
  .max(256, { error: 'ENVELOPE_INVALID: a thread is 1-256 characters without line breaks' })
  .regex(ONE_LINE_TEXT, { error: 'ENVELOPE_INVALID: a thread is 1-256 characters without line breaks' })
  .optional()
  .describe('Conversation thread to group related messages; reuse the thread of a message you answer.');

/** Headers: a small string map. The envelope schema checks names and values in full. */
export const headersField = z
  .record(z.string(), z.string(), usage('headers must map names to string values'))
  .optional()
  .describe('Extra string headers (at most 64; names are letters, digits, _ . -; no line breaks in values).');

/** Envelope id, the idempotency key. */
export const messageIdField = z
  .string(usage('expected a message id (a string)'))
  .regex(ENVELOPE_ID_PATTERN, {
    error: `ENVELOPE_INVALID: a message id must match ${ENVELOPE_ID_PATTERN.source}`,
  })
  .optional()
  .describe(
    'Optional idempotency key. Sending again with the same id does nothing (isDuplicate: true), so a retry after an error cannot deliver twice.',
  );

/** A non-negative integer number of milliseconds in [0, max]. */
export function millisecondsField(name: string, max: number): z.ZodNumber {
  return z
    .number(usage(`${name} must be an integer number of milliseconds from 0 to ${max}`))
    .int()
    .min(0)
    .max(max);
}

/** A count limit in [1, max]. */
export function limitField(max: number): z.ZodNumber {
  return z
    .number(usage(`limit must be an integer from 1 to ${max}`))
    .int()
    .min(1)
    .max(max);
}
