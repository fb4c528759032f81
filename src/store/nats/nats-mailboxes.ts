import { randomUUID } from 'node:crypto';
import type { Clock } from '../../core/clock.js';
import type { ServerClock } from './server-clock.js';
import type { Envelope } from '../../core/envelope.js';
import { MusubiError } from '../../core/errors.js';
import type { AvailableListeners } from '../available-listeners.js';
import { leaseProblem, parseDeliveryId, type DeliveryRef } from '../delivery-id.js';
import type { AppendResult, DeadLetter, Delivery } from '../store.js';
import { envelopeSubjects, messageSubject, type JournalNames } from './journal-names.js';
import type { JournalRecord, MessageRecord } from './journal-record.js';
import type { JournalView } from './journal-view.js';
import type { JournalWriter } from './journal-writer.js';
import { deadLetterOf, deliveryOf, messageEntry, type MessageEntry } from './mailbox-view.js';

/** Compare-and-set rounds before a verb gives up on a message other processes keep changing. */
const MAX_ROUNDS = 32;
/** Writes whose outcome this store did not learn (see ack and append) that it remembers at most. */
const MAX_UNSURE = 10_000;

/** Writes that failed for want of the server, by key, with what a retry needs; the oldest forgotten. */
class Unsure<V> {
  readonly #entries = new Map<string, V>();

  note(key: string, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    // A Map iterates in insertion order: the first key is the oldest.
    for (const old of this.#entries.keys()) {
      if (this.#entries.size <= MAX_UNSURE) break;
      this.#entries.delete(old);
    }
  }

  get(key: string): V | undefined {
    return this.#entries.get(key);
  }

  /** Forgets `key`; true when it was there. */
  delete(key: string): boolean {
    return this.#entries.delete(key);
  }
}

/** Collaborators of {@link NatsMailboxes}. */
export interface NatsMailboxesOptions {
  readonly names: JournalNames;
  readonly view: JournalView;
  readonly writer: JournalWriter;
  /** The server's time: leases are decided on it, and taken only while assertCanLease passes. */
  readonly clock: Clock & Pick<ServerClock, 'assertCanLease'>;
  readonly listeners: AvailableListeners;
}

type StateChange = Pick<MessageRecord, 'attempt' | 'isLeased' | 'availableAt'> & {
  readonly position?: number;
};

/** A message record carrying `entry`'s message with changed state, at time `now`. */
function changed<Op extends MessageRecord['op']>(
  op: Op,
  entry: MessageEntry,
  state: StateChange,
  now: number,
): { op: Op } & Omit<MessageRecord, 'op'> {
  const { mailbox, envelope } = entry.record;
  const position = state.position ?? entry.position;
  return { op, mailbox, envelope, ...state, position, at: now };
}

/** NOT_FOUND or LEASE_EXPIRED when `entry` does not hold the live lease `ref` names, else null. */
function entryLeaseProblem(
  ref: DeliveryRef,
  entry: MessageEntry | undefined,
  now: number,
): MusubiError | null {
  const record = entry?.record;
  const current =
    entry === undefined || record === undefined || record.op === 'dead'
      ? undefined
      : {
          seq: entry.position,
          attempt: record.attempt,
          isLeased: record.isLeased,
          leaseUntil: record.availableAt,
        };
  return leaseProblem(ref, current, now);
}

/** True when a claim could hand out `entry`'s message at `now`: live, no delay left, no live lease. */
function isClaimableAt(entry: MessageEntry | undefined, now: number): entry is MessageEntry {
  return entry !== undefined && entry.record.op !== 'dead' && entry.record.availableAt <= now;
}

function tooBusy(subject: string): MusubiError {
  return new MusubiError('STORE_UNAVAILABLE', `NATS store: ${subject} kept changing; gave up`);
}

/**
 * The mailbox verbs of the NATS store. Each picks its message from the journal view, then writes the
 * next record of that message conditionally on the revision it saw; when another process got there
 * first it re-reads the subject and decides again. The view is only ever a hint.
 */
export class NatsMailboxes {
  readonly #o: NatsMailboxesOptions;
  /** Deliveries whose ack failed as STORE_UNAVAILABLE: it may have landed all the same. */
  readonly #unsureAcks = new Unsure<true>();
  /** Message subjects whose send failed as STORE_UNAVAILABLE, with the msgId that send used. */
  readonly #unsureSends = new Unsure<string>();

  constructor(options: NatsMailboxesOptions) {
    this.#o = options;
  }

  async append(mailbox: string, envelope: Envelope): Promise<AppendResult> {
    const { names, view, writer, clock } = this.#o;
    const subject = messageSubject(names, mailbox, envelope.id);
    const known = view.entry(mailbox, envelope.id);
    // A subject whose newest record is an ack may take a new message: expect that record.
    let expected = known === undefined ? view.revisionOf(subject) : 0;
    // A send that failed for want of the server may have been stored all the same (its reply lost); a
    // retry then passes the same msgId, so the server drops it rather than storing the message twice,
    // even if the first copy was delivered and acked meanwhile.
    const msgId = this.#unsureSends.get(subject) ?? randomUUID();
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const now = clock.now();
      const record: JournalRecord = {
        op: 'sent',
        mailbox,
        envelope: { ...envelope, attempt: 0 },
        attempt: 0,
        isLeased: false,
        availableAt: now,
        at: now,
      };
      let written: Awaited<ReturnType<JournalWriter['writeOnce']>>;
      try {
        written = await writer.writeOnce(subject, record, expected, msgId);
      } catch (err) {
        if (err instanceof MusubiError && err.code === 'STORE_UNAVAILABLE')
          this.#unsureSends.note(subject, msgId);
        throw err;
      }
      this.#unsureSends.delete(subject);
      if (typeof written === 'object') return { seq: written.duplicateOf, isDuplicate: true };
      if (written !== 'conflict') {
        this.#o.listeners.notify(mailbox);
        return { seq: written, isDuplicate: false };
      }
      const current = await writer.refreshRevision(subject);
      if (current.entry !== undefined) return { seq: current.entry.position, isDuplicate: true };
      expected = current.revision;
    }
    throw tooBusy(subject);
  }

  async claim(mailbox: string, leaseMs: number): Promise<Delivery | null> {
    const { view, writer, clock } = this.#o;
    clock.assertCanLease();
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const box = view.mailbox(mailbox);
      const now = clock.now();
      const entry = box?.takeNext(now) ?? null;
      if (box === undefined || entry === null) return null;
      const { attempt } = entry.record;
      const record = changed(
        'claimed',
        entry,
        { attempt: attempt + 1, isLeased: true, availableAt: now + leaseMs },
        now,
      );
      let seq: number | 'conflict';
      try {
        seq = await writer.write(entry.subject, record, entry.revision);
      } finally {
        box.putBack(entry, clock.now());
      }
      if (seq !== 'conflict') return deliveryOf(messageEntry(entry.subject, seq, record));
      await writer.refresh(entry.subject);
    }
    return null;
  }

  /**
   * Acks the delivery. An ack that failed for want of the server (a partition) may still land when
   * the connection comes back, conditional on the lease it was written for; acked again by this store,
   * it then finds the message acked under this very delivery and succeeds instead of saying NOT_FOUND.
   * (A delivery acked twice otherwise is NOT_FOUND, as on every store.)
   */
  async ack(deliveryId: string): Promise<void> {
    try {
      await this.#settle(deliveryId, (entry, now) => ({
        op: 'acked',
        mailbox: entry.record.mailbox,
        messageId: entry.record.envelope.id,
        at: now,
        delivery: { position: entry.position, attempt: entry.record.attempt },
      }));
      this.#unsureAcks.delete(deliveryId);
    } catch (err) {
      if (!(err instanceof MusubiError)) throw err;
      if (err.code === 'STORE_UNAVAILABLE') this.#unsureAcks.note(deliveryId, true);
      if (err.code !== 'NOT_FOUND' || !this.#unsureAcks.delete(deliveryId)) throw err;
      const ref = parseDeliveryId(deliveryId);
      const subject = messageSubject(this.#o.names, ref.mailbox, ref.envelopeId);
      const newest = await this.#o.writer.newestRecord(subject);
      const acked = newest?.op === 'acked' ? newest.delivery : undefined;
      if (acked?.position !== ref.seq || acked.attempt !== ref.attempt) throw err;
    }
  }

  /**
   * Writes an `acked` record for the message when it is claimable now; false when it is not. Like a
   * lease check, a "no" from the view is confirmed by re-reading the subject, and a lost
   * compare-and-set re-reads it before deciding again.
   */
  async take(mailbox: string, envelopeId: string): Promise<boolean> {
    const { names, view, writer, clock } = this.#o;
    const subject = messageSubject(names, mailbox, envelopeId);
    let entry = view.entry(mailbox, envelopeId);
    let isFresh = false;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const now = clock.now();
      if (isClaimableAt(entry, now)) {
        const record: JournalRecord = { op: 'acked', mailbox, messageId: envelopeId, at: now };
        if ((await writer.write(subject, record, entry.revision)) !== 'conflict') return true;
      } else if (isFresh) {
        return false;
      }
      entry = await writer.refresh(subject);
      isFresh = true;
    }
    throw tooBusy(subject);
  }

  async nack(deliveryId: string, delayMs: number): Promise<void> {
    const { record } = await this.#settle(deliveryId, (entry, now) => ({
      ...changed(
        'nacked',
        entry,
        { attempt: entry.record.attempt, isLeased: false, availableAt: now + Math.max(0, delayMs) },
        now,
      ),
      delayMs,
    }));
    this.#o.listeners.notify(record.mailbox);
  }

  async extend(deliveryId: string, leaseMs: number): Promise<Delivery> {
    this.#o.clock.assertCanLease();
    const { entry, seq, record } = await this.#settle(deliveryId, (current, now) =>
      changed(
        'extended',
        current,
        { attempt: current.record.attempt, isLeased: true, availableAt: now + leaseMs },
        now,
      ),
    );
    return deliveryOf(messageEntry(entry.subject, seq, record));
  }

  async deadLetter(deliveryId: string, reason: string): Promise<DeadLetter> {
    const { entry, seq, record } = await this.#settle(deliveryId, (current, now) => ({
      ...changed(
        'dead',
        current,
        { attempt: current.record.attempt, isLeased: false, availableAt: now },
        now,
      ),
      reason,
    }));
    return deadLetterOf(messageEntry(entry.subject, seq, record));
  }

  /** Requeues the dead letters of `envelopeId` in every mailbox, read fresh from the server. */
  async requeue(envelopeId: string): Promise<DeadLetter[]> {
    const letters = await this.#rewriteDead(envelopeId, (entry, now) => {
      // No position: the requeued message takes a new place at the back of its priority.
      const { position: _old, ...record } = changed(
        'requeued',
        entry,
        { attempt: 0, isLeased: false, availableAt: now },
        now,
      );
      return record;
    });
    for (const letter of letters) this.#o.listeners.notify(letter.mailbox);
    return letters;
  }

  /**
   * Removes the dead letters of `envelopeId` in every mailbox, read fresh from the server: each gets a
   * `discarded` record, which (like `acked`) frees the id for a new message.
   */
  async discard(envelopeId: string): Promise<DeadLetter[]> {
    return this.#rewriteDead(envelopeId, (entry, now) => ({
      op: 'discarded',
      mailbox: entry.record.mailbox,
      messageId: entry.record.envelope.id,
      at: now,
    }));
  }

  /**
   * Writes the record `make` builds over every dead letter of `envelopeId`, oldest first, each
   * conditional on the revision read; a lost compare-and-set re-reads the subject and tries again while
   * it is still dead. Resolves the letters rewritten; NOT_FOUND when there was none.
   */
  async #rewriteDead(
    envelopeId: string,
    make: (entry: MessageEntry, now: number) => JournalRecord,
  ): Promise<DeadLetter[]> {
    const { names, writer, clock } = this.#o;
    const dead = (await writer.refreshAll(envelopeSubjects(names, envelopeId)))
      .filter((entry) => entry.record.op === 'dead')
      .sort((a, b) => a.revision - b.revision);
    const letters: DeadLetter[] = [];
    for (let entry of dead) {
      for (let round = 0; round < MAX_ROUNDS && entry?.record.op === 'dead'; round++) {
        const seq = await writer.write(entry.subject, make(entry, clock.now()), entry.revision);
        if (seq !== 'conflict') {
          letters.push(deadLetterOf(entry));
          break;
        }
        const fresh = await writer.refresh(entry.subject);
        if (fresh === undefined) break;
        entry = fresh;
      }
    }
    if (letters.length === 0)
      throw new MusubiError('NOT_FOUND', `no dead letter with envelope id ${envelopeId}`);
    return letters;
  }

  /**
   * Writes the record `make` builds for the message holding the live lease `deliveryId` names. A
   * failed lease check or a lost compare-and-set re-reads the subject from the server before deciding,
   * so a stale view never turns into a wrong NOT_FOUND or LEASE_EXPIRED.
   */
  async #settle<R extends JournalRecord>(
    deliveryId: string,
    make: (entry: MessageEntry, now: number) => R,
  ): Promise<{ entry: MessageEntry; seq: number; record: R }> {
    const { names, view, writer, clock } = this.#o;
    const ref = parseDeliveryId(deliveryId);
    const subject = messageSubject(names, ref.mailbox, ref.envelopeId);
    let entry = view.entry(ref.mailbox, ref.envelopeId);
    let isFresh = false;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const now = clock.now();
      const problem = entryLeaseProblem(ref, entry, now);
      if (problem !== null && isFresh) throw problem;
      if (problem === null && entry !== undefined) {
        const record = make(entry, now);
        const seq = await writer.write(subject, record, entry.revision);
        if (seq !== 'conflict') return { entry, seq, record };
      }
      entry = await writer.refresh(subject);
      isFresh = true;
    }
    throw tooBusy(subject);
  }
}
