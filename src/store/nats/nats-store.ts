import { jetstream } from '@nats-io/jetstream';
import type { Clock, Timer } from '../../core/clock.js';
import type { Envelope } from '../../core/envelope.js';
import { MusubiError } from '../../core/errors.js';
import type { BusEvent, StoredEvent } from '../../core/events.js';
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
import { trimJournal } from './journal-trimmer.js';
import type { JournalWriter } from './journal-writer.js';
import { NatsEventLog } from './nats-event-log.js';
import type { NatsLocation } from './nats-location.js';
import { NatsMailboxes } from './nats-mailboxes.js';
import { openNatsStoreParts, type NatsStoreParts } from './nats-store-parts.js';

/** How often a running store trims the journal down to its retention. */
const TRIM_INTERVAL_MS = 10 * 60_000;

/** Options for {@link NatsStore.open}. */
export interface NatsStoreOptions {
  readonly location: NatsLocation;
  readonly clock: Clock;
  readonly signal?: AbortSignal;
  /**
   * Decide leases on `clock` as it is, without measuring its offset from the NATS server's time (for
   * a fake clock that tests move by hand). Default false: leases follow the server's time.
   */
  readonly isClockTrusted?: boolean;
}

/**
 * The Store port on NATS JetStream, for teams whose hubs run on several machines. Every message
 * change is one record in a journal stream (also the event log); each store keeps a view of the
 * journal to choose what to claim and writes with compare-and-set, so any number of hubs can share
 * one prefix. Leases and delays follow the NATS server's time (the injected clock corrected by its
 * measured offset; a hub more than 10 s off takes no leases, see ServerClock). See
 * src/store/NATS-MAPPING.md. Errors as the port, plus STORE_UNAVAILABLE when NATS cannot be reached.
 */
export class NatsStore implements Store {
  readonly kind = 'nats';
  readonly writesInOrder = false;
  /** How far this hub's clock is ahead of the NATS server's (negative: behind), as last measured. */
  get clockOffsetMs(): number {
    return this.#p.clock.offsetMs;
  }

  /** Replicas of the journal stream and KV bucket (the URL's `replicas`, else 3 on a cluster of 3+, else 1). */
  readonly replicas: number;
  readonly #p: NatsStoreParts;
  readonly #clock: Clock;
  readonly #retain: number;
  readonly #writer: JournalWriter;
  readonly #mailboxes: NatsMailboxes;
  readonly #events: NatsEventLog;
  #trimTimer: Timer | undefined;
  #closing: Promise<void> | undefined;

  private constructor(parts: NatsStoreParts, options: NatsStoreOptions) {
    this.#p = parts;
    this.#clock = parts.clock;
    this.#retain = options.location.retain;
    this.replicas = parts.replicas;
    const { names, view, listeners, writer } = parts;
    this.#writer = writer;
    const clock = parts.clock;
    this.#mailboxes = new NatsMailboxes({ names, view, writer, clock, listeners });
    const js = jetstream(parts.nc);
    this.#events = new NatsEventLog({ js, names, writer, clock, closeSignal: parts.closer.signal });
    this.#scheduleTrim();
  }

  /**
   * Connects (retrying with backoff, see connectNats), creates the journal stream and KV bucket when
   * missing, and loads the journal view. Rejects with STORE_UNAVAILABLE when NATS or JetStream is
   * unreachable. The caller closes the store.
   */
  static async open(options: NatsStoreOptions): Promise<NatsStore> {
    return new NatsStore(await openNatsStoreParts(options), options);
  }

  append(mailbox: string, envelope: Envelope): Promise<AppendResult> {
    return this.#run(() => this.#mailboxes.append(mailbox, envelope));
  }

  claim(mailbox: string, options: { readonly leaseMs: number }): Promise<Delivery | null> {
    return this.#run(() => this.#mailboxes.claim(mailbox, options.leaseMs));
  }

  ack(deliveryId: string): Promise<void> {
    return this.#run(() => this.#mailboxes.ack(deliveryId));
  }

  take(mailbox: string, envelopeId: string): Promise<boolean> {
    return this.#run(() => this.#mailboxes.take(mailbox, envelopeId));
  }

  nack(deliveryId: string, options: { readonly delayMs: number }): Promise<void> {
    return this.#run(() => this.#mailboxes.nack(deliveryId, options.delayMs));
  }

  extend(deliveryId: string, options: { readonly leaseMs: number }): Promise<Delivery> {
    return this.#run(() => this.#mailboxes.extend(deliveryId, options.leaseMs));
  }

  deadLetter(deliveryId: string, options: { readonly reason: string }): Promise<DeadLetter> {
    return this.#run(() => this.#mailboxes.deadLetter(deliveryId, options.reason));
  }

  /** Waits until the view holds every record stored before the call, then reads it. */
  peek(mailbox: string, options?: { readonly limit?: number }): Promise<StoredMessage[]> {
    return this.#run(async () => {
      await this.#writer.sync();
      return this.#p.view.mailbox(mailbox)?.peek(this.#clock.now(), options?.limit ?? Infinity) ?? [];
    });
  }

  count(mailbox: string): Promise<MailboxCounts> {
    return this.#run(async () => {
      await this.#writer.sync();
      const counts = this.#p.view.mailbox(mailbox)?.counts(this.#clock.now());
      return counts ?? { mailbox, ready: 0, delayed: 0, leased: 0, total: 0, deadLetters: 0 };
    });
  }

  listMailboxes(): Promise<MailboxCounts[]> {
    return this.#run(async () => {
      await this.#writer.sync();
      const now = this.#clock.now();
      const { view } = this.#p;
      return view.mailboxNames().flatMap((name) => view.mailbox(name)?.counts(now) ?? []);
    });
  }

  /** From the view without a round trip: the bus calls it on every idle receive. */
  nextDueAt(mailbox: string): Promise<number | null> {
    return this.#run(async () => this.#p.view.mailbox(mailbox)?.nextDueAt() ?? null);
  }

  listDeadLetters(options?: { readonly mailbox?: string; readonly limit?: number }): Promise<DeadLetter[]> {
    return this.#run(async () => {
      await this.#writer.sync();
      const { view } = this.#p;
      const names = options?.mailbox === undefined ? view.mailboxNames() : [options.mailbox];
      return names
        .flatMap((name) => view.mailbox(name)?.deadLetters() ?? [])
        .sort((a, b) => a.order - b.order)
        .slice(0, options?.limit ?? Infinity)
        .map((dead) => dead.letter);
    });
  }

  requeueDeadLetter(envelopeId: string): Promise<DeadLetter[]> {
    return this.#run(() => this.#mailboxes.requeue(envelopeId));
  }

  discardDeadLetter(envelopeId: string): Promise<DeadLetter[]> {
    return this.#run(() => this.#mailboxes.discard(envelopeId));
  }

  onAvailable(listener: (mailbox: string | null) => void): () => void {
    this.#assertOpen();
    return this.#p.listeners.add(listener);
  }

  kvGet(key: string): Promise<KvEntry | null> {
    return this.#run(() => this.#p.kv.get(key));
  }

  kvSet(key: string, value: unknown, options?: KvWriteOptions): Promise<KvEntry> {
    return this.#run(() => this.#p.kv.set(key, value, options));
  }

  kvDelete(key: string, options?: KvWriteOptions): Promise<void> {
    return this.#run(() => this.#p.kv.delete(key, options));
  }

  kvList(prefix: string): Promise<KvEntry[]> {
    return this.#run(() => this.#p.kv.list(prefix));
  }

  kvWatch(
    prefix: string,
    options: { readonly signal: AbortSignal; readonly afterRevision?: number },
  ): AsyncIterable<KvChange> {
    // Taken now, so changes made after this call are included even before iteration starts.
    const after = options.afterRevision ?? this.#p.kv.latestRevision;
    const { kv, closer } = this.#p;
    const isClosed = (): boolean => this.#closing !== undefined;
    return (async function* watch(): AsyncGenerator<KvChange, void, undefined> {
      if (isClosed()) throw new MusubiError('STORE_CLOSED', 'NATS store is closed');
      yield* kv.watch(prefix, after, AbortSignal.any([options.signal, closer.signal]));
    })();
  }

  appendEvent(event: BusEvent): Promise<StoredEvent> {
    return this.#run(() => this.#events.append(event));
  }

  readEvents(options?: { readonly after?: number; readonly limit?: number }): Promise<StoredEvent[]> {
    return this.#run(() => this.#events.read(options?.after ?? 0, options?.limit ?? Infinity));
  }

  followEvents(options: {
    readonly after?: number;
    readonly signal: AbortSignal;
  }): AsyncIterable<StoredEvent> {
    return this.#events.follow(options.after ?? 0, options.signal);
  }

  lastEventCursor(): Promise<number> {
    return this.#run(() => this.#events.lastCursor());
  }

  /**
   * Runs one retention pass now (a running store also runs one every 10 minutes): drops journal
   * records beyond the newest `retain`, keeping the newest record of every live or dead message.
   * Resolves the number of records removed.
   */
  trim(): Promise<number> {
    return this.#run(() =>
      trimJournal({ jsm: this.#p.jsm, names: this.#p.names, view: this.#p.view, retain: this.#retain }),
    );
  }

  /** Idempotent: repeat calls share one promise. Running watches and follows end; the connection closes. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      const { closer, follower, kv, listeners, nc, clock } = this.#p;
      this.#trimTimer?.cancel();
      clock.close();
      closer.abort(new MusubiError('STORE_CLOSED', 'NATS store is closed'));
      listeners.clear();
      follower.close();
      kv.close();
      await nc.close();
    })();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #assertOpen(): void {
    if (this.#closing !== undefined) throw new MusubiError('STORE_CLOSED', 'NATS store is closed');
  }

  async #run<T>(operation: () => Promise<T>): Promise<T> {
    this.#assertOpen();
    return operation();
  }

  #scheduleTrim(): void {
    if (this.#closing !== undefined) return;
    this.#trimTimer = this.#clock.setTimer(() => {
      if (this.#closing !== undefined) return;
      this.trim()
        .catch(() => 0) // the next pass retries; trimming never affects live messages
        .finally(() => this.#scheduleTrim());
    }, TRIM_INTERVAL_MS);
  }
}
