import type { Envelope } from '../core/envelope.js';
import { formatDeliveryId, leaseProblem, type DeliveryRef } from './delivery-id.js';
import type { Delivery, MailboxCounts, MessageState, StoredMessage } from './store.js';
import { IndexedHeap, type HeapSlot } from './indexed-heap.js';

/** One live message of a {@link LiveMailbox}. Mutated only by the mailbox. */
export interface MessageRecord extends HeapSlot {
  readonly seq: number;
  readonly rank: number;
  /** As appended, frozen, with attempt 0; the live count is `attempt`. */
  readonly envelope: Envelope;
  attempt: number;
  isLeased: boolean;
  /** When a leased or delayed message becomes claimable; when a ready one became so. */
  availableAt: number;
  /** True while it waits in the time-ordered heap (leased or delayed), false while claimable. */
  isWaiting: boolean;
}

const RANKS = 4;
/** Removed records tolerated in a priority's list before it is compacted. */
const MIN_COMPACT = 32;

/**
 * The live messages (ready, leased, delayed) of one mailbox, in memory: the memory store's mailboxes,
 * and the SQLite store's mirror of the ones it reads. Claimable messages sit in a heap ordered by
 * (priority, seq); leased and delayed ones in a heap ordered by the time they become claimable, moved
 * over when a claim finds them due. Both heaps remove any record in O(log n), so an ack, take or nack
 * leaves nothing behind. Peek walks one list per priority in seq order (records are added in seq order
 * within a priority), skipping removed records, so it costs what it returns, not the mailbox's size.
 */
export class LiveMailbox {
  readonly name: string;
  readonly messages = new Map<string, MessageRecord>();
  readonly #ready = new IndexedHeap<MessageRecord>((a, b) => a.rank - b.rank || a.seq - b.seq);
  readonly #waiting = new IndexedHeap<MessageRecord>(
    (a, b) => a.availableAt - b.availableAt || a.seq - b.seq,
  );
  /** Per priority, the live records in seq order, with removed ones not yet compacted away. */
  readonly #order: MessageRecord[][] = [[], [], [], []];
  readonly #heads = [0, 0, 0, 0];
  readonly #removed = [0, 0, 0, 0];

  constructor(name: string) {
    this.name = name;
  }

  /** Adds a message with a seq above every other of its priority in this mailbox. */
  add(record: MessageRecord, now: number): void {
    this.messages.set(record.envelope.id, record);
    this.#order[record.rank]?.push(record);
    this.#place(record, now);
  }

  /**
   * Adds a message as a store loaded it: waiting (leased or delayed) or claimable as its row says,
   * whatever its time. Records of one priority must come in seq order.
   */
  restore(record: MessageRecord, isWaiting: boolean): void {
    this.messages.set(record.envelope.id, record);
    this.#order[record.rank]?.push(record);
    record.isWaiting = isWaiting;
    if (isWaiting) this.#waiting.push(record);
    else this.#ready.push(record);
  }

  /** Leases the next claimable message until `leaseUntil`, or returns null. */
  claimNext(now: number, leaseUntil: number): MessageRecord | null {
    this.promoteDue(now);
    const record = this.#ready.peek();
    if (record === undefined) return null;
    this.lease(record, record.attempt + 1, leaseUntil);
    return record;
  }

  /** Makes `record` the delivery numbered `attempt`, leased until `leaseUntil`. */
  lease(record: MessageRecord, attempt: number, leaseUntil: number): void {
    this.#unplace(record);
    record.attempt = attempt;
    record.isLeased = true;
    record.availableAt = leaseUntil;
    record.isWaiting = true;
    this.#waiting.push(record);
  }

  /** The live message `envelopeId` when a claim could hand it out at `now`, else undefined. O(1). */
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
    this.#unplace(record);
    record.isLeased = false;
    record.availableAt = availableAt;
    this.#place(record, now);
  }

  /** Moves the lease end. */
  extend(record: MessageRecord, leaseUntil: number, now: number): void {
    this.#unplace(record);
    record.availableAt = leaseUntil;
    this.#place(record, now);
  }

  /** Removes a live message (ack, take or dead-letter). */
  remove(record: MessageRecord): void {
    this.#unplace(record);
    this.messages.delete(record.envelope.id);
    this.#dropFromOrder(record.rank);
  }

  /** True when a claim at `now` would find a message. */
  hasClaimable(now: number): boolean {
    return this.#ready.size > 0 || (this.#waiting.peek()?.availableAt ?? Infinity) <= now;
  }

  /** When the earliest leased or delayed message becomes claimable (may be <= now), or null. */
  nextDueAt(): number | null {
    return this.#waiting.peek()?.availableAt ?? null;
  }

  /** Live messages in delivery order, nothing claimed. */
  peek(now: number, limit: number): StoredMessage[] {
    const out: StoredMessage[] = [];
    for (let rank = 0; rank < RANKS && out.length < limit; rank++) {
      const list = this.#order[rank] ?? [];
      for (let i = this.#heads[rank] ?? 0; i < list.length && out.length < limit; i++) {
        const record = list[i];
        if (record === undefined || record.heapIndex < 0) continue;
        out.push({
          mailbox: this.name,
          seq: record.seq,
          envelope: this.envelopeOf(record),
          state: stateOf(record, now),
          availableAt: record.availableAt,
        });
      }
    }
    return out;
  }

  /** Counts of the live messages (`deadLetters` is the caller's to fill in). */
  counts(now: number): { -readonly [K in keyof MailboxCounts]: MailboxCounts[K] } {
    const counts = emptyCounts(this.name);
    // Only waiting records can be anything but ready; the rest of the mailbox is claimable.
    for (const record of this.#waiting.items()) counts[stateOf(record, now)]++;
    counts.ready += this.#ready.size;
    counts.total = this.messages.size;
    return counts;
  }

  /**
   * The message's envelope with its live attempt count. A message never handed out has attempt 0, the
   * same as the frozen stored envelope, which is then given out itself: nobody can change it.
   */
  envelopeOf(record: MessageRecord): Envelope {
    if (record.attempt === 0) return record.envelope;
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

  /** Puts a record into the heap matching its availability. */
  #place(record: MessageRecord, now: number): void {
    record.isWaiting = record.isLeased || record.availableAt > now;
    if (record.isWaiting) this.#waiting.push(record);
    else this.#ready.push(record);
  }

  #unplace(record: MessageRecord): void {
    if (record.heapIndex < 0) return;
    if (record.isWaiting) this.#waiting.remove(record);
    else this.#ready.remove(record);
  }

  /** Moves every leased or delayed message whose time has come to the claimable ones. */
  promoteDue(now: number): void {
    for (let record = this.#waiting.peek(); record !== undefined; record = this.#waiting.peek()) {
      if (record.availableAt > now) return;
      this.#waiting.remove(record);
      record.isLeased = false;
      record.isWaiting = false;
      this.#ready.push(record);
    }
  }

  /** Counts a removal in its priority's list; drops removed records from the front or compacts. */
  #dropFromOrder(rank: number): void {
    const list = this.#order[rank];
    if (list === undefined) return;
    let head = this.#heads[rank] ?? 0;
    let removed = (this.#removed[rank] ?? 0) + 1;
    while (head < list.length && (list[head]?.heapIndex ?? 0) < 0) {
      head++;
      removed--;
    }
    const garbage = head + removed;
    if (garbage === list.length) {
      list.length = 0;
      head = 0;
      removed = 0;
    } else if (garbage >= MIN_COMPACT && garbage > list.length - garbage) {
      this.#order[rank] = list.filter((r) => r.heapIndex >= 0);
      head = 0;
      removed = 0;
    }
    this.#heads[rank] = head;
    this.#removed[rank] = removed;
  }
}

/** Counts of a mailbox that holds nothing. */
export function emptyCounts(mailbox: string): { -readonly [K in keyof MailboxCounts]: MailboxCounts[K] } {
  return { mailbox, ready: 0, delayed: 0, leased: 0, total: 0, deadLetters: 0 };
}

function stateOf(record: MessageRecord, now: number): MessageState {
  if (record.availableAt <= now) return 'ready';
  return record.isLeased ? 'leased' : 'delayed';
}
