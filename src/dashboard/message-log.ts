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

/** Rows the page keeps by default: enough for a long session, few enough to filter on every keystroke. */
export const LOG_CAPACITY = 10_000;

/**
 * The page's message log: rows from `GET /api/messages` plus live `message.*` events, newest kept up to
 * `capacity`. A row's status, retries and dead-letter mark follow its lifecycle events; `merge` adds rows
 * and fills in what only the REST reply may carry (thread, body preview). Pure logic (no DOM), so it is
 * tested under Node.
 */
export class MessageLog {
  readonly #rows = new Map<string, MessageRow>();
  readonly #capacity: number;
  /** The newest event cursor the gateway's message list has covered (the next `?after=`). */
  coveredCursor = 0;
  /** Bumped on every change; `list` reuses its last answer while it and the filter stay the same. */
  #version = 0;
  #sorted: MessageRow[] | undefined;
  #listed: { readonly key: string; readonly rows: MessageRow[] } | undefined;

  constructor(capacity = LOG_CAPACITY) {
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
        const retries = Math.max(known.retries ?? 0, row.retries ?? 0);
        this.#rows.set(k, {
          ...known,
          ...(row.thread === undefined ? {} : { thread: row.thread }),
          ...(row.bodyPreview === undefined ? {} : { bodyPreview: row.bodyPreview }),
          ...(retries > 0 && { retries }),
          ...((known.wasDead === true || row.wasDead === true) && { wasDead: true }),
        });
      }
    }
    this.#changed();
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
      const { bodyPreview, thread } = event;
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
        ...(typeof thread === 'string' && { thread }),
        ...(typeof bodyPreview === 'string' && { bodyPreview }),
      });
      this.#changed();
      this.#trim();
      return true;
    }
    const status = STATUS_BY_EVENT[event.type];
    const row = this.#rows.get(k);
    if (status === undefined || row === undefined) return false;
    // Every claim after the first is a retry (nacked, lease ran out, requeued), as the gateway counts.
    const isRetry = event.type === 'message.claimed' && row.attempt > 0;
    const retries = (row.retries ?? 0) + (isRetry ? 1 : 0);
    this.#rows.set(k, {
      ...row,
      status,
      attempt: event.attempt ?? row.attempt,
      ...(retries > 0 && { retries }),
      ...((row.wasDead === true || event.type === 'message.dead_lettered') && { wasDead: true }),
    });
    this.#changed();
    return true;
  }

  /** Rows matching `filter`, newest first. The same array while nothing changed (do not modify it). */
  list(filter: LogFilter): readonly MessageRow[] {
    const key = `${this.#version}\n${filter.agent}\n${filter.type}\n${filter.thread}`;
    if (this.#listed?.key === key) return this.#listed.rows;
    this.#sorted ??= [...this.#rows.values()].sort((a, b) => b.cursor - a.cursor);
    const isAll = filter.agent === '' && filter.type === '' && filter.thread === '';
    const rows = isAll
      ? this.#sorted
      : this.#sorted.filter(
          (r) =>
            (has(r.from, filter.agent) || has(r.mailbox, filter.agent)) &&
            has(r.type, filter.type) &&
            has(r.thread, filter.thread),
        );
    this.#listed = { key, rows };
    return rows;
  }

  /** Forgets every row and the covered cursor. */
  clear(): void {
    this.#rows.clear();
    this.coveredCursor = 0;
    this.#changed();
  }

  /** How many rows are held. */
  get size(): number {
    return this.#rows.size;
  }

  #changed(): void {
    this.#version += 1;
    this.#sorted = undefined;
  }

  /** Drops the oldest rows once the log is 5 % over capacity, so a full log sorts once per batch. */
  #trim(): void {
    if (this.#rows.size <= this.#capacity + Math.ceil(this.#capacity / 20)) return;
    const oldest = [...this.#rows.entries()].sort((a, b) => a[1].cursor - b[1].cursor);
    for (const [k] of oldest.slice(0, this.#rows.size - this.#capacity)) this.#rows.delete(k);
    this.#changed();
  }
}
