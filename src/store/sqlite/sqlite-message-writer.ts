import type { Clock } from '../../core/clock.js';
import type { Envelope } from '../../core/envelope.js';
import { parseDeliveryId } from '../delivery-id.js';
import type { AppendResult, DeadLetter, Delivery } from '../store.js';
import type { SqliteChangeFeed } from './sqlite-change-feed.js';
import { storeFailure } from './sqlite-errors.js';
import type { SqliteGroupCommit } from './sqlite-group-commit.js';
import type { SqliteMessages } from './sqlite-messages.js';
import type { SqliteReadSnapshot } from './sqlite-read-snapshot.js';

/** Mailboxes remembered as backlogged at most (short-lived mailbox names must not pile up). */
const MAX_BACKLOGGED = 1_024;

/**
 * The message verbs of the SQLite store, run through its group commit: each one's statements run in
 * their own savepoint of the next batch, its promise settles after that batch committed, and only then
 * does the change feed hear about it. Store time is read when the operation runs, not when it was
 * called. The caller checks that the store is open.
 */
export class SqliteMessageWriter {
  readonly #messages: SqliteMessages;
  readonly #commit: SqliteGroupCommit;
  readonly #feed: SqliteChangeFeed;
  readonly #clock: Clock;
  readonly #snapshot: SqliteReadSnapshot;
  /** Mailboxes whose last claim here found a message (see claim); a hint, dropped when it grows large. */
  readonly #isBacklogged = new Set<string>();

  constructor(parts: {
    messages: SqliteMessages;
    commit: SqliteGroupCommit;
    feed: SqliteChangeFeed;
    clock: Clock;
    snapshot: SqliteReadSnapshot;
  }) {
    this.#messages = parts.messages;
    this.#commit = parts.commit;
    this.#feed = parts.feed;
    this.#clock = parts.clock;
    this.#snapshot = parts.snapshot;
  }

  async append(mailbox: string, envelope: Envelope): Promise<AppendResult> {
    const result = await this.#commit.write('append', () =>
      this.#messages.append(mailbox, envelope, this.#clock.now()),
    );
    if (!result.isDuplicate) this.#feed.messagesAvailable(mailbox);
    return result;
  }

  /**
   * When the committed state holds nothing claimable, resolves null at once from a lock-free read:
   * idle or surplus consumers never take the write lock nor wait for a batch. A write still queued
   * is not seen (it has not happened yet); its commit notifies onAvailable listeners. While claims of
   * a mailbox keep finding messages that read is skipped (it costs a read transaction, about 5 µs,
   * and would only say yes); the first claim that comes back empty turns it on again. Rejects
   * STORE_CORRUPT (after committing the row's quarantine, so the next claim moves on) for a bad row.
   */
  async claim(mailbox: string, leaseMs: number): Promise<Delivery | null> {
    if (!this.#isBacklogged.has(mailbox) && !this.#hasClaimable(mailbox)) return null;
    const outcome = await this.#commit.write('claim', () =>
      this.#messages.claim(mailbox, leaseMs, this.#clock.now()),
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
    await this.#commit.write('ack', () => this.#messages.ack(ref, this.#clock.now()));
    this.#feed.events.notify();
  }

  async take(mailbox: string, envelopeId: string): Promise<boolean> {
    const isTaken = await this.#commit.write('take', () =>
      this.#messages.take(mailbox, envelopeId, this.#clock.now()),
    );
    if (isTaken) this.#feed.events.notify();
    return isTaken;
  }

  async nack(deliveryId: string, delayMs: number): Promise<void> {
    const ref = parseDeliveryId(deliveryId);
    await this.#commit.write('nack', () => this.#messages.nack(ref, delayMs, this.#clock.now()));
    this.#feed.messagesAvailable(ref.mailbox);
  }

  async extend(deliveryId: string, leaseMs: number): Promise<Delivery> {
    const ref = parseDeliveryId(deliveryId);
    const delivery = await this.#commit.write('extend', () =>
      this.#messages.extend(ref, leaseMs, this.#clock.now()),
    );
    this.#feed.events.notify();
    return delivery;
  }

  async deadLetter(deliveryId: string, reason: string): Promise<DeadLetter> {
    const ref = parseDeliveryId(deliveryId);
    const letter = await this.#commit.write('deadLetter', () =>
      this.#messages.deadLetter(ref, reason, this.#clock.now()),
    );
    this.#feed.events.notify();
    return letter;
  }

  async requeue(envelopeId: string): Promise<DeadLetter[]> {
    const letters = await this.#commit.write('requeueDeadLetter', () =>
      this.#messages.requeue(envelopeId, this.#clock.now()),
    );
    for (const mailbox of new Set(letters.map((l) => l.mailbox))) this.#feed.messagesAvailable(mailbox);
    return letters;
  }

  async discard(envelopeId: string): Promise<DeadLetter[]> {
    const letters = await this.#commit.write('discardDeadLetter', () =>
      this.#messages.discard(envelopeId, this.#clock.now()),
    );
    this.#feed.events.notify();
    return letters;
  }

  #hasClaimable(mailbox: string): boolean {
    try {
      return this.#snapshot.read(() => this.#messages.hasClaimable(mailbox, this.#clock.now()));
    } catch (err) {
      throw storeFailure(err, 'claim');
    }
  }
}
