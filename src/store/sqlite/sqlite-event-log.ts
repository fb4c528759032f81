import type Database from 'better-sqlite3';
import type { BusEvent, StoredEvent } from '../../core/events.js';
import type { LogBatch } from '../follow-log.js';
import { cursorRow, decodeEvent, parseRow } from './sqlite-rows.js';

/** Appends between prunes: pruning is one range delete on the primary key, run now and then. */
const PRUNE_EVERY = 1_000;
const FOLLOW_BATCH = 100;

/**
 * The `events` table. Cursors are rowids: they strictly increase and, because pruning only removes the
 * oldest rows, are never reused. Keeps the newest `retention` events: every 1,000 appends (per connection) older
 * ones are deleted, so between prunes the log may hold up to 1,000 more. Callers run `insert` inside
 * their own write transaction, which makes the event part of the change it records.
 */
export class SqliteEventLog {
  readonly #insert: Database.Statement<[number, string]>;
  readonly #read: Database.Statement<[number, number]>;
  readonly #last: Database.Statement<[]>;
  readonly #prune: Database.Statement<[number]>;
  readonly #retention: number;
  #sincePrune = 0;

  constructor(db: Database.Database, options: { retention: number }) {
    this.#retention = options.retention;
    this.#insert = db.prepare('INSERT INTO events (at, event) VALUES (?, ?)');
    this.#read = db.prepare('SELECT cursor, at, event FROM events WHERE cursor > ? ORDER BY cursor LIMIT ?');
    this.#last = db.prepare('SELECT COALESCE(MAX(cursor), 0) AS cursor FROM events');
    this.#prune = db.prepare('DELETE FROM events WHERE cursor <= (SELECT MAX(cursor) FROM events) - ?');
  }

  /** Inserts one event and returns its cursor; call inside a write transaction. */
  insert(event: BusEvent, at: number): number {
    const cursor = Number(this.#insert.run(at, JSON.stringify(event)).lastInsertRowid);
    if (++this.#sincePrune >= PRUNE_EVERY) {
      this.#sincePrune = 0;
      this.#prune.run(this.#retention);
    }
    return cursor;
  }

  /** Events after `after`, oldest first; `limit` < 0 means no limit. */
  read(after: number, limit: number): StoredEvent[] {
    return this.#read.all(after, limit).map(decodeEvent);
  }

  /** A bounded batch for followers. */
  readBatch(after: number): LogBatch<StoredEvent> {
    const items = this.read(after, FOLLOW_BATCH);
    return { items, cursor: items.at(-1)?.cursor ?? after };
  }

  lastCursor(): number {
    return parseRow(cursorRow, this.#last.get(), 'events').cursor;
  }
}
