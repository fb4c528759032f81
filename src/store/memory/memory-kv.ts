import { KvWakeups } from '../kv-wakeups.js';
import { followLog } from '../follow-log.js';
import { checkRevision, kvValueText } from '../kv-write.js';
import type { KvChange, KvEntry, KvWriteOptions } from '../store.js';
import { BoundedLog } from './bounded-log.js';

interface StoredValue {
  /** JSON text, so callers never share objects with the store (as with a real store). */
  readonly text: string;
  readonly revision: number;
}

interface LoggedChange {
  readonly op: 'put' | 'delete';
  readonly key: string;
  readonly text: string | undefined;
  readonly revision: number;
}

const WATCH_BATCH = 100;

/**
 * The key-value space of the memory store: values with one store-wide revision counter and a bounded
 * change log that watches replay from. The caller checks that the store is open.
 */
export class MemoryKv {
  readonly #values = new Map<string, StoredValue>();
  readonly #log: BoundedLog<LoggedChange>;
  readonly #wakeups = new KvWakeups();
  #revision = 0;

  constructor(options: { retention: number }) {
    this.#log = new BoundedLog({ positionOf: (c) => c.revision, retention: options.retention });
  }

  get(key: string): KvEntry | null {
    const stored = this.#values.get(key);
    return stored === undefined ? null : toEntry(key, stored);
  }

  set(key: string, value: unknown, options: KvWriteOptions | undefined): KvEntry {
    const text = kvValueText(value);
    checkRevision(key, this.#values.get(key)?.revision, options);
    const stored: StoredValue = { text, revision: ++this.#revision };
    this.#values.set(key, stored);
    this.#record({ op: 'put', key, text, revision: stored.revision });
    return toEntry(key, stored);
  }

  delete(key: string, options: KvWriteOptions | undefined): void {
    const current = this.#values.get(key);
    checkRevision(key, current?.revision, options);
    if (current === undefined) return;
    this.#values.delete(key);
    this.#record({ op: 'delete', key, text: undefined, revision: ++this.#revision });
  }

  list(prefix: string): KvEntry[] {
    return [...this.#values]
      .filter(([key]) => key.startsWith(prefix))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, stored]) => toEntry(key, stored));
  }

  watch(
    prefix: string,
    options: { signal: AbortSignal; afterRevision?: number; isClosed: () => boolean },
  ): AsyncIterable<KvChange> {
    const log = this.#log;
    const { changes, activate } = this.#wakeups.watch(prefix);
    return followLog({
      after: options.afterRevision ?? this.#revision,
      signal: options.signal,
      changes,
      onActive: activate,
      isClosed: options.isClosed,
      read: (after) => {
        const batch = log.readAfter(after, { limit: WATCH_BATCH, accept: (c) => c.key.startsWith(prefix) });
        return { items: batch.items.map(toChange), cursor: batch.cursor };
      },
    });
  }

  /** Wakes watchers so they can notice the store closed. */
  wake(): void {
    this.#wakeups.wakeAll();
  }

  #record(change: LoggedChange): void {
    this.#log.append(change);
    this.#wakeups.changed(change.key);
  }
}

function toEntry(key: string, stored: StoredValue): KvEntry {
  return { key, value: JSON.parse(stored.text), revision: stored.revision };
}

function toChange(change: LoggedChange): KvChange {
  return {
    op: change.op,
    key: change.key,
    value: change.text === undefined ? undefined : JSON.parse(change.text),
    revision: change.revision,
  };
}
