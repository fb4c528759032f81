import type { Clock } from '../../core/clock.js';
import type { BusEvent, StoredEvent } from '../../core/events.js';
import type { ChangeSignal } from '../change-signal.js';
import { followLog, type LogBatch } from '../follow-log.js';
import type { KvChange, KvEntry, KvWriteOptions } from '../store.js';
import type { SqliteChangeFeed } from './sqlite-change-feed.js';
import type { SqliteEventLog } from './sqlite-event-log.js';
import type { SqliteGroupCommit } from './sqlite-group-commit.js';
import type { SqliteKv } from './sqlite-kv.js';

/** What {@link SqliteStateVerbs} needs from the store that owns it. */
export interface SqliteStateParts {
  readonly kv: SqliteKv;
  readonly events: SqliteEventLog;
  readonly commit: SqliteGroupCommit;
  readonly feed: SqliteChangeFeed;
  readonly clock: Clock;
  /** Runs a read now on the open connection, coding SQLite failures (the store's own read path). */
  readonly run: <T>(operation: string, read: () => T) => T;
  readonly assertOpen: () => void;
  readonly isClosed: () => boolean;
}

/**
 * The key-value and event-log verbs of the SQLite store: writes through the group commit (announced
 * on the change feed once committed), reads through the store's read path, watches and follows woken
 * by the feed. The store delegates to it; see Store for each verb's contract.
 */
export class SqliteStateVerbs {
  readonly #p: SqliteStateParts;

  constructor(parts: SqliteStateParts) {
    this.#p = parts;
  }

  kvGet(key: string): KvEntry | null {
    return this.#p.run('kvGet', () => this.#p.kv.get(key));
  }

  async kvSet(key: string, value: unknown, options?: KvWriteOptions): Promise<KvEntry> {
    this.#p.assertOpen();
    const entry = await this.#p.commit.write('kvSet', () => this.#p.kv.set(key, value, options));
    this.#p.feed.kv.changed(key);
    return entry;
  }

  async kvDelete(key: string, options?: KvWriteOptions): Promise<void> {
    this.#p.assertOpen();
    const isDeleted = await this.#p.commit.write('kvDelete', () => this.#p.kv.delete(key, options));
    if (isDeleted) this.#p.feed.kv.changed(key);
  }

  kvList(prefix: string): KvEntry[] {
    return this.#p.run('kvList', () => this.#p.kv.list(prefix));
  }

  kvWatch(
    prefix: string,
    options: { readonly signal: AbortSignal; readonly afterRevision?: number },
  ): AsyncIterable<KvChange> {
    // "Changes made after the call": the starting revision is read now, not on the first next().
    const after =
      options.afterRevision ?? (this.#p.isClosed() ? 0 : this.#p.run('kvWatch', () => this.#p.kv.revision()));
    const { changes, activate } = this.#p.feed.kv.watch(prefix);
    return this.#follow(after, options.signal, (cursor) => this.#p.kv.changesAfter(prefix, cursor), {
      changes,
      activate,
    });
  }

  async appendEvent(event: BusEvent): Promise<StoredEvent> {
    this.#p.assertOpen();
    const stored = await this.#p.commit.write('appendEvent', (): StoredEvent => {
      const at = this.#p.clock.now();
      // Not `{ ...event, cursor, at }`: V8 is slow when a spread clone gains new properties.
      return Object.assign({}, event, { cursor: this.#p.events.insert(event, at), at });
    });
    this.#p.feed.events.notify();
    return stored;
  }

  readEvents(options?: { readonly after?: number; readonly limit?: number }): StoredEvent[] {
    return this.#p.run('readEvents', () => this.#p.events.read(options?.after ?? 0, options?.limit ?? -1));
  }

  followEvents(options: {
    readonly after?: number;
    readonly signal: AbortSignal;
  }): AsyncIterable<StoredEvent> {
    return this.#follow(options.after ?? 0, options.signal, (cursor) => this.#p.events.readBatch(cursor), {
      changes: this.#p.feed.events,
    });
  }

  lastEventCursor(): number {
    return this.#p.run('lastEventCursor', () => this.#p.events.lastCursor());
  }

  /**
   * Follows a log woken by `wake.changes`; while it runs it keeps the feed's poll going and, when
   * given, `wake.activate` registers it for keyed wake-ups.
   */
  #follow<T>(
    after: number,
    signal: AbortSignal,
    read: (cursor: number) => LogBatch<T>,
    wake: { readonly changes: ChangeSignal; readonly activate?: () => () => void },
  ): AsyncIterable<T> {
    return followLog({
      after,
      signal,
      changes: wake.changes,
      isClosed: this.#p.isClosed,
      read: (cursor) => this.#p.run('follow', () => read(cursor)),
      onActive: () => {
        const release = this.#p.feed.hold();
        const unregister = wake.activate?.();
        return () => {
          unregister?.();
          release();
        };
      },
    });
  }
}
