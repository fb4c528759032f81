import type { Clock } from '../../core/clock.js';
import { priorityRank, type Envelope } from '../../core/envelope.js';
import { MusubiError } from '../../core/errors.js';
import type { BusEvent, StoredEvent } from '../../core/events.js';
import { AvailableListeners } from '../available-listeners.js';
import { parseDeliveryId } from '../delivery-id.js';
import type {
  AppendResult,
  DeadLetter,
  Delivery,
  KvChange,
  KvEntry,
  KvWriteOptions,
  MailboxCounts,
  Store,
  StoredMessage,
} from '../store.js';
import { MemoryKv } from './memory-kv.js';
import { MemoryEventLog } from './memory-event-log.js';
import { copyDeadLetter, emptyCounts, MemoryMailbox, type MessageRecord } from './memory-mailbox.js';

/** Newest events (and KV changes) kept for readEvents/followEvents and kvWatch replays. */
const RETENTION = 100_000;

/** Options for {@link MemoryStore}. */
export interface MemoryStoreOptions {
  readonly clock: Clock;
}

/**
 * The Store port in process memory, for tests and throwaway runs: nothing survives the process. Claims
 * are O(log n) per mailbox; the event log and KV change log keep the newest 100,000 entries. Callers
 * never share a mutable object with the store: an envelope is copied once on the way in (and frozen)
 * and once per delivery, peek or dead letter on the way out; events are frozen once and handed out as is.
 */
export class MemoryStore implements Store {
  readonly kind = 'memory';
  readonly #clock: Clock;
  readonly #mailboxes = new Map<string, MemoryMailbox>();
  readonly #listeners = new AvailableListeners();
  readonly #kv = new MemoryKv({ retention: RETENTION });
  readonly #events: MemoryEventLog;
  #seq = 0;
  #deathOrder = 0;
  #closing: Promise<void> | undefined;

  constructor(options: MemoryStoreOptions) {
    this.#clock = options.clock;
    this.#events = new MemoryEventLog({ clock: options.clock, retention: RETENTION });
  }

  async append(mailbox: string, envelope: Envelope): Promise<AppendResult> {
    this.#assertOpen();
    const box = this.#mailbox(mailbox);
    const existing = box.messages.get(envelope.id) ?? box.dead.get(envelope.id);
    if (existing !== undefined) return { seq: existing.seq, isDuplicate: true };
    const seq = this.#addMessage(box, envelope);
    this.#events.record({
      type: 'message.sent',
      mailbox,
      messageId: envelope.id,
      from: envelope.from,
      messageType: envelope.type,
      priority: envelope.priority,
    });
    this.#listeners.notify(mailbox);
    return { seq, isDuplicate: false };
  }

  async claim(mailbox: string, options: { readonly leaseMs: number }): Promise<Delivery | null> {
    this.#assertOpen();
    const box = this.#mailboxes.get(mailbox);
    if (box === undefined) return null;
    const now = this.#clock.now();
    const record = box.claimNext(now, now + options.leaseMs);
    if (record === null) return null;
    this.#events.record({
      type: 'message.claimed',
      mailbox,
      messageId: record.envelope.id,
      attempt: record.attempt,
      leaseUntil: record.availableAt,
    });
    return box.delivery(record);
  }

  async ack(deliveryId: string): Promise<void> {
    const { box, record, mailbox } = this.#leased(deliveryId);
    box.remove(record);
    this.#dropIfEmpty(mailbox, box);
    this.#events.record({ type: 'message.acked', mailbox, messageId: record.envelope.id });
  }

  async nack(deliveryId: string, options: { readonly delayMs: number }): Promise<void> {
    const { box, record, mailbox, now } = this.#leased(deliveryId);
    box.release(record, now + Math.max(0, options.delayMs), now);
    this.#events.record({
      type: 'message.nacked',
      mailbox,
      messageId: record.envelope.id,
      delayMs: options.delayMs,
    });
    this.#listeners.notify(mailbox);
  }

  async extend(deliveryId: string, options: { readonly leaseMs: number }): Promise<Delivery> {
    const { box, record, mailbox, now } = this.#leased(deliveryId);
    box.extend(record, now + options.leaseMs, now);
    this.#events.record({
      type: 'message.lease_extended',
      mailbox,
      messageId: record.envelope.id,
      leaseUntil: record.availableAt,
    });
    return box.delivery(record);
  }

  async deadLetter(deliveryId: string, options: { readonly reason: string }): Promise<DeadLetter> {
    const { box, record, mailbox, now } = this.#leased(deliveryId);
    box.remove(record);
    const letter: DeadLetter = {
      mailbox,
      envelope: box.envelopeOf(record),
      reason: options.reason,
      deadAt: now,
    };
    box.dead.set(record.envelope.id, { letter, seq: record.seq, order: ++this.#deathOrder });
    this.#events.record({
      type: 'message.dead_lettered',
      mailbox,
      messageId: record.envelope.id,
      reason: options.reason,
    });
    // The stored letter stays the store's: the caller gets its own copy.
    return copyDeadLetter(letter);
  }

  async peek(mailbox: string, options?: { readonly limit?: number }): Promise<StoredMessage[]> {
    this.#assertOpen();
    return this.#mailboxes.get(mailbox)?.peek(this.#clock.now(), options?.limit ?? Infinity) ?? [];
  }

  async count(mailbox: string): Promise<MailboxCounts> {
    this.#assertOpen();
    return this.#mailboxes.get(mailbox)?.counts(this.#clock.now()) ?? emptyCounts(mailbox);
  }

  async listMailboxes(): Promise<MailboxCounts[]> {
    this.#assertOpen();
    const now = this.#clock.now();
    return [...this.#mailboxes.values()]
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((box) => box.counts(now));
  }

  async nextDueAt(mailbox: string): Promise<number | null> {
    this.#assertOpen();
    return this.#mailboxes.get(mailbox)?.nextDueAt() ?? null;
  }

  async listDeadLetters(options?: {
    readonly mailbox?: string;
    readonly limit?: number;
  }): Promise<DeadLetter[]> {
    this.#assertOpen();
    const boxes =
      options?.mailbox === undefined ? [...this.#mailboxes.values()] : [this.#mailboxes.get(options.mailbox)];
    return boxes
      .flatMap((box) => (box === undefined ? [] : [...box.dead.values()]))
      .sort((a, b) => a.order - b.order)
      .slice(0, options?.limit ?? Infinity)
      .map((dead) => copyDeadLetter(dead.letter));
  }

  async requeueDeadLetter(envelopeId: string): Promise<DeadLetter[]> {
    this.#assertOpen();
    const found = [...this.#mailboxes]
      .flatMap(([mailbox, box]) => {
        const dead = box.dead.get(envelopeId);
        return dead === undefined ? [] : [{ mailbox, box, dead }];
      })
      .sort((a, b) => a.dead.order - b.dead.order);
    if (found.length === 0)
      throw new MusubiError('NOT_FOUND', `no dead letter with envelope id ${envelopeId}`);
    for (const { mailbox, box } of found) {
      const dead = box.dead.get(envelopeId);
      if (dead === undefined) continue;
      box.dead.delete(envelopeId);
      this.#addMessage(box, dead.letter.envelope);
      this.#events.record({ type: 'message.requeued', mailbox, messageId: envelopeId });
    }
    for (const { mailbox } of found) this.#listeners.notify(mailbox);
    return found.map(({ dead }) => copyDeadLetter(dead.letter));
  }

  onAvailable(listener: (mailbox: string | null) => void): () => void {
    this.#assertOpen();
    return this.#listeners.add(listener);
  }

  async kvGet(key: string): Promise<KvEntry | null> {
    this.#assertOpen();
    return this.#kv.get(key);
  }

  async kvSet(key: string, value: unknown, options?: KvWriteOptions): Promise<KvEntry> {
    this.#assertOpen();
    return this.#kv.set(key, value, options);
  }

  async kvDelete(key: string, options?: KvWriteOptions): Promise<void> {
    this.#assertOpen();
    this.#kv.delete(key, options);
  }

  async kvList(prefix: string): Promise<KvEntry[]> {
    this.#assertOpen();
    return this.#kv.list(prefix);
  }

  kvWatch(
    prefix: string,
    options: { readonly signal: AbortSignal; readonly afterRevision?: number },
  ): AsyncIterable<KvChange> {
    const watchOptions = { signal: options.signal, isClosed: () => this.#closing !== undefined };
    return this.#kv.watch(
      prefix,
      options.afterRevision === undefined
        ? watchOptions
        : { ...watchOptions, afterRevision: options.afterRevision },
    );
  }

  async appendEvent(event: BusEvent): Promise<StoredEvent> {
    this.#assertOpen();
    return this.#events.append(event);
  }

  async readEvents(options?: { readonly after?: number; readonly limit?: number }): Promise<StoredEvent[]> {
    this.#assertOpen();
    return this.#events.read(options?.after ?? 0, options?.limit ?? Infinity);
  }

  followEvents(options: {
    readonly after?: number;
    readonly signal: AbortSignal;
  }): AsyncIterable<StoredEvent> {
    return this.#events.follow({
      after: options.after ?? 0,
      signal: options.signal,
      isClosed: () => this.#closing !== undefined,
    });
  }

  async lastEventCursor(): Promise<number> {
    this.#assertOpen();
    return this.#events.lastCursor();
  }

  /** Idempotent: repeat calls share one promise. Running watches and follows end. */
  close(): Promise<void> {
    this.#closing ??= Promise.resolve().then(() => {
      this.#listeners.clear();
      this.#kv.wake();
      this.#events.wake();
    });
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #assertOpen(): void {
    if (this.#closing !== undefined) throw new MusubiError('STORE_CLOSED', 'memory store is closed');
  }

  #mailbox(name: string): MemoryMailbox {
    let box = this.#mailboxes.get(name);
    if (box === undefined) {
      box = new MemoryMailbox(name);
      this.#mailboxes.set(name, box);
    }
    return box;
  }

  #dropIfEmpty(name: string, box: MemoryMailbox): void {
    if (box.isEmpty) this.#mailboxes.delete(name);
  }

  #addMessage(box: MemoryMailbox, envelope: Envelope): number {
    const now = this.#clock.now();
    // One copy in, frozen: deliveries and peeks hand out copies of it, so no caller can reach it.
    const stored: Envelope = Object.freeze({
      ...envelope,
      headers: Object.freeze({ ...envelope.headers }),
      attempt: 0,
    });
    const record: MessageRecord = {
      seq: ++this.#seq,
      rank: priorityRank(envelope.priority),
      envelope: stored,
      attempt: 0,
      isLeased: false,
      availableAt: now,
      version: 0,
    };
    box.add(record, now);
    return record.seq;
  }

  #leased(deliveryId: string): { box: MemoryMailbox; record: MessageRecord; mailbox: string; now: number } {
    this.#assertOpen();
    const ref = parseDeliveryId(deliveryId);
    const box = this.#mailboxes.get(ref.mailbox);
    if (box === undefined) throw new MusubiError('NOT_FOUND', `no such delivery: ${deliveryId}`);
    const now = this.#clock.now();
    return { box, record: box.leased(ref, now), mailbox: ref.mailbox, now };
  }
}
