import type { Clock } from '../../core/clock.js';
import type { Envelope } from '../../core/envelope.js';
import { parseDeliveryId } from '../delivery-id.js';
import type { AppendResult, DeadLetter, Delivery } from '../store.js';
import type { SqliteChangeFeed } from './sqlite-change-feed.js';
import type { SqliteEnvelopes } from './sqlite-envelopes.js';
import { storeFailure } from './sqlite-errors.js';
import type { SqliteGroupCommit } from './sqlite-group-commit.js';
import type { SqliteMailboxQueries } from './sqlite-mailbox-queries.js';
import type { SqliteMessages } from './sqlite-messages.js';
import type { SqliteMirror } from './sqlite-mirror.js';
import type { SqliteReadSnapshot } from './sqlite-read-snapshot.js';

/** Mailboxes remembered as backlogged at most (short-lived mailbox names must not pile up). */
const MAX_BACKLOGGED = 1_024;

/**
 * The message verbs of the SQLite store, run through its group commit: each one's statements run in
 * the next batch, and right after that batch's COMMIT its change is applied to the mirror of the
 * mailboxes (see SqliteMirror) and its promise settles; only then does the change feed hear about it.
 * Store time is read when the operation runs, not when it was called. The caller checks that the
 * store is open.
 */
export class SqliteMessageWriter {
  readonly #messages: SqliteMessages;
  readonly #envelopes: SqliteEnvelopes;
  readonly #queries: SqliteMailboxQueries;
  readonly #mirror: SqliteMirror;
  readonly #commit: SqliteGroupCommit;
  readonly #feed: SqliteChangeFeed;
  readonly #clock: Clock;
  readonly #snapshot: SqliteReadSnapshot;
  /** Mailboxes whose last claim here found a message (see claim); a hint, dropped when it grows large. */
  readonly #isBacklogged = new Set<string>();

  constructor(parts: {
    messages: SqliteMessages;
    envelopes: SqliteEnvelopes;
    queries: SqliteMailboxQueries;
    commit: SqliteGroupCommit;
    feed: SqliteChangeFeed;
    clock: Clock;
    snapshot: SqliteReadSnapshot;
  }) {
    this.#messages = parts.messages;
    this.#envelopes = parts.envelopes;
    this.#queries = parts.queries;
    this.#mirror = parts.queries.mirror;
    this.#commit = parts.commit;
    this.#feed = parts.feed;
    this.#clock = parts.clock;
    this.#snapshot = parts.snapshot;
  }

  async append(mailbox: string, envelope: Envelope): Promise<AppendResult> {
    const result = await this.#commit.write(
      'append',
      () => this.#messages.append(mailbox, envelope, this.#clock.now()),
      (appended) => {
        if (appended.isDuplicate) return;
        // Committed: the event holding the envelope is there for good, so the envelope can be trusted.
        const stored = this.#envelopes.remember(appended.seq, envelope, appended.isHeldByEvent);
        this.#mirror.appended(mailbox, appended.seq, stored, appended.at);
      },
    );
    if (!result.isDuplicate) this.#feed.messagesAvailable(mailbox);
    return { seq: result.seq, isDuplicate: result.isDuplicate };
  }

  /**
   * When the committed state holds nothing claimable, resolves null at once from a lock-free read:
   * idle or surplus consumers never take the write lock nor wait for a batch. A write still queued
   * is not seen (it has not happened yet); its commit notifies onAvailable listeners. While claims of
   * a mailbox keep finding messages that read is skipped (it would only say yes); the first claim that
   * comes back empty turns it on again. Rejects STORE_CORRUPT (after committing the row's quarantine,
   * so the next claim moves on) for a bad row.
   */
  async claim(mailbox: string, leaseMs: number): Promise<Delivery | null> {
    if (!this.#isBacklogged.has(mailbox) && !this.#hasClaimable(mailbox)) return null;
    const outcome = await this.#commit.write(
      'claim',
      () => this.#messages.claim(mailbox, leaseMs, this.#clock.now()),
      (claimed) => {
        if (claimed === null) return;
        if ('corrupt' in claimed) this.#mirror.removed(mailbox, claimed.id);
        else {
          const { envelope, leaseUntil } = claimed.delivery;
          this.#mirror.claimed(mailbox, envelope.id, envelope.attempt, leaseUntil, claimed.at);
        }
      },
    );
    if (outcome === null) {
      this.#isBacklogged.delete(mailbox);
      return null;
    }
    if (this.#isBacklogged.size >= MAX_BACKLOGGED) this.#isBacklogged.clear();
    this.#isBacklogged.add(mailbox);
    if ('corrupt' in outcome) throw outcome.corrupt;
    this.#feed.events.notify();
    return outcome.delivery;
  }

  async ack(deliveryId: string): Promise<void> {
    const ref = parseDeliveryId(deliveryId);
    await this.#commit.write(
      'ack',
      () => this.#messages.ack(ref, this.#clock.now()),
      () => this.#mirror.removed(ref.mailbox, ref.envelopeId),
    );
    this.#feed.events.notify();
  }

  async take(mailbox: string, envelopeId: string): Promise<boolean> {
    const isTaken = await this.#commit.write(
      'take',
      () =>
        this.#messages.take(
          mailbox,
          envelopeId,
          this.#clock.now(),
          this.#mirror.placeOf(mailbox, envelopeId),
        ),
      (taken) => {
        if (taken) this.#mirror.removed(mailbox, envelopeId);
      },
    );
    if (isTaken) this.#feed.events.notify();
    return isTaken;
  }

  async nack(deliveryId: string, delayMs: number): Promise<void> {
    const ref = parseDeliveryId(deliveryId);
    await this.#commit.write(
      'nack',
      () => {
        const now = this.#clock.now();
        this.#messages.nack(ref, delayMs, now);
        return now;
      },
      (now) => this.#mirror.released(ref.mailbox, ref.envelopeId, now + Math.max(0, delayMs), now),
    );
    this.#feed.messagesAvailable(ref.mailbox);
  }

  async extend(deliveryId: string, leaseMs: number): Promise<Delivery> {
    const ref = parseDeliveryId(deliveryId);
    const delivery = await this.#commit.write(
      'extend',
      () => this.#messages.extend(ref, leaseMs, this.#clock.now()),
      (extended) =>
        this.#mirror.extended(ref.mailbox, ref.envelopeId, extended.leaseUntil, this.#clock.now()),
    );
    this.#feed.events.notify();
    return delivery;
  }

  async deadLetter(deliveryId: string, reason: string): Promise<DeadLetter> {
    const ref = parseDeliveryId(deliveryId);
    const letter = await this.#commit.write(
      'deadLetter',
      () => this.#messages.deadLetter(ref, reason, this.#clock.now()),
      () => this.#mirror.removed(ref.mailbox, ref.envelopeId, true),
    );
    this.#feed.events.notify();
    return letter;
  }

  async requeue(envelopeId: string): Promise<DeadLetter[]> {
    const requeued = await this.#commit.write(
      'requeueDeadLetter',
      () => {
        const now = this.#clock.now();
        return { now, letters: this.#messages.requeue(envelopeId, now) };
      },
      ({ now, letters }) => {
        for (const { letter, seq } of letters) {
          this.#mirror.letterGone(letter.mailbox);
          const stored = this.#envelopes.remember(seq, letter.envelope, false);
          this.#mirror.appended(letter.mailbox, seq, stored, now);
        }
      },
    );
    const letters = requeued.letters.map(({ letter }) => letter);
    for (const mailbox of new Set(letters.map((l) => l.mailbox))) this.#feed.messagesAvailable(mailbox);
    return letters;
  }

  async discard(envelopeId: string): Promise<DeadLetter[]> {
    const letters = await this.#commit.write(
      'discardDeadLetter',
      () => this.#messages.discard(envelopeId, this.#clock.now()),
      (discarded) => {
        for (const letter of discarded) this.#mirror.letterGone(letter.mailbox);
      },
    );
    this.#feed.events.notify();
    return letters;
  }

  #hasClaimable(mailbox: string): boolean {
    try {
      return this.#snapshot.read(() => this.#queries.hasClaimable(mailbox, this.#clock.now()));
    } catch (err) {
      throw storeFailure(err, 'claim');
    }
  }
}
