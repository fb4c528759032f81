import type Database from 'better-sqlite3';
import { priorityRank, type Envelope } from '../../core/envelope.js';
import { MusubiError } from '../../core/errors.js';
import { formatDeliveryId, leaseProblem, type DeliveryRef } from '../delivery-id.js';
import type { AppendResult, DeadLetter, Delivery } from '../store.js';
import type { EnvelopeCache } from './envelope-cache.js';
import { sentEvent } from '../../core/events.js';
import type { SqliteEventLog } from './sqlite-event-log.js';
import { decodeEnvelope, deadRow, deliveryStateRow, leasedRow, parseRow, seqRow } from './sqlite-rows.js';
import { MessageRowState } from './sqlite-schema.js';

/**
 * Matches the row holding the live lease named by a delivery ref (see MessageRowState); its parameters
 * are a {@link LeaseParams} tuple. Hot statements bind positionally: better-sqlite3 binds an object of
 * named parameters about 0.5 µs slower per statement.
 */
const LEASED = `seq = ? AND mailbox = ? AND id = ? AND attempt = ? AND state = 1 AND is_leased = 1 AND available_at > ?`;

/** seq, mailbox, id, attempt, now: the parameters of {@link LEASED}. */
type LeaseParams = [seq: number, mailbox: string, id: string, attempt: number, now: number];

/**
 * What a claim did: handed out a delivery, or found a row whose envelope does not validate (quarantined
 * in the same transaction, so the caller commits that and then reports STORE_CORRUPT), or found nothing.
 */
export type ClaimOutcome = { readonly delivery: Delivery } | { readonly corrupt: unknown } | null;

/**
 * Message writes on SQLite. Each write method is a few indexed statements that also record its event;
 * the caller runs it inside a write transaction (a savepoint of a group commit), so a throw undoes it.
 * A claim first moves due waiting rows back to ready (one range update on `messages_waiting`), then
 * takes the first ready row by (priority, seq) from `messages_ready`.
 */
export class SqliteMessages {
  readonly #events: SqliteEventLog;
  readonly #cache: EnvelopeCache;
  readonly #insert: Database.Statement<
    [seq: number, mailbox: string, id: string, priority: number, envelope: string, now: number]
  >;
  readonly #seqOf: Database.Statement<[string, string]>;
  readonly #hasClaimable: Database.Statement<[mailbox: string, mailbox: string, now: number]>;
  readonly #hasDue: Database.Statement<[string, number]>;
  readonly #promote: Database.Statement<[string, number]>;
  readonly #claimNext: Database.Statement<[number, string]>;
  readonly #quarantine: Database.Statement<[number]>;
  readonly #ack: Database.Statement<LeaseParams>;
  readonly #take: Database.Statement<[string, string, number]>;
  readonly #nack: Database.Statement<[state: number, availableAt: number, ...LeaseParams]>;
  readonly #extend: Database.Statement<[leaseUntil: number, ...LeaseParams]>;
  readonly #kill: Database.Statement<[reason: string, now: number, ...LeaseParams]>;
  readonly #deliveryState: Database.Statement<[string, string]>;
  readonly #deadById: Database.Statement<[string]>;
  readonly #deleteSeq: Database.Statement<[number]>;

  constructor(db: Database.Database, options: { events: SqliteEventLog; cache: EnvelopeCache }) {
    this.#events = options.events;
    this.#cache = options.cache;
    this.#insert = db.prepare(
      'INSERT INTO messages (seq, mailbox, id, priority, envelope, attempt, state, is_leased, available_at) ' +
        'VALUES (?, ?, ?, ?, ?, 0, 0, 0, ?)',
    );
    this.#seqOf = db.prepare('SELECT seq FROM messages WHERE mailbox = ? AND id = ?');
    this.#hasClaimable = db
      .prepare(
        'SELECT EXISTS (SELECT 1 FROM messages WHERE mailbox = ? AND state = 0) OR ' +
          'EXISTS (SELECT 1 FROM messages WHERE mailbox = ? AND state = 1 AND available_at <= ?)',
      )
      .pluck();
    this.#hasDue = db
      .prepare('SELECT 1 FROM messages WHERE mailbox = ? AND state = 1 AND available_at <= ? LIMIT 1')
      .pluck();
    this.#promote = db.prepare(
      'UPDATE messages SET state = 0, is_leased = 0 WHERE mailbox = ? AND state = 1 AND available_at <= ?',
    );
    this.#claimNext = db.prepare(
      'UPDATE messages SET state = 1, is_leased = 1, attempt = attempt + 1, available_at = ? WHERE seq = ' +
        '(SELECT seq FROM messages WHERE mailbox = ? AND state = 0 ORDER BY priority, seq LIMIT 1) ' +
        'RETURNING seq, attempt, envelope, available_at',
    );
    this.#quarantine = db.prepare(`UPDATE messages SET state = ${MessageRowState.quarantined} WHERE seq = ?`);
    this.#ack = db.prepare(`DELETE FROM messages WHERE ${LEASED} RETURNING seq`);
    this.#take = db.prepare(
      'DELETE FROM messages WHERE mailbox = ? AND id = ? AND (state = 0 OR (state = 1 AND available_at <= ?)) ' +
        'RETURNING seq',
    );
    this.#nack = db.prepare(`UPDATE messages SET state = ?, is_leased = 0, available_at = ? WHERE ${LEASED}`);
    this.#extend = db.prepare(
      `UPDATE messages SET available_at = ? WHERE ${LEASED} RETURNING seq, attempt, envelope, available_at`,
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
    this.#deleteSeq = db.prepare('DELETE FROM messages WHERE seq = ?');
  }

  /**
   * Whether a claim could find something, read without a transaction or lock: lets idle consumers
   * polling an empty mailbox skip the write lock, so they never block writers.
   */
  hasClaimable(mailbox: string, now: number): boolean {
    return this.#hasClaimable.get(mailbox, mailbox, now) === 1;
  }

  /** Idempotent on (mailbox, envelope id). */
  append(mailbox: string, envelope: Envelope, now: number): AppendResult {
    const existing = this.#seqOf.get(mailbox, envelope.id);
    if (existing !== undefined) {
      return { seq: parseRow(seqRow, existing, `messages ${mailbox}`).seq, isDuplicate: true };
    }
    const cursor = this.#events.insert(sentEvent(mailbox, envelope), now);
    this.#insertRow(mailbox, envelope, cursor, now);
    return { seq: cursor, isDuplicate: false };
  }

  /** Leases the next claimable message of `mailbox` until `now + leaseMs`. */
  claim(mailbox: string, leaseMs: number, now: number): ClaimOutcome {
    const leaseUntil = now + leaseMs;
    // A read on the covering index is several times cheaper than an UPDATE that matches nothing.
    if (this.#hasDue.get(mailbox, now) !== undefined) this.#promote.run(mailbox, now);
    const row = this.#claimNext.get(leaseUntil, mailbox);
    if (row === undefined) return null;
    const { seq } = parseRow(seqRow, row, `messages ${mailbox}`);
    let delivery: Delivery;
    try {
      delivery = this.#toDelivery(mailbox, row);
    } catch (err) {
      this.#quarantine.run(seq);
      return { corrupt: err };
    }
    const { id: messageId, attempt } = delivery.envelope;
    this.#events.insert({ type: 'message.claimed', mailbox, messageId, attempt, leaseUntil }, now);
    return { delivery };
  }

  ack(ref: DeliveryRef, now: number): void {
    this.#leaseWrite(ref, now, (params) => {
      const row = this.#ack.get(...params);
      if (row === undefined) return false;
      this.#cache.forget(parseRow(seqRow, row, `messages ${ref.mailbox}`).seq);
      this.#events.insert({ type: 'message.acked', mailbox: ref.mailbox, messageId: ref.envelopeId }, now);
      return true;
    });
  }

  /** Removes message `id` of `mailbox` if claimable at `now`; false when there is none such. */
  take(mailbox: string, id: string, now: number): boolean {
    const row = this.#take.get(mailbox, id, now);
    if (row === undefined) return false;
    this.#cache.forget(parseRow(seqRow, row, `messages ${mailbox}`).seq);
    this.#events.insert({ type: 'message.acked', mailbox, messageId: id }, now);
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
      const delivery = this.#toDelivery(ref.mailbox, row);
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
      return toDeadLetter(row);
    });
  }

  /** Throws NOT_FOUND when no dead letter has this id. */
  requeue(envelopeId: string, now: number): DeadLetter[] {
    const letters = this.#deadLettersOf(envelopeId);
    for (const { seq, letter } of letters) {
      this.#deleteSeq.run(seq);
      this.#cache.forget(seq);
      const requeued = { type: 'message.requeued', mailbox: letter.mailbox, messageId: envelopeId } as const;
      this.#insertRow(letter.mailbox, letter.envelope, this.#events.insert(requeued, now), now);
    }
    return letters.map(({ letter }) => letter);
  }

  /** Deletes every dead letter with this id, so the id is forgotten. Throws NOT_FOUND when there is none. */
  discard(envelopeId: string, now: number): DeadLetter[] {
    const letters = this.#deadLettersOf(envelopeId);
    for (const { seq, letter } of letters) {
      this.#deleteSeq.run(seq);
      this.#cache.forget(seq);
      this.#events.insert({ type: 'message.discarded', mailbox: letter.mailbox, messageId: envelopeId }, now);
    }
    return letters.map(({ letter }) => letter);
  }

  /** The dead letters of `envelopeId` in every mailbox, oldest first; NOT_FOUND when there is none. */
  #deadLettersOf(envelopeId: string): { seq: number; letter: DeadLetter }[] {
    const letters = this.#deadById.all(envelopeId).map((row) => {
      const { seq } = parseRow(seqRow, row, 'dead letters');
      return { seq, letter: toDeadLetter(row) };
    });
    if (letters.length === 0)
      throw new MusubiError('NOT_FOUND', `no dead letter with envelope id ${envelopeId}`);
    return letters;
  }

  /** Inserts a ready message with attempt 0; `seq` is the cursor of the event recording it. */
  #insertRow(mailbox: string, envelope: Envelope, seq: number, now: number): void {
    // A new envelope already has attempt 0 (a requeued dead letter does not): no copy on the send path.
    const text = JSON.stringify(envelope.attempt === 0 ? envelope : { ...envelope, attempt: 0 });
    this.#insert.run(seq, mailbox, envelope.id, priorityRank(envelope.priority), text, now);
    this.#cache.remember(seq, text, envelope);
  }

  /** Decodes a leased row (seq, attempt, envelope, available_at) into a Delivery. */
  #toDelivery(mailbox: string, row: unknown): Delivery {
    const where = `messages ${mailbox}`;
    const { seq, attempt, envelope: text, available_at: leaseUntil } = parseRow(leasedRow, row, where);
    const envelope = this.#cache.decode(seq, text, attempt, where);
    return {
      deliveryId: formatDeliveryId({ mailbox, envelopeId: envelope.id, seq, attempt }),
      mailbox,
      envelope,
      leaseUntil,
    };
  }

  /**
   * Runs `write` (which returns false when its guarded statement matched no live lease); on false,
   * works out whether the delivery is gone (NOT_FOUND) or its lease ended (LEASE_EXPIRED) and throws.
   */
  #leaseWrite<T>(ref: DeliveryRef, now: number, write: (params: LeaseParams) => T | false): T {
    const result = write([ref.seq, ref.mailbox, ref.envelopeId, ref.attempt, now]);
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

/** Decodes a dead-letter row (seq, mailbox, attempt, envelope, dead_reason, dead_at). */
export function toDeadLetter(row: unknown): DeadLetter {
  const dead = parseRow(deadRow, row, 'dead letters');
  const envelope = decodeEnvelope(dead.envelope, dead.attempt, `dead letters ${dead.mailbox}`);
  return { mailbox: dead.mailbox, envelope, reason: dead.dead_reason, deadAt: dead.dead_at };
}
