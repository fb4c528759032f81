import type { StoredEvent } from '../../core/events.js';

/** Characters of a body shown as a message's preview. */
export const PREVIEW_CHARS = 280;

/** The first {@link PREVIEW_CHARS} characters (code points) of `body`. */
export function previewOf(body: string): string {
  return Array.from(body.slice(0, PREVIEW_CHARS * 2))
    .slice(0, PREVIEW_CHARS)
    .join('');
}

/**
 * An event as the gateway hands it out on the event stream: a `message.sent` without the body and
 * headers it keeps (a page may be open for hours; bodies are fetched when a message is opened), with a
 * `bodyPreview` instead.
 */
export function publicEvent(event: StoredEvent): StoredEvent | (StoredEvent & { bodyPreview: string }) {
  if (event.type !== 'message.sent' || event.body === undefined) return event;
  const { body, headers: _headers, isBodyCut: _cut, ...rest } = event;
  return { ...rest, bodyPreview: previewOf(body) };
}

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
  /** How many times the message went back to its mailbox: nacked, lease run out, requeued from dead. */
  retries: number;
  /** True once the message was dead-lettered, even when it was requeued and acked afterwards. */
  wasDead: boolean;
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
        retries: 0,
        wasDead: false,
        ...(e.thread !== undefined && { thread: e.thread }),
        ...(e.body !== undefined && { bodyPreview: previewOf(e.body) }),
      });
      continue;
    }
    if (!('mailbox' in e) || !('messageId' in e)) continue;
    const row = rows.get(`${e.mailbox}\n${e.messageId}`);
    const status = STATUS_BY_EVENT[e.type];
    if (row === undefined || status === undefined) continue;
    row.status = status;
    if (e.type === 'message.claimed') {
      // Every claim after the first is a retry: the message was nacked, its lease ran out or it was
      // requeued from the dead letters.
      if (row.attempt > 0) row.retries += 1;
      row.attempt = e.attempt;
    }
    if (e.type === 'message.dead_lettered') row.wasDead = true;
  }
  return [...rows.values()].sort((a, b) => a.cursor - b.cursor);
}
