import type Database from 'better-sqlite3';
import { SENT_BODY_CHARS, sentEvent, type BusEvent, type StoredEvent } from '../../core/events.js';
import type { Envelope } from '../../core/envelope.js';
import type { LogBatch } from '../follow-log.js';
import { corruptEvent, cursorRow, decodeEnvelope, decodeEvent, eventRow, parseRow } from './sqlite-rows.js';

/**
 * Appends between prunes: pruning is one range delete on the primary key, run now and then. Often
 * enough that one prune stays short (about 40 µs for 100 rows; 1,000 rows took 0.4-1 ms, a stall for
 * every write of that batch), rarely enough that its statement overhead does not count.
 */
const PRUNE_EVERY = 100;
const FOLLOW_BATCH = 100;

/**
 * How an `events` row holds its event: as JSON in `event` (kind 0, and every row written before schema
 * version 3), or as columns. A `sent` row's `event` is the JSON of the envelope the message was sent
 * with (attempt 0), which is also where the message's row finds its envelope.
 */
export const EventKind = { json: 0, sent: 1, claimed: 2, acked: 3 } as const;

const COLUMNS = 'cursor, at, event, kind, mailbox, message_id, n1, n2';

/**
 * The `events` table. Cursors are rowids: they strictly increase and, because pruning only removes rows
 * at least `retention` cursors old, never the newest, are never reused. Keeps the newest `retention`
 * events: every 100 appends (per connection) older ones are deleted, so between prunes the log may hold
 * up to 100 more — except a `sent` row whose message is still in the messages table (it holds that
 * message's envelope), which goes when the message goes. Callers run the inserts inside their own write
 * transaction, which makes the event part of the change it records. The message events of the hot path
 * (sent, claimed, acked) are columns, not JSON.
 */
export class SqliteEventLog {
  readonly #insertJson: Database.Statement<[number, string]>;
  readonly #insertSent: Database.Statement<[number, string, string, string]>;
  readonly #insertClaimed: Database.Statement<[number, string, string, number, number]>;
  readonly #insertAcked: Database.Statement<[number, string, string]>;
  readonly #read: Database.Statement<[number, number]>;
  readonly #envelope: Database.Statement<[number]>;
  readonly #last: Database.Statement<[]>;
  readonly #prune: Database.Statement<[number, number]>;
  readonly #dropSent: Database.Statement<[number]>;
  readonly #withdraw: Database.Statement<[number]>;
  readonly #retention: number;
  #sincePrune = 0;
  /** Every cursor up to this one has been pruned by this connection (other connections prune too). */
  #prunedThrough = 0;

  constructor(db: Database.Database, options: { retention: number }) {
    this.#retention = options.retention;
    this.#insertJson = db.prepare('INSERT INTO events (at, event) VALUES (?, ?)');
    this.#insertSent = db.prepare(
      `INSERT INTO events (at, event, kind, mailbox, message_id) VALUES (?, ?, ${EventKind.sent}, ?, ?)`,
    );
    this.#insertClaimed = db.prepare(
      `INSERT INTO events (at, event, kind, mailbox, message_id, n1, n2) VALUES (?, '', ${EventKind.claimed}, ?, ?, ?, ?)`,
    );
    this.#insertAcked = db.prepare(
      `INSERT INTO events (at, event, kind, mailbox, message_id) VALUES (?, '', ${EventKind.acked}, ?, ?)`,
    );
    this.#read = db.prepare(`SELECT ${COLUMNS} FROM events WHERE cursor > ? ORDER BY cursor LIMIT ?`);
    this.#envelope = db
      .prepare(`SELECT event FROM events WHERE cursor = ? AND kind = ${EventKind.sent}`)
      .pluck();
    this.#last = db.prepare('SELECT COALESCE(MAX(cursor), 0) AS cursor FROM events');
    // A sent row is kept while its message is in the table: the message reads its envelope there.
    this.#prune = db.prepare(
      `DELETE FROM events WHERE cursor > ? AND cursor <= ? AND NOT (kind = ${EventKind.sent} AND EXISTS ` +
        '(SELECT 1 FROM messages m WHERE m.mailbox = events.mailbox AND m.id = events.message_id AND m.seq = events.cursor))',
    );
    this.#dropSent = db.prepare(`DELETE FROM events WHERE cursor = ? AND kind = ${EventKind.sent}`);
    this.#withdraw = db.prepare('DELETE FROM events WHERE cursor = ?');
  }

  /** Inserts one event as JSON and returns its cursor; call inside a write transaction. */
  insert(event: BusEvent, at: number): number {
    return this.#appended(Number(this.#insertJson.run(at, JSON.stringify(event)).lastInsertRowid));
  }

  /**
   * Inserts the `message.sent` of `envelope` (whose JSON is `text`) and returns its cursor and whether the
   * row holds the whole envelope (false for a body longer than the event keeps: the event then holds the
   * head of it as JSON, and the message row must keep the envelope itself).
   */
  insertSent(
    mailbox: string,
    envelope: Envelope,
    text: string,
    at: number,
  ): { cursor: number; isWhole: boolean } {
    if (envelope.body.length > SENT_BODY_CHARS)
      return { cursor: this.insert(sentEvent(mailbox, envelope), at), isWhole: false };
    const cursor = Number(this.#insertSent.run(at, text, mailbox, envelope.id).lastInsertRowid);
    return { cursor: this.#appended(cursor), isWhole: true };
  }

  insertClaimed(mailbox: string, messageId: string, attempt: number, leaseUntil: number, at: number): void {
    this.#appended(
      Number(this.#insertClaimed.run(at, mailbox, messageId, attempt, leaseUntil).lastInsertRowid),
    );
  }

  /** Inserts a `message.acked` and returns its cursor. */
  insertAcked(mailbox: string, messageId: string, at: number): number {
    return this.#appended(Number(this.#insertAcked.run(at, mailbox, messageId).lastInsertRowid));
  }

  /** Deletes the event just inserted at `cursor` in this transaction (its change did not happen). */
  withdraw(cursor: number): void {
    this.#withdraw.run(cursor);
  }

  /** The envelope JSON a `sent` row at `cursor` holds, or undefined when there is none. */
  envelopeText(cursor: number): unknown {
    return this.#envelope.get(cursor);
  }

  /**
   * The message whose envelope the `sent` row at `seq` holds has left the table (acked, taken,
   * discarded, requeued): the row goes too once it is older than the retention (a prune kept it).
   */
  messageGone(seq: number, lastCursor: number): void {
    if (seq <= lastCursor - this.#retention) this.#dropSent.run(seq);
  }

  /** Events after `after`, oldest first; `limit` < 0 means no limit. */
  read(after: number, limit: number): StoredEvent[] {
    return this.#read.all(after, limit).map(decodeRow);
  }

  /** A bounded batch for followers. */
  readBatch(after: number): LogBatch<StoredEvent> {
    const items = this.read(after, FOLLOW_BATCH);
    return { items, cursor: items.at(-1)?.cursor ?? after };
  }

  lastCursor(): number {
    return parseRow(cursorRow, this.#last.get(), 'events').cursor;
  }

  /** Counts an insert; every {@link PRUNE_EVERY} of them, prunes what the retention has passed. */
  #appended(cursor: number): number {
    if (++this.#sincePrune >= PRUNE_EVERY) {
      this.#sincePrune = 0;
      const horizon = cursor - this.#retention;
      if (horizon > this.#prunedThrough) {
        this.#prune.run(this.#prunedThrough, horizon);
        this.#prunedThrough = horizon;
      }
    }
    return cursor;
  }
}

/** Decodes an events row of any kind into a StoredEvent (STORE_CORRUPT when it does not decode). */
function decodeRow(row: unknown): StoredEvent {
  const r = parseRow(eventRow, row, 'events');
  const where = `event ${r.cursor}`;
  if (r.kind === EventKind.json) return decodeEvent(r.cursor, r.at, r.event);
  const { mailbox, message_id: messageId } = r;
  if (mailbox === null || messageId === null) throw corruptEvent(r.cursor, r.kind);
  let event: BusEvent;
  if (r.kind === EventKind.sent) {
    const envelope = decodeEnvelope(r.event, 0, where);
    if (envelope.id !== messageId) throw corruptEvent(r.cursor, r.kind);
    event = sentEvent(mailbox, envelope);
  } else if (r.kind === EventKind.claimed && r.n1 !== null && r.n2 !== null) {
    event = { type: 'message.claimed', mailbox, messageId, attempt: r.n1, leaseUntil: r.n2 };
  } else if (r.kind === EventKind.acked) event = { type: 'message.acked', mailbox, messageId };
  else throw corruptEvent(r.cursor, r.kind);
  return Object.assign(event, { cursor: r.cursor, at: r.at });
}
