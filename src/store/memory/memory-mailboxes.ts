import type { Clock } from '../../core/clock.js';
import { priorityRank, type Envelope } from '../../core/envelope.js';
import { MusubiError } from '../../core/errors.js';
import type { AvailableListeners } from '../available-listeners.js';
import { parseDeliveryId } from '../delivery-id.js';
import type { AppendResult, DeadLetter, Delivery, MailboxCounts, StoredMessage } from '../store.js';
import { EventKind, type MemoryEventLog } from './memory-event-log.js';
import { emptyCounts, type MessageRecord } from '../live-mailbox.js';
import { copyDeadLetter, MemoryMailbox, type DeadRecord } from './memory-mailbox.js';

/** Emptied mailboxes tolerated before they are swept out of the map. */
const MAX_IDLE = 1_024;

/** Collaborators of {@link MemoryMailboxes}. */
export interface MemoryMailboxesOptions {
  readonly clock: Clock;
  readonly events: MemoryEventLog;
  readonly listeners: AvailableListeners;
}

/**
 * The mailbox verbs of the memory store: every {@link MemoryMailbox} by name, the global seq and death
 * order, and the message events each change records. The store checks that it is open before calling.
 */
export class MemoryMailboxes {
  readonly #o: MemoryMailboxesOptions;
  readonly #boxes = new Map<string, MemoryMailbox>();
  #emptied = 0;
  #seq = 0;
  #deathOrder = 0;

  constructor(options: MemoryMailboxesOptions) {
    this.#o = options;
  }

  append(mailbox: string, envelope: Envelope): AppendResult {
    const box = this.#mailbox(mailbox);
    const existing = box.messages.get(envelope.id) ?? box.dead.get(envelope.id);
    if (existing !== undefined) return { seq: existing.seq, isDuplicate: true };
    const record = this.#addMessage(box, envelope);
    this.#o.events.sent(mailbox, record.envelope);
    this.#o.listeners.notify(mailbox);
    return { seq: record.seq, isDuplicate: false };
  }

  claim(mailbox: string, leaseMs: number): Delivery | null {
    const box = this.#boxes.get(mailbox);
    if (box === undefined) return null;
    const now = this.#o.clock.now();
    const record = box.claimNext(now, now + leaseMs);
    if (record === null) return null;
    this.#o.events.record(EventKind.claimed, mailbox, record.envelope.id, record.attempt, record.availableAt);
    return box.delivery(record);
  }

  ack(deliveryId: string): void {
    const { box, record, mailbox } = this.#leased(deliveryId);
    this.#removeAcked(mailbox, box, record);
  }

  /** Removes the message when it is claimable now; false, changing nothing, when it is not. */
  take(mailbox: string, envelopeId: string): boolean {
    const box = this.#boxes.get(mailbox);
    const record = box?.claimable(envelopeId, this.#o.clock.now());
    if (box === undefined || record === undefined) return false;
    this.#removeAcked(mailbox, box, record);
    return true;
  }

  nack(deliveryId: string, delayMs: number): void {
    const { box, record, mailbox, now } = this.#leased(deliveryId);
    box.release(record, now + Math.max(0, delayMs), now);
    this.#o.events.record(EventKind.nacked, mailbox, record.envelope.id, delayMs);
    this.#o.listeners.notify(mailbox);
  }

  extend(deliveryId: string, leaseMs: number): Delivery {
    const { box, record, mailbox, now } = this.#leased(deliveryId);
    box.extend(record, now + leaseMs, now);
    this.#o.events.record(EventKind.extended, mailbox, record.envelope.id, record.availableAt);
    return box.delivery(record);
  }

  deadLetter(deliveryId: string, reason: string): DeadLetter {
    const { box, record, mailbox, now } = this.#leased(deliveryId);
    box.remove(record);
    const letter: DeadLetter = { mailbox, envelope: box.envelopeOf(record), reason, deadAt: now };
    box.dead.set(record.envelope.id, { letter, seq: record.seq, order: ++this.#deathOrder });
    this.#o.events.record(EventKind.deadLettered, mailbox, record.envelope.id, 0, 0, reason);
    // The stored letter stays the store's: the caller gets its own copy.
    return copyDeadLetter(letter);
  }

  peek(mailbox: string, limit: number): StoredMessage[] {
    return this.#boxes.get(mailbox)?.peek(this.#o.clock.now(), limit) ?? [];
  }

  count(mailbox: string): MailboxCounts {
    return this.#boxes.get(mailbox)?.counts(this.#o.clock.now()) ?? emptyCounts(mailbox);
  }

  listMailboxes(): MailboxCounts[] {
    const now = this.#o.clock.now();
    return [...this.#boxes.values()]
      .filter((box) => !box.isEmpty)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((box) => box.counts(now));
  }

  nextDueAt(mailbox: string): number | null {
    return this.#boxes.get(mailbox)?.nextDueAt() ?? null;
  }

  listDeadLetters(mailbox: string | undefined, limit: number): DeadLetter[] {
    const boxes = mailbox === undefined ? [...this.#boxes.values()] : [this.#boxes.get(mailbox)];
    return boxes
      .flatMap((box) => (box === undefined ? [] : [...box.dead.values()]))
      .sort((a, b) => a.order - b.order)
      .slice(0, limit)
      .map((dead) => copyDeadLetter(dead.letter));
  }

  requeue(envelopeId: string): DeadLetter[] {
    const found = this.#deadLettersOf(envelopeId);
    for (const { mailbox, box, dead } of found) {
      box.dead.delete(envelopeId);
      this.#addMessage(box, dead.letter.envelope);
      this.#o.events.record(EventKind.requeued, mailbox, envelopeId);
    }
    for (const { mailbox } of found) this.#o.listeners.notify(mailbox);
    return found.map(({ dead }) => copyDeadLetter(dead.letter));
  }

  /** Removes every dead letter of `envelopeId`; the id is forgotten, the mailbox too once it holds nothing. */
  discard(envelopeId: string): DeadLetter[] {
    const found = this.#deadLettersOf(envelopeId);
    for (const { mailbox, box } of found) {
      box.dead.delete(envelopeId);
      this.#dropIfEmpty(box);
      this.#o.events.record(EventKind.discarded, mailbox, envelopeId);
    }
    return found.map(({ dead }) => copyDeadLetter(dead.letter));
  }

  /** The dead letters of `envelopeId` in every mailbox, in death order; NOT_FOUND when there is none. */
  #deadLettersOf(envelopeId: string): { mailbox: string; box: MemoryMailbox; dead: DeadRecord }[] {
    const found = [...this.#boxes]
      .flatMap(([mailbox, box]) => {
        const dead = box.dead.get(envelopeId);
        return dead === undefined ? [] : [{ mailbox, box, dead }];
      })
      .sort((a, b) => a.dead.order - b.dead.order);
    if (found.length === 0)
      throw new MusubiError('NOT_FOUND', `no dead letter with envelope id ${envelopeId}`);
    return found;
  }

  #mailbox(name: string): MemoryMailbox {
    let box = this.#boxes.get(name);
    if (box === undefined) {
      box = new MemoryMailbox(name);
      this.#boxes.set(name, box);
    }
    return box;
  }

  /**
   * An emptied mailbox stays (it is usually filled again soon: a request, then its reply), hidden from
   * the listing; once every {@link MAX_IDLE} emptyings the empty ones are swept out if there are many.
   */
  #dropIfEmpty(box: MemoryMailbox): void {
    if (!box.isEmpty || ++this.#emptied < MAX_IDLE) return;
    this.#emptied = 0;
    if (this.#boxes.size <= MAX_IDLE) return;
    for (const [name, other] of this.#boxes) if (other.isEmpty) this.#boxes.delete(name);
  }

  /** Ack and take: the message and its id are gone; the mailbox too once it holds nothing. */
  #removeAcked(mailbox: string, box: MemoryMailbox, record: MessageRecord): void {
    box.remove(record);
    this.#dropIfEmpty(box);
    this.#o.events.record(EventKind.acked, mailbox, record.envelope.id);
  }

  #addMessage(box: MemoryMailbox, envelope: Envelope): MessageRecord {
    const now = this.#o.clock.now();
    // One copy in, frozen: peeks of a message never handed out give it out as it is (nobody can change
    // it); deliveries and dead letters give out copies with their attempt count.
    const { id, from, to, type, priority, thread, headers, body, createdAt } = envelope;
    const stored: Envelope = {
      id,
      from,
      to,
      type,
      priority,
      headers: Object.isFrozen(headers) ? headers : Object.freeze({ ...headers }),
      body,
      createdAt,
      attempt: 0,
    };
    if (thread !== undefined) stored.thread = thread;
    const record: MessageRecord = {
      seq: ++this.#seq,
      rank: priorityRank(priority),
      envelope: Object.freeze(stored),
      attempt: 0,
      isLeased: false,
      availableAt: now,
      isWaiting: false,
      heapIndex: -1,
    };
    box.add(record, now);
    return record;
  }

  #leased(deliveryId: string): { box: MemoryMailbox; record: MessageRecord; mailbox: string; now: number } {
    const ref = parseDeliveryId(deliveryId);
    const box = this.#boxes.get(ref.mailbox);
    if (box === undefined) throw new MusubiError('NOT_FOUND', `no such delivery: ${deliveryId}`);
    const now = this.#o.clock.now();
    return { box, record: box.leased(ref, now), mailbox: ref.mailbox, now };
  }
}
