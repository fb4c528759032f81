import type Database from 'better-sqlite3';
import { priorityRank, type Envelope } from '../../core/envelope.js';
import { MusubiError } from '../../core/errors.js';
import { formatDeliveryId, leaseProblem, type DeliveryRef } from '../delivery-id.js';
import type { DeadLetter, Delivery } from '../store.js';
import type { SqliteEnvelopes } from './sqlite-envelopes.js';
import type { SqliteEventLog } from './sqlite-event-log.js';
import { deadRow, deliveryStateRow, leasedRow, parseRow, seqRow } from './sqlite-rows.js';
import { MessageRowState } from './sqlite-schema.js';

/**
 * Matches the row holding the live lease named by a delivery ref (see MessageRowState), found through
 * `messages_key`; its parameters are a {@link LeaseParams} tuple. Hot statements bind positionally:
 * better-sqlite3 binds an object of named parameters about 0.5 µs slower per statement.
 */
const LEASED = `mailbox = ? AND id = ? AND seq = ? AND attempt = ? AND state = 1 AND is_leased = 1 AND available_at > ?`;

/** mailbox, id, seq, attempt, now: the parameters of {@link LEASED}. */
type LeaseParams = [mailbox: string, id: string, seq: number, attempt: number, now: number];

/** What an append did at store time `at`; `isHeldByEvent`: its `message.sent` event holds the envelope. */
export interface Appended {
  readonly seq: number;
  readonly isDuplicate: boolean;
  readonly isHeldByEvent: boolean;
  readonly at: number;
}

/**
 * What a claim at store time `at` did: handed out a delivery, or found a row whose envelope does not
 * validate (quarantined in the same transaction, so the caller commits that and then reports
 * STORE_CORRUPT; `id` names it), or found nothing.
 */
export type ClaimOutcome =
  | { readonly delivery: Delivery; readonly at: number }
  | { readonly corrupt: unknown; readonly id: string }
  | null;

/** Where a message row sits in the table's primary key. */
export interface RowPlace {
  readonly state: number;
  readonly priority: number;
  readonly seq: number;
}

/** A dead letter requeued as message `seq`. */
export interface Requeued {
  readonly letter: DeadLetter;
  readonly seq: number;
}

/**
 * Message writes on SQLite. Each write method is a few indexed statements that also record its event;
 * the caller runs it inside a write transaction (of a group commit), so a throw undoes it. The table is
 * clustered by (mailbox, state, priority, seq): a claim first moves every waiting row whose time has
 * come back to ready (one range update through `messages_waiting`), then takes the first ready row.
 * Envelopes are read through {@link SqliteEnvelopes}, never remembered from inside a write (its cursor
 * is not committed yet): the caller remembers a sent envelope once its batch committed.
 */
export class SqliteMessages {
  readonly #events: SqliteEventLog;
  readonly #envelopes: SqliteEnvelopes;
  readonly #insert: Database.Statement<
    [mailbox: string, priority: number, seq: number, id: string, now: number, envelope: string | null]
  >;
  readonly #seqOf: Database.Statement<[string, string]>;
  readonly #hasDue: Database.Statement<[string, number]>;
  readonly #promote: Database.Statement<[string, number]>;
  readonly #claimNext: Database.Statement<[number, string]>;
  readonly #quarantine: Database.Statement<[string, string]>;
  readonly #ack: Database.Statement<LeaseParams>;
  readonly #take: Database.Statement<[string, string, number]>;
  readonly #takeAt: Database.Statement<[string, number, number, number, string, number]>;
  readonly #nack: Database.Statement<[state: number, availableAt: number, ...LeaseParams]>;
  readonly #extend: Database.Statement<[leaseUntil: number, ...LeaseParams]>;
  readonly #kill: Database.Statement<[reason: string, now: number, ...LeaseParams]>;
  readonly #deliveryState: Database.Statement<[string, string]>;
  readonly #deadById: Database.Statement<[string]>;
  readonly #deleteKey: Database.Statement<[string, string]>;

  constructor(db: Database.Database, options: { events: SqliteEventLog; envelopes: SqliteEnvelopes }) {
    this.#events = options.events;
    this.#envelopes = options.envelopes;
    this.#insert = db.prepare(
      'INSERT INTO messages (mailbox, state, priority, seq, id, available_at, envelope) VALUES (?, 0, ?, ?, ?, ?, ?) ' +
        'ON CONFLICT (mailbox, id) DO NOTHING',
    );
    this.#seqOf = db.prepare('SELECT seq FROM messages WHERE mailbox = ? AND id = ?');
    this.#hasDue = db
      .prepare('SELECT 1 FROM messages WHERE mailbox = ? AND state = 1 AND available_at <= ? LIMIT 1')
      .pluck();
    this.#promote = db.prepare(
      'UPDATE messages SET state = 0, is_leased = 0 WHERE mailbox = ? AND state = 1 AND available_at <= ?',
    );
    this.#claimNext = db.prepare(
      'UPDATE messages SET state = 1, is_leased = 1, attempt = attempt + 1, available_at = ? ' +
        'WHERE (mailbox, state, priority, seq) = (SELECT mailbox, state, priority, seq FROM messages ' +
        'WHERE mailbox = ? AND state = 0 ORDER BY priority, seq LIMIT 1) ' +
        'RETURNING seq, id, attempt, envelope, available_at',
    );
    this.#quarantine = db.prepare(
      `UPDATE messages SET state = ${MessageRowState.quarantined} WHERE mailbox = ? AND id = ?`,
    );
    this.#ack = db.prepare(`DELETE FROM messages WHERE ${LEASED} RETURNING seq`);
    this.#takeAt = db.prepare(
      'DELETE FROM messages WHERE mailbox = ? AND state = ? AND priority = ? AND seq = ? AND id = ? ' +
        'AND (state = 0 OR (state = 1 AND available_at <= ?))',
    );
    this.#take = db.prepare(
      'DELETE FROM messages WHERE mailbox = ? AND id = ? AND (state = 0 OR (state = 1 AND available_at <= ?)) ' +
        'RETURNING seq',
    );
    this.#nack = db.prepare(`UPDATE messages SET state = ?, is_leased = 0, available_at = ? WHERE ${LEASED}`);
    this.#extend = db.prepare(
      `UPDATE messages SET available_at = ? WHERE ${LEASED} RETURNING seq, id, attempt, envelope, available_at`,
    );
    this.#kill = db.prepare(
      'UPDATE messages SET state = 2, is_leased = 0, dead_reason = ?, dead_at = ? ' +
        `WHERE ${LEASED} RETURNING seq, mailbox, attempt, envelope, dead_reason, dead_at`,
    );
    this.#deliveryState = db.prepare(
      'SELECT seq, attempt, state, is_leased, available_at FROM messages WHERE mailbox = ? AND id = ?',
    );
    this.#deadById = db.prepare(
      'SELECT seq, mailbox, attempt, envelope, dead_reason, dead_at FROM messages ' +
        'WHERE id = ? AND state = 2 ORDER BY dead_at, seq',
    );
    this.#deleteKey = db.prepare('DELETE FROM messages WHERE mailbox = ? AND id = ?');
  }

  /**
   * Idempotent on (mailbox, envelope id). The `message.sent` event holds the envelope (attempt 0, as the
   * bus made it); only a body longer than the event keeps makes the row hold the envelope itself.
   */
  append(mailbox: string, envelope: Envelope, now: number): Appended {
    const text = JSON.stringify(envelope.attempt === 0 ? envelope : { ...envelope, attempt: 0 });
    const { cursor, isWhole } = this.#events.insertSent(mailbox, envelope, text, now);
    const rank = priorityRank(envelope.priority);
    // The unique (mailbox, id) index decides: no look first (the insert seeks it anyway).
    if (this.#insert.run(mailbox, rank, cursor, envelope.id, now, isWhole ? null : text).changes === 1) {
      return { seq: cursor, isDuplicate: false, isHeldByEvent: isWhole, at: now };
    }
    // A duplicate: its event never happened (nothing outside this transaction saw the cursor).
    this.#events.withdraw(cursor);
    const { seq } = parseRow(seqRow, this.#seqOf.get(mailbox, envelope.id), `messages ${mailbox}`);
    return { seq, isDuplicate: true, isHeldByEvent: false, at: now };
  }

  /** Leases the next claimable message of `mailbox` until `now + leaseMs`. */
  claim(mailbox: string, leaseMs: number, now: number): ClaimOutcome {
    const leaseUntil = now + leaseMs;
    // A read on the covering index is several times cheaper than an UPDATE that matches nothing.
    if (this.#hasDue.get(mailbox, now) !== undefined) this.#promote.run(mailbox, now);
    const row = this.#claimNext.get(leaseUntil, mailbox);
    if (row === undefined) return null;
    const leased = parseRow(leasedRow, row, `messages ${mailbox}`);
    let delivery: Delivery;
    try {
      delivery = this.#toDelivery(mailbox, leased);
    } catch (err) {
      this.#quarantine.run(mailbox, leased.id);
      return { corrupt: err, id: leased.id };
    }
    this.#events.insertClaimed(mailbox, leased.id, leased.attempt, leaseUntil, now);
    return { delivery, at: now };
  }

  ack(ref: DeliveryRef, now: number): void {
    this.#leaseWrite(ref, now, (params) => {
      const row = this.#ack.get(...params);
      if (row === undefined) return false;
      this.#gone(ref.mailbox, ref.envelopeId, parseRow(seqRow, row, `messages ${ref.mailbox}`).seq, now);
      return true;
    });
  }

  /**
   * Removes message `id` of `mailbox` if claimable at `now`; false when there is none such. `at`, the
   * row's place as the mirror last saw it, lets the delete go by primary key; a stale one deletes
   * nothing and the delete goes through `messages_key` after all.
   */
  take(mailbox: string, id: string, now: number, at?: RowPlace): boolean {
    let seq: number;
    if (at !== undefined && this.#takeAt.run(mailbox, at.state, at.priority, at.seq, id, now).changes === 1) {
      seq = at.seq;
    } else {
      const row = this.#take.get(mailbox, id, now);
      if (row === undefined) return false;
      seq = parseRow(seqRow, row, `messages ${mailbox}`).seq;
    }
    this.#gone(mailbox, id, seq, now);
    return true;
  }

  nack(ref: DeliveryRef, delayMs: number, now: number): void {
    const delay = Math.max(0, delayMs);
    const state = delay > 0 ? MessageRowState.waiting : MessageRowState.ready;
    this.#leaseWrite(ref, now, (params) => {
      if (this.#nack.run(state, now + delay, ...params).changes === 0) return false;
      this.#events.insert(
        { type: 'message.nacked', mailbox: ref.mailbox, messageId: ref.envelopeId, delayMs },
        now,
      );
      return true;
    });
  }

  extend(ref: DeliveryRef, leaseMs: number, now: number): Delivery {
    return this.#leaseWrite(ref, now, (params) => {
      const row = this.#extend.get(now + leaseMs, ...params);
      if (row === undefined) return false;
      const delivery = this.#toDelivery(ref.mailbox, parseRow(leasedRow, row, `messages ${ref.mailbox}`));
      const { leaseUntil } = delivery;
      this.#events.insert(
        { type: 'message.lease_extended', mailbox: ref.mailbox, messageId: ref.envelopeId, leaseUntil },
        now,
      );
      return delivery;
    });
  }

  deadLetter(ref: DeliveryRef, reason: string, now: number): DeadLetter {
    return this.#leaseWrite(ref, now, (params) => {
      const row = this.#kill.get(reason, now, ...params);
      if (row === undefined) return false;
      this.#events.insert(
        { type: 'message.dead_lettered', mailbox: ref.mailbox, messageId: ref.envelopeId, reason },
        now,
      );
      return this.toDeadLetter(row, false);
    });
  }

  /**
   * Throws NOT_FOUND when no dead letter has this id. A requeued message gets a new seq (the cursor of
   * its `message.requeued` event) and keeps its envelope in its row.
   */
  requeue(envelopeId: string, now: number): Requeued[] {
    return this.#deadLettersOf(envelopeId).map(({ seq, letter }) => {
      const { mailbox, envelope } = letter;
      this.#deleteKey.run(mailbox, envelopeId);
      const requeued = { type: 'message.requeued', mailbox, messageId: envelopeId } as const;
      const cursor = this.#events.insert(requeued, now);
      this.#events.messageGone(seq, cursor);
      this.#envelopes.forget(seq);
      const text = JSON.stringify({ ...envelope, attempt: 0 });
      this.#insert.run(mailbox, priorityRank(envelope.priority), cursor, envelopeId, now, text);
      return { letter, seq: cursor };
    });
  }

  /** Deletes every dead letter with this id, so the id is forgotten. Throws NOT_FOUND when there is none. */
  discard(envelopeId: string, now: number): DeadLetter[] {
    const letters = this.#deadLettersOf(envelopeId);
    for (const { seq, letter } of letters) {
      this.#deleteKey.run(letter.mailbox, envelopeId);
      const discarded = {
        type: 'message.discarded',
        mailbox: letter.mailbox,
        messageId: envelopeId,
      } as const;
      this.#events.messageGone(seq, this.#events.insert(discarded, now));
      this.#envelopes.forget(seq);
    }
    return letters.map(({ letter }) => letter);
  }

  /** Decodes a dead-letter row (seq, mailbox, attempt, envelope, dead_reason, dead_at). */
  toDeadLetter(row: unknown, isCommitted: boolean): DeadLetter {
    const dead = parseRow(deadRow, row, 'dead letters');
    const where = `dead letters ${dead.mailbox}`;
    const envelope = this.#envelopes.of(dead.seq, dead.envelope, dead.attempt, where, isCommitted);
    return { mailbox: dead.mailbox, envelope, reason: dead.dead_reason, deadAt: dead.dead_at };
  }

  /** The message left the table: its acked event, its envelope's event once past the retention. */
  #gone(mailbox: string, id: string, seq: number, now: number): void {
    this.#events.messageGone(seq, this.#events.insertAcked(mailbox, id, now));
    this.#envelopes.forget(seq);
  }

  /** The dead letters of `envelopeId` in every mailbox, oldest first; NOT_FOUND when there is none. */
  #deadLettersOf(envelopeId: string): { seq: number; letter: DeadLetter }[] {
    const letters = this.#deadById.all(envelopeId).map((row) => {
      const { seq } = parseRow(seqRow, row, 'dead letters');
      return { seq, letter: this.toDeadLetter(row, false) };
    });
    if (letters.length === 0)
      throw new MusubiError('NOT_FOUND', `no dead letter with envelope id ${envelopeId}`);
    return letters;
  }

  /** The Delivery of a leased row. */
  #toDelivery(
    mailbox: string,
    row: { seq: number; id: string; attempt: number; envelope: string | null; available_at: number },
  ): Delivery {
    const envelope = this.#envelopes.of(row.seq, row.envelope, row.attempt, `messages ${mailbox}`, false);
    return {
      deliveryId: formatDeliveryId({ mailbox, envelopeId: row.id, seq: row.seq, attempt: row.attempt }),
      mailbox,
      envelope,
      leaseUntil: row.available_at,
    };
  }

  /**
   * Runs `write` (which returns false when its guarded statement matched no live lease); on false,
   * works out whether the delivery is gone (NOT_FOUND) or its lease ended (LEASE_EXPIRED) and throws.
   */
  #leaseWrite<T>(ref: DeliveryRef, now: number, write: (params: LeaseParams) => T | false): T {
    const result = write([ref.mailbox, ref.envelopeId, ref.seq, ref.attempt, now]);
    if (result !== false) return result;
    throw this.#leaseFailure(ref, now);
  }

  #leaseFailure(ref: DeliveryRef, now: number): MusubiError {
    const row = this.#deliveryState.get(ref.mailbox, ref.envelopeId);
    const found = row === undefined ? undefined : parseRow(deliveryStateRow, row, `messages ${ref.mailbox}`);
    const current =
      found === undefined || found.state >= MessageRowState.dead
        ? undefined
        : {
            seq: found.seq,
            attempt: found.attempt,
            isLeased: found.is_leased === 1,
            leaseUntil: found.available_at,
          };
    // The guarded statement and leaseProblem test the same conditions; a row that passes one and not the
    // other can only be a lease that ended between the two reads.
    return (
      leaseProblem(ref, current, now) ??
      new MusubiError('LEASE_EXPIRED', `the lease of delivery ${formatDeliveryId(ref)} has ended`)
    );
  }
}
