import { MusubiError } from '../../core/errors.js';
import { isMessageRecord, type JournalRecord } from './journal-record.js';
import { MailboxView, messageEntry, type MessageEntry } from './mailbox-view.js';

interface Tombstone {
  readonly subject: string;
  readonly revision: number;
}

/**
 * This process's picture of every mailbox, built from the journal: for each message subject, its
 * newest record. Records arrive twice, from this process's own writes (applied at once) and from the
 * journal follower (in stream order); a record older than what the view already holds is ignored, so
 * the view only moves forward. Acked messages leave a tombstone until the follower has passed it, so
 * a late copy of an older record cannot bring them back. The view is a hint for choosing what to
 * claim; every write is still a compare-and-set on the server.
 */
export class JournalView {
  readonly #mailboxes = new Map<string, MailboxView>();
  /** Newest known revision of every message subject, including acked ones (until pruned). */
  readonly #revisions = new Map<string, number>();
  readonly #tombstones: Tombstone[] = [];
  readonly #followWaiters = new Set<{ readonly seq: number; readonly wake: () => void }>();
  #followedSeq = 0;

  /** Highest stream sequence the follower has delivered. */
  get followedSeq(): number {
    return this.#followedSeq;
  }

  /** The mailbox view of `name`, if it holds anything. */
  mailbox(name: string): MailboxView | undefined {
    return this.#mailboxes.get(name);
  }

  /** Names of mailboxes holding live messages or dead letters, sorted. */
  mailboxNames(): string[] {
    return [...this.#mailboxes.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /** The newest revision known for a message subject (0 when unknown). */
  revisionOf(subject: string): number {
    return this.#revisions.get(subject) ?? 0;
  }

  /** The entry of a live or dead message. */
  entry(mailbox: string, envelopeId: string): MessageEntry | undefined {
    return this.#mailboxes.get(mailbox)?.get(envelopeId);
  }

  /**
   * Applies the record stored at `seq` on message subject `subject`, delivered by the follower or
   * `fetched` (a write's acknowledgement or a direct read). Returns the new entry (null for an ack)
   * when the record is newer than what the view holds, undefined when it is not. A fetched record the
   * follower has already passed is old news: the view holds it or something newer (possibly an ack
   * whose tombstone is gone), so it is ignored rather than allowed to bring a message back.
   */
  apply(
    subject: string,
    seq: number,
    record: JournalRecord,
    options: { readonly now: number; readonly isFetched: boolean },
  ): MessageEntry | null | undefined {
    if (record.op === 'event' || seq <= this.revisionOf(subject)) return undefined;
    if (options.isFetched && seq <= this.#followedSeq) return undefined;
    const now = options.now;
    this.#revisions.set(subject, seq);
    const mailboxName = record.mailbox;
    const envelopeId = isMessageRecord(record) ? record.envelope.id : record.messageId;
    let box = this.#mailboxes.get(mailboxName);
    if (box === undefined) {
      box = new MailboxView(mailboxName);
      this.#mailboxes.set(mailboxName, box);
    }
    const entry = isMessageRecord(record) ? messageEntry(subject, seq, record) : null;
    box.set(envelopeId, entry, now);
    if (entry === null) {
      this.#tombstones.push({ subject, revision: seq });
      if (box.isEmpty) this.#mailboxes.delete(mailboxName);
    }
    return entry;
  }

  /** Drops what the view holds for a message the server no longer has at all. */
  forget(subject: string, mailbox: string, envelopeId: string): void {
    this.#revisions.delete(subject);
    const box = this.#mailboxes.get(mailbox);
    if (box === undefined) return;
    box.set(envelopeId, null, 0);
    if (box.isEmpty) this.#mailboxes.delete(mailbox);
  }

  /** Records that the follower has delivered everything up to `seq`; prunes passed tombstones. */
  noteFollowed(seq: number): void {
    if (seq <= this.#followedSeq) return;
    this.#followedSeq = seq;
    // Tombstones arrive roughly in revision order; a late one is pruned when the head passes it.
    while (this.#tombstones.length > 0 && (this.#tombstones[0]?.revision ?? Infinity) <= seq) {
      const stone = this.#tombstones.shift();
      if (stone !== undefined && this.#revisions.get(stone.subject) === stone.revision) {
        this.#revisions.delete(stone.subject);
      }
    }
    for (const waiter of [...this.#followWaiters]) if (waiter.seq <= seq) waiter.wake();
  }

  /**
   * Resolves once the follower has delivered `seq`. Rejects with STORE_UNAVAILABLE after `timeoutMs`
   * or with the signal's reason when `signal` aborts (the store closing).
   */
  waitFollowed(
    seq: number,
    options: { readonly timeoutMs: number; readonly signal: AbortSignal },
  ): Promise<void> {
    if (seq <= this.#followedSeq) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const settle = (): void => {
        clearTimeout(timer);
        this.#followWaiters.delete(waiter);
        options.signal.removeEventListener('abort', onAbort);
      };
      const waiter = {
        seq,
        wake: () => {
          settle();
          resolve();
        },
      };
      const onAbort = (): void => {
        settle();
        reject(options.signal.reason);
      };
      const timer = setTimeout(() => {
        settle();
        reject(
          new MusubiError('STORE_UNAVAILABLE', `NATS store: journal follower did not reach ${seq} in time`),
        );
      }, options.timeoutMs);
      this.#followWaiters.add(waiter);
      options.signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
