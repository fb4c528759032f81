import { priorityRank, type Envelope } from '../../core/envelope.js';
import { formatDeliveryId } from '../delivery-id.js';
import { IndexedHeap, type HeapSlot } from '../indexed-heap.js';
import type { DeadLetter, Delivery, MailboxCounts, MessageState, StoredMessage } from '../store.js';
import type { MessageRecord } from './journal-record.js';

/** The newest record of one message subject as this process knows it. Replaced, never mutated. */
export interface MessageEntry {
  readonly subject: string;
  /** Stream sequence of the record: the expected last subject sequence of the next write. */
  readonly revision: number;
  readonly position: number;
  readonly rank: number;
  readonly record: MessageRecord;
}

/** A live entry's place in one of the two heaps. */
interface HeapItem extends HeapSlot {
  readonly entry: MessageEntry;
  readonly at: number;
  readonly isWaiting: boolean;
}

/**
 * One mailbox of the journal view. Live messages sit in a heap ordered by (priority, position) when
 * claimable and in a heap ordered by availability time when leased or delayed, moved over when a claim
 * finds them due, as in the memory store. Replacing an entry takes its old one out of its heap, so
 * nothing stale stays behind. Dead letters are kept apart.
 */
export class MailboxView {
  readonly name: string;
  readonly #live = new Map<string, MessageEntry>();
  readonly #dead = new Map<string, MessageEntry>();
  /** The heap item of each live entry that is in line (not taken by {@link MailboxView.takeNext}). */
  readonly #placed = new Map<string, HeapItem>();
  readonly #ready = new IndexedHeap<HeapItem>(
    (a, b) => a.entry.rank - b.entry.rank || a.entry.position - b.entry.position,
  );
  readonly #waiting = new IndexedHeap<HeapItem>((a, b) => a.at - b.at || a.entry.position - b.entry.position);

  constructor(name: string) {
    this.name = name;
  }

  get isEmpty(): boolean {
    return this.#live.size === 0 && this.#dead.size === 0;
  }

  /** The entry of a live or dead message, by envelope id. */
  get(envelopeId: string): MessageEntry | undefined {
    return this.#live.get(envelopeId) ?? this.#dead.get(envelopeId);
  }

  /** Replaces whatever the view held for `envelopeId` with `entry` (or drops it when null). */
  set(envelopeId: string, entry: MessageEntry | null, now: number): void {
    this.#live.delete(envelopeId);
    this.#dead.delete(envelopeId);
    this.#unplace(envelopeId);
    if (entry === null) return;
    if (entry.record.op === 'dead') {
      this.#dead.set(envelopeId, entry);
      return;
    }
    this.#live.set(envelopeId, entry);
    this.#place(entry, now);
  }

  /**
   * Removes the next claimable message from the claim order and returns it; the caller either writes
   * a newer record for it or gives it back with {@link MailboxView.putBack}.
   */
  takeNext(now: number): MessageEntry | null {
    this.#promoteDue(now);
    const item = this.#ready.pop();
    if (item === undefined) return null;
    this.#placed.delete(item.entry.record.envelope.id);
    return item.entry;
  }

  /** Puts a taken entry back in line unless a newer record replaced it meanwhile. */
  putBack(entry: MessageEntry, now: number): void {
    if (this.#isCurrent(entry) && !this.#placed.has(entry.record.envelope.id)) this.#place(entry, now);
  }

  /** When the earliest leased or delayed message becomes claimable (may be <= now), or null. */
  nextDueAt(): number | null {
    return this.#waiting.peek()?.at ?? null;
  }

  /** Live messages in delivery order, nothing claimed. */
  peek(now: number, limit: number): StoredMessage[] {
    return [...this.#live.values()]
      .sort((a, b) => a.rank - b.rank || a.position - b.position)
      .slice(0, limit)
      .map((entry) => ({
        mailbox: this.name,
        seq: entry.position,
        envelope: envelopeOf(entry),
        state: stateOf(entry, now),
        availableAt: entry.record.availableAt,
      }));
  }

  counts(now: number): MailboxCounts {
    const counts = { mailbox: this.name, ready: 0, delayed: 0, leased: 0, total: 0, deadLetters: 0 };
    for (const entry of this.#live.values()) counts[stateOf(entry, now)]++;
    counts.total = this.#live.size;
    counts.deadLetters = this.#dead.size;
    return counts;
  }

  /** Dead letters with their death order (the revision of the dead record). */
  deadLetters(): { letter: DeadLetter; order: number }[] {
    return [...this.#dead.values()].map((entry) => ({ letter: deadLetterOf(entry), order: entry.revision }));
  }

  #isCurrent(entry: MessageEntry): boolean {
    return this.#live.get(entry.record.envelope.id) === entry;
  }

  #place(entry: MessageEntry, now: number): void {
    const at = entry.record.availableAt;
    const isWaiting = entry.record.isLeased || at > now;
    const item: HeapItem = { entry, at, isWaiting, heapIndex: -1 };
    this.#placed.set(entry.record.envelope.id, item);
    (isWaiting ? this.#waiting : this.#ready).push(item);
  }

  #unplace(envelopeId: string): void {
    const item = this.#placed.get(envelopeId);
    if (item === undefined) return;
    this.#placed.delete(envelopeId);
    (item.isWaiting ? this.#waiting : this.#ready).remove(item);
  }

  #promoteDue(now: number): void {
    for (let item = this.#waiting.peek(); item !== undefined && item.at <= now; item = this.#waiting.peek()) {
      this.#waiting.pop();
      const ready: HeapItem = { entry: item.entry, at: item.at, isWaiting: false, heapIndex: -1 };
      this.#placed.set(item.entry.record.envelope.id, ready);
      this.#ready.push(ready);
    }
  }
}

/** Builds the entry for a message record stored at `revision`. */
export function messageEntry(subject: string, revision: number, record: MessageRecord): MessageEntry {
  return {
    subject,
    revision,
    position: record.position ?? revision,
    rank: priorityRank(record.envelope.priority),
    record,
  };
}

/** The envelope of an entry with its live attempt count (a fresh copy). */
export function envelopeOf(entry: MessageEntry): Envelope {
  const { envelope } = entry.record;
  return { ...envelope, headers: { ...envelope.headers }, attempt: entry.record.attempt };
}

/** The delivery handed to the holder of the entry's current lease. */
export function deliveryOf(entry: MessageEntry): Delivery {
  const { mailbox, attempt, availableAt } = entry.record;
  return {
    deliveryId: formatDeliveryId({
      mailbox,
      envelopeId: entry.record.envelope.id,
      seq: entry.position,
      attempt,
    }),
    mailbox,
    envelope: envelopeOf(entry),
    leaseUntil: availableAt,
  };
}

/** The dead letter a dead entry stands for. */
export function deadLetterOf(entry: MessageEntry): DeadLetter {
  const { record } = entry;
  const reason = record.op === 'dead' ? record.reason : '';
  return { mailbox: record.mailbox, envelope: envelopeOf(entry), reason, deadAt: record.at };
}

function stateOf(entry: MessageEntry, now: number): MessageState {
  if (entry.record.availableAt <= now) return 'ready';
  return entry.record.isLeased ? 'leased' : 'delayed';
}
