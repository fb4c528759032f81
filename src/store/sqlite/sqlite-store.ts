import type Database from 'better-sqlite3';
import type { Clock } from '../../core/clock.js';
import type { Envelope } from '../../core/envelope.js';
import { MusubiError } from '../../core/errors.js';
import type { BusEvent, StoredEvent } from '../../core/events.js';
import type { ChangeSignal } from '../change-signal.js';
import { parseDeliveryId } from '../delivery-id.js';
import { followLog, type LogBatch } from '../follow-log.js';
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
import { openDatabase, positiveOption } from './sqlite-connection.js';
import { createImmediateRunner, type ImmediateRunner } from './immediate-transaction.js';
import { SqliteChangeFeed } from './sqlite-change-feed.js';
import { storeFailure } from './sqlite-errors.js';
import { SqliteEventLog } from './sqlite-event-log.js';
import { SqliteKv } from './sqlite-kv.js';
import { SqliteMailboxQueries } from './sqlite-mailbox-queries.js';
import { SqliteMessages } from './sqlite-messages.js';
import { migrate } from './sqlite-schema.js';

const DEFAULT_POLL_INTERVAL_MS = 25;
const DEFAULT_EVENT_RETENTION = 100_000;

/** Options for {@link SqliteStore.open}. */
export interface SqliteStoreOptions {
  /** The database file; its folder must exist. Other processes may open the same file. */
  readonly path: string;
  readonly clock: Clock;
  /**
   * fsync policy. `normal` (default): in WAL mode commits are not fsynced, only checkpoints are, so
   * every committed write survives a crash or kill -9 of the process, but the last transactions may be
   * lost on power loss or an OS crash (the file stays consistent). `full`: every commit fsyncs the WAL,
   * so committed writes survive power loss too, at a large cost in write throughput.
   */
  readonly synchronous?: 'normal' | 'full';
  /** How often to look for commits by other connections while anyone listens or follows (default 25). */
  readonly pollIntervalMs?: number;
  /** How many newest events (and KV changes) to keep (default 100,000). */
  readonly eventRetention?: number;
}

interface Parts {
  readonly db: Database.Database;
  readonly clock: Clock;
  readonly pollIntervalMs: number;
  readonly eventRetention: number;
}

/**
 * The Store port on one SQLite file (better-sqlite3, WAL mode), the embedded default. Each operation
 * is one transaction (IMMEDIATE when it writes) of a few prepared, indexed statements; several
 * processes may share the file. Commits by other connections reach onAvailable listeners (as `null`),
 * kv watches and event follows through a `PRAGMA data_version` poll that runs only while one of them
 * exists. Rows read back are validated; a bad one is reported as STORE_CORRUPT, never used.
 */
export class SqliteStore implements Store {
  readonly kind = 'sqlite';
  readonly #db: Database.Database;
  readonly #clock: Clock;
  readonly #immediate: ImmediateRunner;
  readonly #messages: SqliteMessages;
  readonly #queries: SqliteMailboxQueries;
  readonly #kv: SqliteKv;
  readonly #events: SqliteEventLog;
  readonly #feed: SqliteChangeFeed;
  #isClosed = false;
  #closing: Promise<void> | undefined;

  /**
   * Opens (creating if needed) and migrates the file. Throws STORE_UNAVAILABLE when it cannot be opened
   * (missing folder, permissions, a schema from a newer musubi), STORE_CORRUPT when it is not a database.
   */
  static open(options: SqliteStoreOptions): SqliteStore {
    const pollIntervalMs = positiveOption(
      'pollIntervalMs',
      options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
    );
    const eventRetention = positiveOption(
      'eventRetention',
      options.eventRetention ?? DEFAULT_EVENT_RETENTION,
    );
    const db = openDatabase(options.path, options.synchronous ?? 'normal');
    try {
      migrate(db, options.path);
      return new SqliteStore({ db, clock: options.clock, pollIntervalMs, eventRetention });
    } catch (err) {
      db.close();
      throw storeFailure(err, `open ${options.path}`);
    }
  }

  private constructor(parts: Parts) {
    const { db } = parts;
    this.#db = db;
    this.#clock = parts.clock;
    this.#immediate = createImmediateRunner(db);
    this.#events = new SqliteEventLog(db, { retention: parts.eventRetention });
    this.#kv = new SqliteKv(db, { retention: parts.eventRetention });
    this.#messages = new SqliteMessages(db, { events: this.#events, immediate: this.#immediate });
    this.#queries = new SqliteMailboxQueries(db);
    this.#feed = new SqliteChangeFeed(db, { pollIntervalMs: parts.pollIntervalMs });
  }

  async append(mailbox: string, envelope: Envelope): Promise<AppendResult> {
    const result = this.#run('append', () => this.#messages.append(mailbox, envelope, this.#clock.now()));
    if (!result.isDuplicate) this.#feed.messagesAvailable(mailbox);
    return result;
  }

  async claim(mailbox: string, options: { readonly leaseMs: number }): Promise<Delivery | null> {
    const delivery = this.#run('claim', () =>
      this.#messages.claim(mailbox, options.leaseMs, this.#clock.now()),
    );
    if (delivery !== null) this.#feed.events.notify();
    return delivery;
  }

  async ack(deliveryId: string): Promise<void> {
    this.#run('ack', () => this.#messages.ack(parseDeliveryId(deliveryId), this.#clock.now()));
    this.#feed.events.notify();
  }

  async nack(deliveryId: string, options: { readonly delayMs: number }): Promise<void> {
    const ref = this.#run('nack', () => {
      const parsed = parseDeliveryId(deliveryId);
      this.#messages.nack(parsed, options.delayMs, this.#clock.now());
      return parsed;
    });
    this.#feed.messagesAvailable(ref.mailbox);
  }

  async extend(deliveryId: string, options: { readonly leaseMs: number }): Promise<Delivery> {
    const delivery = this.#run('extend', () =>
      this.#messages.extend(parseDeliveryId(deliveryId), options.leaseMs, this.#clock.now()),
    );
    this.#feed.events.notify();
    return delivery;
  }

  async deadLetter(deliveryId: string, options: { readonly reason: string }): Promise<DeadLetter> {
    const letter = this.#run('deadLetter', () =>
      this.#messages.deadLetter(parseDeliveryId(deliveryId), options.reason, this.#clock.now()),
    );
    this.#feed.events.notify();
    return letter;
  }

  async peek(mailbox: string, options?: { readonly limit?: number }): Promise<StoredMessage[]> {
    return this.#run('peek', () => this.#queries.peek(mailbox, options?.limit ?? -1, this.#clock.now()));
  }

  async count(mailbox: string): Promise<MailboxCounts> {
    return this.#run('count', () => this.#queries.count(mailbox, this.#clock.now()));
  }

  async listMailboxes(): Promise<MailboxCounts[]> {
    return this.#run('listMailboxes', () => this.#queries.listMailboxes(this.#clock.now()));
  }

  async nextDueAt(mailbox: string): Promise<number | null> {
    return this.#run('nextDueAt', () => this.#queries.nextDueAt(mailbox));
  }

  async listDeadLetters(options?: {
    readonly mailbox?: string;
    readonly limit?: number;
  }): Promise<DeadLetter[]> {
    return this.#run('listDeadLetters', () =>
      this.#queries.listDeadLetters(options?.mailbox, options?.limit ?? -1),
    );
  }

  async requeueDeadLetter(envelopeId: string): Promise<DeadLetter[]> {
    const letters = this.#run('requeueDeadLetter', () =>
      this.#messages.requeue(envelopeId, this.#clock.now()),
    );
    for (const mailbox of new Set(letters.map((l) => l.mailbox))) this.#feed.messagesAvailable(mailbox);
    return letters;
  }

  onAvailable(listener: (mailbox: string | null) => void): () => void {
    this.#assertOpen();
    return this.#feed.subscribe(listener);
  }

  async kvGet(key: string): Promise<KvEntry | null> {
    return this.#run('kvGet', () => this.#kv.get(key));
  }

  async kvSet(key: string, value: unknown, options?: KvWriteOptions): Promise<KvEntry> {
    const entry = this.#run('kvSet', () => this.#immediate(() => this.#kv.set(key, value, options)));
    this.#feed.kv.notify();
    return entry;
  }

  async kvDelete(key: string, options?: KvWriteOptions): Promise<void> {
    const isDeleted = this.#run('kvDelete', () => this.#immediate(() => this.#kv.delete(key, options)));
    if (isDeleted) this.#feed.kv.notify();
  }

  async kvList(prefix: string): Promise<KvEntry[]> {
    return this.#run('kvList', () => this.#kv.list(prefix));
  }

  kvWatch(
    prefix: string,
    options: { readonly signal: AbortSignal; readonly afterRevision?: number },
  ): AsyncIterable<KvChange> {
    // "Changes made after the call": the starting revision is read now, not on the first next().
    const after =
      options.afterRevision ?? (this.#isClosed ? 0 : this.#run('kvWatch', () => this.#kv.revision()));
    return this.#follow(
      after,
      options.signal,
      (cursor) => this.#kv.changesAfter(prefix, cursor),
      this.#feed.kv,
    );
  }

  async appendEvent(event: BusEvent): Promise<StoredEvent> {
    const stored = this.#run('appendEvent', () =>
      this.#immediate(() => this.#events.insert(event, this.#clock.now())),
    );
    this.#feed.events.notify();
    return stored;
  }

  async readEvents(options?: { readonly after?: number; readonly limit?: number }): Promise<StoredEvent[]> {
    return this.#run('readEvents', () => this.#events.read(options?.after ?? 0, options?.limit ?? -1));
  }

  followEvents(options: {
    readonly after?: number;
    readonly signal: AbortSignal;
  }): AsyncIterable<StoredEvent> {
    return this.#follow(
      options.after ?? 0,
      options.signal,
      (cursor) => this.#events.readBatch(cursor),
      this.#feed.events,
    );
  }

  async lastEventCursor(): Promise<number> {
    return this.#run('lastEventCursor', () => this.#events.lastCursor());
  }

  /**
   * Stops polling, ends running watches and follows, and closes the connection. Idempotent: repeat
   * calls share one promise. Other processes using the file are not affected.
   */
  close(): Promise<void> {
    if (this.#closing === undefined) {
      this.#isClosed = true;
      this.#feed.close();
      try {
        this.#db.close();
        this.#closing = Promise.resolve();
      } catch (err) {
        this.#closing = Promise.reject(storeFailure(err, 'close'));
      }
    }
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #assertOpen(): void {
    if (this.#isClosed) throw new MusubiError('STORE_CLOSED', 'SQLite store is closed');
  }

  /** Runs one operation on the open connection, turning SQLite failures into coded errors. */
  #run<T>(operation: string, fn: () => T): T {
    this.#assertOpen();
    try {
      return fn();
    } catch (err) {
      throw storeFailure(err, operation);
    }
  }

  #follow<T>(
    after: number,
    signal: AbortSignal,
    read: (cursor: number) => LogBatch<T>,
    changes: ChangeSignal,
  ): AsyncIterable<T> {
    return followLog({
      after,
      signal,
      changes,
      isClosed: () => this.#isClosed,
      read: (cursor) => this.#run('follow', () => read(cursor)),
      onActive: () => this.#feed.hold(),
    });
  }
}
