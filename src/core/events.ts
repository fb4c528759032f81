import { z } from 'zod';
import type { Envelope } from './envelope.js';

/** How much of a body `message.sent` keeps: enough to read a message after it is acked and deleted. */
export const SENT_BODY_CHARS = 4096;

/**
 * Everything that happens on the bus, as one discriminated union on `type`. Stores record message
 * events in the same transaction as the change; other layers append their own (escalation, tasks, agents).
 * Event `type`s are past tense and dotted. Only `message.sent` carries (the head of) a message body; the
 * event stream sends a preview of it (see the HTTP gateway's events route).
 */
export const busEventSchema = z.union([
  z.object({
    type: z.literal('message.sent'),
    mailbox: z.string(),
    messageId: z.string(),
    from: z.string(),
    messageType: z.string(),
    priority: z.string(),
    // A copy of what was sent, so the log can still show a message after it was acked and deleted
    // (bounded by the event log's retention). Absent in events written before this copy was kept.
    thread: z.string().optional(),
    headers: z.record(z.string(), z.string()).optional(),
    body: z.string().optional(),
    /** True when `body` is only the first {@link SENT_BODY_CHARS} characters of the body. */
    isBodyCut: z.boolean().optional(),
  }),
  z.object({
    type: z.literal('message.claimed'),
    mailbox: z.string(),
    messageId: z.string(),
    attempt: z.number(),
    leaseUntil: z.number(),
  }),
  z.object({ type: z.literal('message.acked'), mailbox: z.string(), messageId: z.string() }),
  z.object({
    type: z.literal('message.nacked'),
    mailbox: z.string(),
    messageId: z.string(),
    delayMs: z.number(),
  }),
  z.object({
    type: z.literal('message.lease_extended'),
    mailbox: z.string(),
    messageId: z.string(),
    leaseUntil: z.number(),
  }),
  z.object({
    type: z.literal('message.dead_lettered'),
    mailbox: z.string(),
    messageId: z.string(),
    reason: z.string(),
  }),
  z.object({ type: z.literal('message.requeued'), mailbox: z.string(), messageId: z.string() }),
  z.object({ type: z.literal('message.discarded'), mailbox: z.string(), messageId: z.string() }),
  z.object({
    type: z.literal('escalation'),
    mailbox: z.string(),
    messageId: z.string(),
    attempts: z.number(),
    reason: z.string(),
  }),
  // Open-ended events from higher layers (tasks, agents, teams, gateways) carry their own data.
  z.object({
    type: z.templateLiteral([z.enum(['task', 'agent', 'team', 'gateway', 'budget', 'run']), '.', z.string()]),
    data: z.record(z.string(), z.unknown()),
  }),
]);

/** One bus event as produced by a component. */
export type BusEvent = z.infer<typeof busEventSchema>;

/** A bus event as stored in the event log: a cursor (strictly increasing) and a time. */
export type StoredEvent = BusEvent & { readonly cursor: number; readonly at: number };

/**
 * The `message.sent` event of `envelope` put into `mailbox`: every store writes this one shape, with the
 * thread, the headers (when there are any) and the first {@link SENT_BODY_CHARS} characters of the body.
 */
export function sentEvent(mailbox: string, envelope: Envelope): Extract<BusEvent, { type: 'message.sent' }> {
  const { id: messageId, from, type: messageType, priority, thread, headers, body } = envelope;
  const isBodyCut = body.length > SENT_BODY_CHARS;
  // Built field by field (this runs on every send): conditional spreads cost several times more on V8.
  const event: Extract<BusEvent, { type: 'message.sent' }> = {
    type: 'message.sent',
    mailbox,
    messageId,
    from,
    messageType,
    priority,
  };
  if (thread !== undefined) event.thread = thread;
  if (Object.keys(headers).length > 0) event.headers = headers;
  event.body = isBodyCut ? body.slice(0, SENT_BODY_CHARS) : body;
  if (isBodyCut) event.isBodyCut = isBodyCut;
  return event;
}
