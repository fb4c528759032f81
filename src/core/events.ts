import { z } from 'zod';

/**
 * Everything that happens on the bus, as one discriminated union on `type`. Stores record message
 * events in the same transaction as the change; other layers append their own (escalation, tasks, agents).
 * Event `type`s are past tense and dotted; `data` never carries message bodies.
 */
export const busEventSchema = z.union([
  z.object({
    type: z.literal('message.sent'),
    mailbox: z.string(),
    messageId: z.string(),
    from: z.string(),
    messageType: z.string(),
    priority: z.string(),
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
