import type { Clock } from '../../core/clock.js';
import type { Envelope } from '../../core/envelope.js';
import { MusubiError } from '../../core/errors.js';
import type { BusEvent, StoredEvent } from '../../core/events.js';
import { promiseTry } from '../../core/promise-try.js';
import { AvailableListeners } from '../available-listeners.js';
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
import { MemoryMailboxes } from './memory-mailboxes.js';

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
  readonly writesInOrder = true;
  readonly #listeners = new AvailableListeners();
  readonly #kv = new MemoryKv({ retention: RETENTION });
  readonly #events: MemoryEventLog;
  readonly #mailboxes: MemoryMailboxes;
  #closing: Promise<void> | undefined;

  constructor(options: MemoryStoreOptions) {
    this.#events = new MemoryEventLog({ clock: options.clock, retention: RETENTION });
    this.#mailboxes = new MemoryMailboxes({
      clock: options.clock,
      events: this.#events,
      listeners: this.#listeners,
    });
  }

  // The verbs on a message's path (append, peek, take, count, claim, ack) answer with a settled promise
  // (promiseTry): an async frame each would cost more than the work itself.
  append(mailbox: string, envelope: Envelope): Promise<AppendResult> {
    return promiseTry(() => {
      this.#assertOpen();
      return this.#mailboxes.append(mailbox, envelope);
    });
  }

  claim(mailbox: string, options: { readonly leaseMs: number }): Promise<Delivery | null> {
    return promiseTry(() => {
      this.#assertOpen();
      return this.#mailboxes.claim(mailbox, options.leaseMs);
    });
  }

  ack(deliveryId: string): Promise<void> {
    return promiseTry(() => {
      this.#assertOpen();
      this.#mailboxes.ack(deliveryId);
    });
  }

  take(mailbox: string, envelopeId: string): Promise<boolean> {
    return promiseTry(() => {
      this.#assertOpen();
      return this.#mailboxes.take(mailbox, envelopeId);
    });
  }

  async nack(deliveryId: string, options: { readonly delayMs: number }): Promise<void> {
    this.#assertOpen();
    this.#mailboxes.nack(deliveryId, options.delayMs);
  }

  async extend(deliveryId: string, options: { readonly leaseMs: number }): Promise<Delivery> {
    this.#assertOpen();
    return this.#mailboxes.extend(deliveryId, options.leaseMs);
  }

  async deadLetter(deliveryId: string, options: { readonly reason: string }): Promise<DeadLetter> {
    this.#assertOpen();
    return this.#mailboxes.deadLetter(deliveryId, options.reason);
  }

  peek(mailbox: string, options?: { readonly limit?: number }): Promise<StoredMessage[]> {
    return promiseTry(() => {
      this.#assertOpen();
      return this.#mailboxes.peek(mailbox, options?.limit ?? Infinity);
    });
  }

  count(mailbox: string): Promise<MailboxCounts> {
    return promiseTry(() => {
      this.#assertOpen();
      return this.#mailboxes.count(mailbox);
    });
  }

  async listMailboxes(): Promise<MailboxCounts[]> {
    this.#assertOpen();
    return this.#mailboxes.listMailboxes();
  }

  async nextDueAt(mailbox: string): Promise<number | null> {
    this.#assertOpen();
    return this.#mailboxes.nextDueAt(mailbox);
  }

  async listDeadLetters(options?: {
    readonly mailbox?: string;
    readonly limit?: number;
  }): Promise<DeadLetter[]> {
    this.#assertOpen();
    return this.#mailboxes.listDeadLetters(options?.mailbox, options?.limit ?? Infinity);
  }

  async requeueDeadLetter(envelopeId: string): Promise<DeadLetter[]> {
    this.#assertOpen();
    return this.#mailboxes.requeue(envelopeId);
  }

  async discardDeadLetter(envelopeId: string): Promise<DeadLetter[]> {
    this.#assertOpen();
    return this.#mailboxes.discard(envelopeId);
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
}
