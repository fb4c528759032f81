import { MusubiError } from '../core/errors.js';
import type { ChangeSignal } from './change-signal.js';

/** One read of a log: the items found and the cursor to read after next time. */
export interface LogBatch<T> {
  readonly items: readonly T[];
  /**
   * The highest position examined; may pass the last item when entries were filtered out. When `items`
   * is empty, it must cover the whole log as it was at the read, or the follower would wait too early.
   */
  readonly cursor: number;
}

/** How {@link followLog} reads and waits. */
export interface FollowLogOptions<T> {
  /** Position to read after (exclusive); the caller takes it when the follow is requested. */
  readonly after: number;
  readonly signal: AbortSignal;
  readonly changes: ChangeSignal;
  /** Reads a bounded batch after `after`. */
  readonly read: (after: number) => LogBatch<T>;
  readonly isClosed: () => boolean;
  /** Called when the follow starts; the returned function is called once when it ends. */
  readonly onActive?: () => () => void;
}

/**
 * Follows an append-only log: yields what is already there after `after`, then each new entry as
 * `changes` announces it, until `signal` aborts or the store closes; then it ends without throwing.
 * Rejects with `STORE_CLOSED` only when the store was already closed when iteration began.
 */
export async function* followLog<T>(options: FollowLogOptions<T>): AsyncGenerator<T, void, undefined> {
  const { signal, changes } = options;
  if (options.isClosed()) throw new MusubiError('STORE_CLOSED', 'store is closed');
  const release = options.onActive?.();
  try {
    let cursor = options.after;
    while (!signal.aborted && !options.isClosed()) {
      const version = changes.version;
      const batch = options.read(cursor);
      cursor = batch.cursor;
      for (const item of batch.items) {
        if (signal.aborted || options.isClosed()) return;
        yield item;
      }
      if (batch.items.length === 0) await changes.waitAfter(version, signal);
    }
  } finally {
    release?.();
  }
}
