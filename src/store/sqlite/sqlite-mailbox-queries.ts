import type Database from 'better-sqlite3';
import { MusubiError } from '../../core/errors.js';
import type { DeadLetter, MailboxCounts, MessageState, StoredMessage } from '../store.js';
import type { EnvelopeCache } from './envelope-cache.js';
import { toDeadLetter } from './sqlite-messages.js';
import { countsRow, dueRow, parseRow, peekRow } from './sqlite-rows.js';

// A waiting row whose time has passed is ready even before a claim moves it (see MessageRowState).
const COUNTS = `
  COALESCE(SUM(state = 0 OR (state = 1 AND available_at <= @now)), 0) AS ready,
  COALESCE(SUM(state = 1 AND available_at > @now AND is_leased = 0), 0) AS delayed,
  COALESCE(SUM(state = 1 AND available_at > @now AND is_leased = 1), 0) AS leased,
  COALESCE(SUM(state IN (0, 1)), 0) AS total,
  COALESCE(SUM(state = 2), 0) AS deadLetters`;

const DEAD_COLUMNS = 'seq, mailbox, attempt, envelope, dead_reason, dead_at';
const PEEK =
  'SELECT seq, attempt, envelope, is_leased, available_at FROM messages WHERE mailbox = ? AND state IN (0, 1) ORDER BY priority, seq';
/** Distinct peek limits kept as prepared statements; others are prepared for the one call. */
const PEEK_STATEMENTS = 16;

/** Read-only views of the messages table: peek, counts, next due time, dead letters. */
export class SqliteMailboxQueries {
  readonly #cache: EnvelopeCache;
  readonly #db: Database.Database;
  // One statement per limit, the limit written into the SQL: with `LIMIT ?` SQLite runs the same
  // index-ordered query about twice as slowly (measured: 10.7 µs against 5 µs for one row).
  readonly #peeks = new Map<number, Database.Statement<[string]>>();
  readonly #count: Database.Statement<{ mailbox: string; now: number }>;
  readonly #countAll: Database.Statement<{ now: number }>;
  readonly #nextDue: Database.Statement<[string]>;
  readonly #dead: Database.Statement<[number]>;
  readonly #deadOf: Database.Statement<[string, number]>;

  constructor(db: Database.Database, options: { cache: EnvelopeCache }) {
    this.#cache = options.cache;
    this.#db = db;
    this.#count = db.prepare(`SELECT @mailbox AS mailbox, ${COUNTS} FROM messages WHERE mailbox = @mailbox`);
    this.#countAll = db.prepare(
      `SELECT mailbox, ${COUNTS} FROM messages WHERE state IN (0, 1, 2) GROUP BY mailbox ORDER BY mailbox`,
    );
    this.#nextDue = db.prepare(
      'SELECT MIN(available_at) AS due FROM messages WHERE mailbox = ? AND state = 1',
    );
    this.#dead = db.prepare(
      `SELECT ${DEAD_COLUMNS} FROM messages WHERE state = 2 ORDER BY dead_at, seq LIMIT ?`,
    );
    this.#deadOf = db.prepare(
      `SELECT ${DEAD_COLUMNS} FROM messages WHERE mailbox = ? AND state = 2 ORDER BY dead_at, seq LIMIT ?`,
    );
  }

  /** `limit` < 0 means no limit. */
  peek(mailbox: string, limit: number, now: number): StoredMessage[] {
    const where = `messages ${mailbox}`;
    return this.#peekStatement(limit)
      .all(mailbox)
      .map((row) => {
        const r = parseRow(peekRow, row, where);
        const state: MessageState =
          r.available_at <= now ? 'ready' : r.is_leased === 1 ? 'leased' : 'delayed';
        const envelope = this.#cache.decode(r.seq, r.envelope, r.attempt, where);
        return { mailbox, seq: r.seq, envelope, state, availableAt: r.available_at };
      });
  }

  #peekStatement(limit: number): Database.Statement<[string]> {
    const known = this.#peeks.get(limit);
    if (known !== undefined) return known;
    if (!Number.isSafeInteger(limit))
      throw new MusubiError('USAGE_INVALID', `peek limit must be an integer, got ${limit}`);
    const statement = this.#db.prepare<[string]>(limit < 0 ? PEEK : `${PEEK} LIMIT ${limit}`);
    if (this.#peeks.size < PEEK_STATEMENTS) this.#peeks.set(limit, statement);
    return statement;
  }

  count(mailbox: string, now: number): MailboxCounts {
    return parseRow(countsRow, this.#count.get({ mailbox, now }), `messages ${mailbox}`);
  }

  listMailboxes(now: number): MailboxCounts[] {
    return this.#countAll.all({ now }).map((row) => parseRow(countsRow, row, 'messages'));
  }

  /** The earliest lease or delay end in `mailbox` (may be <= now: a claim would then succeed), or null. */
  nextDueAt(mailbox: string): number | null {
    return parseRow(dueRow, this.#nextDue.get(mailbox), `messages ${mailbox}`).due;
  }

  /** `limit` < 0 means no limit. */
  listDeadLetters(mailbox: string | undefined, limit: number): DeadLetter[] {
    const rows = mailbox === undefined ? this.#dead.all(limit) : this.#deadOf.all(mailbox, limit);
    return rows.map(toDeadLetter);
  }
}
