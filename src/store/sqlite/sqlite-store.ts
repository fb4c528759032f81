import type Database from 'better-sqlite3';
import type { Clock } from '../../core/clock.js';
import type { Envelope } from '../../core/envelope.js';
import { isMusubiError, MusubiError } from '../../core/errors.js';
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
import { openDatabase } from './sqlite-connection.js';
import { SqliteBackup } from './sqlite-backup.js';
import { SqliteChangeFeed } from './sqlite-change-feed.js';
import { SqliteCheckpointer } from './sqlite-checkpointer.js';
import { storeFailure } from './sqlite-errors.js';
import {
  damagedStoreError,
  fileDamageReason,
  findProblems,
  hasContent,
  inspectStoreFile,
  type StoreFileFacts,
} from './sqlite-file-health.js';
import { EnvelopeCache } from './envelope-cache.js';
import { SqliteEnvelopes } from './sqlite-envelopes.js';
import { SqliteEventLog } from './sqlite-event-log.js';
import { SqliteGroupCommit } from './sqlite-group-commit.js';
import { SqliteKv } from './sqlite-kv.js';
import { SqliteMailboxQueries } from './sqlite-mailbox-queries.js';
import { SqliteMessageWriter } from './sqlite-message-writer.js';
import { SqliteMessages } from './sqlite-messages.js';
import { SqliteReadSnapshot } from './sqlite-read-snapshot.js';
import { SqliteStateVerbs } from './sqlite-state-verbs.js';
import { migrate } from './sqlite-schema.js';
import { resolveSqliteOptions, type SqliteStoreOptions } from './sqlite-store-options.js';

/**
 * Files up to this size get `PRAGMA quick_check` at open: about 70 ms for a store of 100,000 messages
 * (58 MB), 1.2-1.7 ms per MB. A larger one is checked by its next backup instead (SqliteBackup), so open
 * never takes much more than 200 ms.
 */
const OPEN_CHECK_MAX_BYTES = 128 * 1024 * 1024;

interface Parts {
  readonly db: Database.Database;
  readonly facts: StoreFileFacts;
  readonly path: string;
  readonly synchronous: 'normal' | 'full';
  readonly clock: Clock;
  readonly pollIntervalMs: number;
  readonly eventRetention: number;
}

/**
 * The Store port on one SQLite file (better-sqlite3, WAL mode), the embedded default; several
 * processes may share the file. Writes use group commit ({@link SqliteGroupCommit}): the operations
 * issued during one turn of the event loop run in call order in ONE `BEGIN IMMEDIATE` transaction on
 * the next turn (at most 512 per transaction); one operation's failure rejects only its own promise (the
 * batch is then run again with a savepoint per operation). A promise resolves only after its transaction
 * committed, so durability is the same as with a transaction per operation (see
 * {@link SqliteStoreOptions.synchronous}).
 *
 * Reads (peek, counts, nextDueAt, kv reads, events) run at once, without the write lock, and see what
 * is committed: every write whose promise resolved, never one still queued. The reads of one event-loop
 * turn share one read transaction ({@link SqliteReadSnapshot}), so within a turn they see one state;
 * another process's commit shows from the next turn on. Peek, counts, nextDueAt and a claim's first look
 * read the mailbox's mirror (`sqlite-mirror.ts`: its live rows in memory, kept in step with this
 * connection's commits and started over when another connection's commit changes data_version). A claim
 * that finds nothing claimable resolves null at once, without queueing or taking the write lock, so idle
 * consumers never block writers. close() first runs what is queued.
 *
 * Commits by other connections reach onAvailable listeners (as `null`), kv watches and event follows
 * through a `PRAGMA data_version` poll that runs only while one of them exists. Rows read back are
 * validated; a bad one is reported as STORE_CORRUPT, never used.
 */
export class SqliteStore implements Store {
  readonly kind = 'sqlite';
  // The group commit runs the queue in call order, one transaction after another.
  readonly writesInOrder = true;
  readonly #db: Database.Database;
  readonly #clock: Clock;
  readonly #commit: SqliteGroupCommit;
  readonly #checkpointer: SqliteCheckpointer;
  readonly #backup: SqliteBackup;
  /** Set once a backup found the file damaged: every later call rejects with it. */
  #damage: MusubiError | undefined;
  readonly #snapshot: SqliteReadSnapshot;
  readonly #writer: SqliteMessageWriter;
  readonly #queries: SqliteMailboxQueries;
  readonly #state: SqliteStateVerbs;
  readonly #feed: SqliteChangeFeed;
  #isClosed = false;
  #closing: Promise<void> | undefined;

  /**
   * Opens (creating if needed), checks and migrates the file, and keeps a rolling backup of it
   * (`<path>.backup`, see {@link SqliteBackup}). Throws STORE_UNAVAILABLE when it cannot be opened
   * (missing folder, permissions, a schema from a newer musubi). Throws STORE_CORRUPT, saying how to
   * restore the backup or start fresh, when the file is not a database, fails `PRAGMA quick_check` (files
   * up to 128 MiB), or is missing or empty while its backup or WAL shows it held data: a store that held
   * data never silently opens empty. Once a backup finds a copy of the file damaged, every later call
   * rejects STORE_CORRUPT the same way.
   */
  static open(options: SqliteStoreOptions): SqliteStore {
    const { pollIntervalMs, eventRetention, synchronous } = resolveSqliteOptions(options);
    const { path, clock } = options;
    const facts = inspectStoreFile(path);
    const damage = fileDamageReason(facts);
    if (damage !== undefined) throw damagedStoreError(facts, damage);
    let db: Database.Database;
    try {
      db = openDatabase(path, synchronous);
    } catch (err) {
      throw openFailure(err, facts);
    }
    let problems: string[] = [];
    try {
      if (hasContent(facts) && (facts.bytes ?? 0) <= OPEN_CHECK_MAX_BYTES) {
        problems = findProblems(db, 'quick_check');
      }
      if (problems.length === 0) migrate(db, path);
    } catch (err) {
      db.close();
      throw openFailure(err, facts);
    }
    if (problems.length > 0) {
      db.close();
      throw damagedStoreError(facts, `PRAGMA quick_check: ${problems.slice(0, 3).join('; ')}`);
    }
    const store = new SqliteStore({ db, facts, path, synchronous, clock, pollIntervalMs, eventRetention });
    if (hasContent(facts)) store.#backup.afterOpen(facts.changedAt);
    return store;
  }

  private constructor(parts: Parts) {
    const { db } = parts;
    this.#db = db;
    this.#clock = parts.clock;
    this.#checkpointer = new SqliteCheckpointer(db, parts);
    this.#backup = new SqliteBackup({
      path: parts.path,
      clock: parts.clock,
      takenAt: parts.facts.backup?.takenAt ?? null,
      onDamaged: (problems) => {
        let facts = parts.facts;
        try {
          facts = inspectStoreFile(parts.path);
        } catch {
          // Only to name the newest backup; the one known at open is named instead.
        }
        const reason = `a copy made for its backup fails PRAGMA integrity_check: ${problems.slice(0, 3).join('; ')}`;
        this.#damage = damagedStoreError(facts, reason);
      },
    });
    this.#snapshot = new SqliteReadSnapshot(db);
    this.#commit = new SqliteGroupCommit(db, {
      onCommitted: (writes) => {
        this.#checkpointer.noteCommit(writes);
        this.#backup.noteCommit();
      },
      beforeBegin: () => this.#snapshot.end(),
    });
    const events = new SqliteEventLog(db, { retention: parts.eventRetention });
    const envelopes = new SqliteEnvelopes({ cache: new EnvelopeCache(), events });
    const messages = new SqliteMessages(db, { events, envelopes });
    const snapshot = this.#snapshot;
    this.#queries = new SqliteMailboxQueries(db, {
      messages,
      envelopes,
      dataVersion: () => snapshot.dataVersion(),
    });
    this.#feed = new SqliteChangeFeed(db, { pollIntervalMs: parts.pollIntervalMs });
    this.#writer = new SqliteMessageWriter({
      messages,
      envelopes,
      queries: this.#queries,
      commit: this.#commit,
      feed: this.#feed,
      clock: this.#clock,
      snapshot: this.#snapshot,
    });
    this.#state = new SqliteStateVerbs({
      kv: new SqliteKv(db, { retention: parts.eventRetention }),
      events,
      commit: this.#commit,
      feed: this.#feed,
      clock: this.#clock,
      run: (operation, read) => this.#run(operation, read),
      assertOpen: () => this.#assertOpen(),
      isClosed: () => this.#isClosed,
    });
  }

  async append(mailbox: string, envelope: Envelope): Promise<AppendResult> {
    this.#assertOpen();
    return this.#writer.append(mailbox, envelope);
  }

  async claim(mailbox: string, options: { readonly leaseMs: number }): Promise<Delivery | null> {
    this.#assertOpen();
    return this.#writer.claim(mailbox, options.leaseMs);
  }

  async ack(deliveryId: string): Promise<void> {
    this.#assertOpen();
    return this.#writer.ack(deliveryId);
  }

  async take(mailbox: string, envelopeId: string): Promise<boolean> {
    this.#assertOpen();
    return this.#writer.take(mailbox, envelopeId);
  }

  async nack(deliveryId: string, options: { readonly delayMs: number }): Promise<void> {
    this.#assertOpen();
    return this.#writer.nack(deliveryId, options.delayMs);
  }

  async extend(deliveryId: string, options: { readonly leaseMs: number }): Promise<Delivery> {
    this.#assertOpen();
    return this.#writer.extend(deliveryId, options.leaseMs);
  }

  async deadLetter(deliveryId: string, options: { readonly reason: string }): Promise<DeadLetter> {
    this.#assertOpen();
    return this.#writer.deadLetter(deliveryId, options.reason);
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
    this.#assertOpen();
    return this.#writer.requeue(envelopeId);
  }

  async discardDeadLetter(envelopeId: string): Promise<DeadLetter[]> {
    this.#assertOpen();
    return this.#writer.discard(envelopeId);
  }

  onAvailable(listener: (mailbox: string | null) => void): () => void {
    this.#assertOpen();
    return this.#feed.subscribe(listener);
  }

  async kvGet(key: string): Promise<KvEntry | null> {
    return this.#state.kvGet(key);
  }

  kvSet(key: string, value: unknown, options?: KvWriteOptions): Promise<KvEntry> {
    return this.#state.kvSet(key, value, options);
  }

  kvDelete(key: string, options?: KvWriteOptions): Promise<void> {
    return this.#state.kvDelete(key, options);
  }

  async kvList(prefix: string): Promise<KvEntry[]> {
    return this.#state.kvList(prefix);
  }

  kvWatch(
    prefix: string,
    options: { readonly signal: AbortSignal; readonly afterRevision?: number },
  ): AsyncIterable<KvChange> {
    return this.#state.kvWatch(prefix, options);
  }

  appendEvent(event: BusEvent): Promise<StoredEvent> {
    return this.#state.appendEvent(event);
  }

  async readEvents(options?: { readonly after?: number; readonly limit?: number }): Promise<StoredEvent[]> {
    return this.#state.readEvents(options);
  }

  followEvents(options: {
    readonly after?: number;
    readonly signal: AbortSignal;
  }): AsyncIterable<StoredEvent> {
    return this.#state.followEvents(options);
  }

  async lastEventCursor(): Promise<number> {
    return this.#state.lastEventCursor();
  }

  /**
   * Runs the operations still queued (they settle as usual: committed, or rejected with their own
   * failure), then stops polling, ends running watches and follows, and closes the connection. Calls
   * made after close() reject STORE_CLOSED. Idempotent: repeat calls share one promise. Other processes
   * using the file are not affected.
   */
  close(): Promise<void> {
    this.#closing ??= this.#shutDown();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #shutDown(): Promise<void> {
    this.#isClosed = true;
    // Operations issued before close() run and settle first (committed, or rejected on failure).
    this.#commit.close();
    this.#snapshot.end();
    this.#feed.close();
    // The threads' connections close first, so this one is the last and removes the WAL.
    await this.#backup.close();
    await this.#checkpointer.close();
    try {
      this.#db.close();
    } catch (err) {
      throw storeFailure(err, 'close');
    }
  }

  #assertOpen(): void {
    if (this.#isClosed) throw new MusubiError('STORE_CLOSED', 'SQLite store is closed');
    if (this.#damage !== undefined) throw this.#damage;
  }

  /** Runs one operation on the open connection now, turning SQLite failures into coded errors. */
  #run<T>(operation: string, fn: () => T): T {
    this.#assertOpen();
    try {
      return this.#snapshot.read(fn);
    } catch (err) {
      throw storeFailure(err, operation);
    }
  }
}

/** A failure while opening, with a file SQLite finds damaged reported as {@link damagedStoreError}. */
function openFailure(err: unknown, facts: StoreFileFacts): unknown {
  const failure = storeFailure(err, `open ${facts.path}`);
  if (!isMusubiError(failure, 'STORE_CORRUPT')) return failure;
  // SQLite's own words ("file is not a database"), without the operation storeFailure puts around them.
  const reason = failure.cause instanceof Error ? failure.cause.message : failure.message;
  return damagedStoreError(facts, reason, failure.cause ?? failure);
}
