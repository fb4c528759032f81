import { z } from 'zod';
import { envelopeSchema } from '../../core/envelope.js';
import { MusubiError } from '../../core/errors.js';
import { busEventSchema, sentEvent, type BusEvent, type StoredEvent } from '../../core/events.js';

const time = z.number().int().nonnegative();

/**
 * The state every message record carries, so the newest record of a message subject alone says
 * where the message stands. `position` orders the mailbox (with priority); a record without one
 * takes its own stream sequence (the `sent` and `requeued` records start a new place in line).
 */
const messageState = {
  mailbox: z.string(),
  /** As appended, attempt 0; the live count is `attempt`. */
  envelope: envelopeSchema,
  attempt: z.number().int().nonnegative(),
  position: z.number().int().positive().optional(),
  isLeased: z.boolean(),
  /** When a leased or delayed message becomes claimable; when a ready one became so. */
  availableAt: time,
  /** Store-clock time of the change (the event time). */
  at: time,
};

/** One record of the journal stream; parsed with this schema whenever it is read back. */
export const journalRecordSchema = z.discriminatedUnion('op', [
  z.strictObject({ op: z.literal('sent'), ...messageState }),
  z.strictObject({ op: z.literal('claimed'), ...messageState }),
  z.strictObject({ op: z.literal('extended'), ...messageState }),
  z.strictObject({ op: z.literal('nacked'), ...messageState, delayMs: time }),
  z.strictObject({ op: z.literal('requeued'), ...messageState }),
  z.strictObject({ op: z.literal('dead'), ...messageState, reason: z.string() }),
  z.strictObject({
    op: z.literal('acked'),
    mailbox: z.string(),
    messageId: z.string(),
    at: time,
    /** The delivery acked (its place in line and attempt), so a retried ack can tell it landed. */
    delivery: z.strictObject({ position: z.number().int().positive(), attempt: z.number().int() }).optional(),
  }),
  z.strictObject({ op: z.literal('discarded'), mailbox: z.string(), messageId: z.string(), at: time }),
  z.strictObject({ op: z.literal('event'), event: busEventSchema, at: time }),
]);

export type JournalRecord = z.infer<typeof journalRecordSchema>;
/** A record that says where a live or dead message stands. */
export type MessageRecord = Exclude<JournalRecord, { op: 'acked' } | { op: 'discarded' } | { op: 'event' }>;

/** Parses record bytes; throws STORE_CORRUPT naming the sequence when they fail the schema. */
export function parseJournalRecord(text: string, seq: number): JournalRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new MusubiError('STORE_CORRUPT', `journal record ${seq} is not JSON`, { cause: err });
  }
  const result = journalRecordSchema.safeParse(value);
  if (!result.success) {
    throw new MusubiError('STORE_CORRUPT', `journal record ${seq} fails the record schema`, {
      details: { seq, issues: result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`) },
    });
  }
  return result.data;
}

/** True for records that describe a message (live or dead) rather than its removal or an event. */
export function isMessageRecord(record: JournalRecord): record is MessageRecord {
  return record.op !== 'acked' && record.op !== 'discarded' && record.op !== 'event';
}

function messageEvent(record: JournalRecord): BusEvent {
  if (record.op === 'event') return record.event;
  if (record.op === 'acked' || record.op === 'discarded') {
    const type = record.op === 'acked' ? 'message.acked' : 'message.discarded';
    return { type, mailbox: record.mailbox, messageId: record.messageId };
  }
  const ids = { mailbox: record.mailbox, messageId: record.envelope.id };
  switch (record.op) {
    case 'sent':
      return sentEvent(record.mailbox, record.envelope);
    case 'claimed':
      return { type: 'message.claimed', ...ids, attempt: record.attempt, leaseUntil: record.availableAt };
    case 'extended':
      return { type: 'message.lease_extended', ...ids, leaseUntil: record.availableAt };
    case 'nacked':
      return { type: 'message.nacked', ...ids, delayMs: record.delayMs };
    case 'dead':
      return { type: 'message.dead_lettered', ...ids, reason: record.reason };
    case 'requeued':
      return { type: 'message.requeued', ...ids };
  }
}

/** The event a record stands for, with its cursor (the stream sequence) and time. */
export function recordEvent(record: JournalRecord, seq: number): StoredEvent {
  return { ...messageEvent(record), cursor: seq, at: record.at };
}
