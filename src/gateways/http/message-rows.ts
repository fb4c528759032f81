import type { StoredEvent } from '../../core/events.js';

/** Where a message stands, as far as the scanned events tell. */
export type MessageStatus = 'sent' | 'claimed' | 'acked' | 'nacked' | 'dead' | 'requeued' | 'discarded';

/** One row of the message log: a `message.sent` event and what happened to that message since. */
export interface MessageRow {
  readonly cursor: number;
  readonly at: number;
  readonly mailbox: string;
  readonly messageId: string;
  readonly from: string;
  readonly type: string;
  readonly priority: string;
  status: MessageStatus;
  attempt: number;
  /** Known only while the envelope is still stored (live or dead-lettered). */
  thread?: string;
  bodyPreview?: string;
}

const STATUS_BY_EVENT: Readonly<Record<string, MessageStatus>> = {
  'message.claimed': 'claimed',
  'message.acked': 'acked',
  'message.nacked': 'nacked',
  'message.dead_lettered': 'dead',
  'message.requeued': 'requeued',
  'message.discarded': 'discarded',
};

/**
 * Folds message events (oldest first) into log rows: one per `message.sent`, keyed by mailbox and id
 * (a broadcast gives one row per mailbox), its status moved on by the later lifecycle events.
 */
export function foldMessageRows(events: readonly StoredEvent[]): MessageRow[] {
  const rows = new Map<string, MessageRow>();
  for (const e of events) {
    if (e.type === 'message.sent') {
      rows.set(`${e.mailbox}\n${e.messageId}`, {
        cursor: e.cursor,
        at: e.at,
        mailbox: e.mailbox,
        messageId: e.messageId,
        from: e.from,
        type: e.messageType,
        priority: e.priority,
        status: 'sent',
        attempt: 0,
      });
      continue;
    }
    if (!('mailbox' in e) || !('messageId' in e)) continue;
    const row = rows.get(`${e.mailbox}\n${e.messageId}`);
    const status = STATUS_BY_EVENT[e.type];
    if (row === undefined || status === undefined) continue;
    row.status = status;
    if (e.type === 'message.claimed') row.attempt = e.attempt;
  }
  return [...rows.values()].sort((a, b) => a.cursor - b.cursor);
}
