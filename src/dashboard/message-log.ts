import type { BusEvent, MessageRow } from '../gateways/http/api-schemas.js';

/** The message log's filter: each field matches case-insensitively as a substring; empty matches all. */
export interface LogFilter {
  readonly agent: string;
  readonly type: string;
  readonly thread: string;
}

const STATUS_BY_EVENT: Readonly<Record<string, string>> = {
  'message.claimed': 'claimed',
  'message.acked': 'acked',
  'message.nacked': 'nacked',
  'message.dead_lettered': 'dead',
  'message.requeued': 'requeued',
  'message.discarded': 'discarded',
};

const key = (mailbox: string, messageId: string): string => `${mailbox}\n${messageId}`;
const has = (value: string | undefined, needle: string): boolean =>
  needle === '' || (value ?? '').toLowerCase().includes(needle.toLowerCase());

/**
 * The page's message log: rows from `GET /api/messages` plus live `message.*` events, newest kept up to
 * `capacity`. A row's status follows its lifecycle events; `merge` adds rows and fills in the thread and body
 * preview only the REST reply carries. Pure logic (no DOM), so it is tested under Node.
 */
export class MessageLog {
  readonly #rows = new Map<string, MessageRow>();
  readonly #capacity: number;
  /** The newest event cursor the gateway's message list has covered (the next `?after=`). */
  coveredCursor = 0;

  constructor(capacity = 500) {
    this.#capacity = capacity;
  }

  /**
   * Adds rows from the gateway, or fills in thread and body preview of rows events already created
   * (their status stays: live events are never older than a list the gateway computed earlier).
   */
  merge(rows: readonly MessageRow[]): void {
    for (const row of rows) {
      const k = key(row.mailbox, row.messageId);
      const known = this.#rows.get(k);
      // A newer row under a known key is a new message under an id that was acked or discarded.
      if (known === undefined || row.cursor > known.cursor) this.#rows.set(k, row);
      else {
        this.#rows.set(k, {
          ...known,
          ...(row.thread === undefined ? {} : { thread: row.thread }),
          ...(row.bodyPreview === undefined ? {} : { bodyPreview: row.bodyPreview }),
        });
      }
    }
    this.#trim();
  }

  /** Applies one live event; resolves true when the log changed. */
  apply(event: BusEvent): boolean {
    if (event.mailbox === undefined || event.messageId === undefined) return false;
    const k = key(event.mailbox, event.messageId);
    if (event.type === 'message.sent') {
      // The same event twice (REST list and live feed) changes nothing; a newer one is a new message
      // under an id that was acked or discarded, and replaces the old row.
      const known = this.#rows.get(k);
      if (known !== undefined && known.cursor >= event.cursor) return false;
      this.#rows.set(k, {
        cursor: event.cursor,
        at: event.at,
        mailbox: event.mailbox,
        messageId: event.messageId,
        from: event.from ?? '?',
        type: event.messageType ?? '?',
        priority: event.priority ?? 'normal',
        status: 'sent',
        attempt: 0,
      });
      this.#trim();
      return true;
    }
    const status = STATUS_BY_EVENT[event.type];
    const row = this.#rows.get(k);
    if (status === undefined || row === undefined) return false;
    this.#rows.set(k, { ...row, status, attempt: event.attempt ?? row.attempt });
    return true;
  }

  /** Rows matching `filter`, newest first. */
  list(filter: LogFilter): MessageRow[] {
    return [...this.#rows.values()]
      .filter(
        (r) =>
          (has(r.from, filter.agent) || has(r.mailbox, filter.agent)) &&
          has(r.type, filter.type) &&
          has(r.thread, filter.thread),
      )
      .sort((a, b) => b.cursor - a.cursor);
  }

  /** Forgets every row and the covered cursor. */
  clear(): void {
    this.#rows.clear();
    this.coveredCursor = 0;
  }

  /** How many rows are held. */
  get size(): number {
    return this.#rows.size;
  }

  #trim(): void {
    if (this.#rows.size <= this.#capacity) return;
    const oldest = [...this.#rows.entries()].sort((a, b) => a[1].cursor - b[1].cursor);
    for (const [k] of oldest.slice(0, this.#rows.size - this.#capacity)) this.#rows.delete(k);
  }
}
