import type { Envelope } from '../../core/envelope.js';
import { formatDeliveryId, leaseProblem, type DeliveryRef } from '../delivery-id.js';
import type { DeadLetter, Delivery, MailboxCounts, MessageState, StoredMessage } from '../store.js';
import { BinaryHeap } from './binary-heap.js';

/** One live message of a {@link MemoryMailbox}. Mutated only by the mailbox. */
export interface MessageRecord {
  readonly seq: number;
  readonly rank: number;
  /** As appended, with attempt 0; the live count is `attempt`. */
  readonly envelope: Envelope;
  attempt: number;
  isLeased: boolean;
  /** When a leased or delayed message becomes claimable; when a ready one became so. */
  availableAt: number;
  /** Bumped on every move; heap entries carrying an older version are stale. */
  version: number;
}

/** A dead letter plus its place in the global death order. */
export interface DeadRecord {
  readonly letter: DeadLetter;
  readonly seq: number;
  readonly order: number;
}

interface HeapEntry {
  readonly record: MessageRecord;
  readonly version: number;
  readonly at: number;
}

/**
 * One mailbox of the memory store. Ready messages sit in a heap ordered by (priority, seq); leased and
 * delayed ones in a heap ordered by the time they become claimable, and move over lazily when a claim
 * finds them due. Claims are O(log n) however many messages are leased or delayed.
 */
export class MemoryMailbox {
  readonly name: string;
  readonly messages = new Map<string, MessageRecord>();
  readonly dead = new Map<string, DeadRecord>();
  readonly #ready = new BinaryHeap<HeapEntry>(
    (a, b) => a.record.rank - b.record.rank || a.record.seq - b.record.seq,
  );
  readonly #waiting = new BinaryHeap<HeapEntry>((a, b) => a.at - b.at || a.record.seq - b.record.seq);

  constructor(name: string) {
    this.name = name;
  }

  get isEmpty(): boolean {
    return this.messages.size === 0 && this.dead.size === 0;
  }

  /** Adds a new, immediately claimable message. */
  add(record: MessageRecord, now: number): void {
    this.messages.set(record.envelope.id, record);
    this.#place(record, now);
  }

  /** Leases the next claimable message until `leaseUntil`, or returns null. */
  claimNext(now: number, leaseUntil: number): MessageRecord | null {
    this.#promoteDue(now);
    for (let entry = this.#ready.pop(); entry !== undefined; entry = this.#ready.pop()) {
      if (isStale(entry)) continue;
      const record = entry.record;
      record.attempt++;
      record.isLeased = true;
      record.availableAt = leaseUntil;
      this.#place(record, now);
      return record;
    }
    return null;
  }

  /**
   * The live message `envelopeId` when a claim could hand it out at `now` (no delay left and no lease,
   * or the lease ended), else undefined. O(1): its heap entries turn stale once it is removed.
   */
  claimable(envelopeId: string, now: number): MessageRecord | undefined {
    const record = this.messages.get(envelopeId);
    return record !== undefined && record.availableAt <= now ? record : undefined;
  }

  /**
   * The record holding the live lease named by `ref`. Throws NOT_FOUND when the message is gone or the
   * attempt was never handed out, LEASE_EXPIRED when the lease passed, ended, or was superseded.
   */
  leased(ref: DeliveryRef, now: number): MessageRecord {
    const record = this.messages.get(ref.envelopeId);
    const current =
      record === undefined
        ? undefined
        : {
            seq: record.seq,
            attempt: record.attempt,
            isLeased: record.isLeased,
            leaseUntil: record.availableAt,
          };
    const problem = leaseProblem(ref, current, now);
    if (problem !== null || record === undefined) throw problem;
    return record;
  }

  /** Ends the lease; the message becomes claimable at `availableAt`. */
  release(record: MessageRecord, availableAt: number, now: number): void {
    record.isLeased = false;
    record.availableAt = availableAt;
    this.#place(record, now);
  }

  /** Moves the lease end. */
  extend(record: MessageRecord, leaseUntil: number, now: number): void {
    record.availableAt = leaseUntil;
    this.#place(record, now);
  }

  /** Removes a live message (ack, take or dead-letter); its heap entries turn stale. */
  remove(record: MessageRecord): void {
    record.version++;
    this.messages.delete(record.envelope.id);
  }

  /** When the earliest leased or delayed message becomes claimable (may be <= now), or null. */
  nextDueAt(): number | null {
    for (let entry = this.#waiting.peek(); entry !== undefined; entry = this.#waiting.peek()) {
      if (!isStale(entry)) return entry.at;
      this.#waiting.pop();
    }
    return null;
  }

  /** Live messages in delivery order, nothing claimed. */
  peek(now: number, limit: number): StoredMessage[] {
    return [...this.messages.values()]
      .sort((a, b) => a.rank - b.rank || a.seq - b.seq)
      .slice(0, limit)
      .map((record) => ({
        mailbox: this.name,
        seq: record.seq,
        envelope: this.envelopeOf(record),
        state: stateOf(record, now),
        availableAt: record.availableAt,
      }));
  }

  counts(now: number): MailboxCounts {
    const counts = emptyCounts(this.name);
    for (const record of this.messages.values()) counts[stateOf(record, now)]++;
    counts.total = this.messages.size;
    counts.deadLetters = this.dead.size;
    return counts;
  }

  /** A copy of the message's envelope with its live attempt count. */
  envelopeOf(record: MessageRecord): Envelope {
    return { ...record.envelope, headers: { ...record.envelope.headers }, attempt: record.attempt };
  }

  /** The delivery handed to the holder of the current lease. */
  delivery(record: MessageRecord): Delivery {
    return {
      deliveryId: formatDeliveryId({
        mailbox: this.name,
        envelopeId: record.envelope.id,
        seq: record.seq,
        attempt: record.attempt,
      }),
      mailbox: this.name,
      envelope: this.envelopeOf(record),
      leaseUntil: record.availableAt,
    };
  }

  /** Puts a record into the heap matching its availability; older entries turn stale. */
  #place(record: MessageRecord, now: number): void {
    record.version++;
    const entry: HeapEntry = { record, version: record.version, at: record.availableAt };
    if (record.isLeased || record.availableAt > now) this.#waiting.push(entry);
    else this.#ready.push(entry);
  }

  #promoteDue(now: number): void {
    for (let entry = this.#waiting.peek(); entry !== undefined; entry = this.#waiting.peek()) {
      if (!isStale(entry) && entry.at > now) return;
      this.#waiting.pop();
      if (isStale(entry)) continue;
      const record = entry.record;
      record.isLeased = false;
      record.version++;
      this.#ready.push({ record, version: record.version, at: record.availableAt });
    }
  }
}

/** Counts of a mailbox that holds nothing. */
export function emptyCounts(mailbox: string): { -readonly [K in keyof MailboxCounts]: MailboxCounts[K] } {
  return { mailbox, ready: 0, delayed: 0, leased: 0, total: 0, deadLetters: 0 };
}

/** A copy of a dead letter that shares nothing mutable with the store. */
export function copyDeadLetter(letter: DeadLetter): DeadLetter {
  return { ...letter, envelope: { ...letter.envelope, headers: { ...letter.envelope.headers } } };
}

function stateOf(record: MessageRecord, now: number): MessageState {
  if (record.availableAt <= now) return 'ready';
  return record.isLeased ? 'leased' : 'delayed';
}

function isStale(entry: HeapEntry): boolean {
  return entry.version !== entry.record.version;
}
