/** Concurrent turns per backend when nothing else is configured. */
export const DEFAULT_CONCURRENCY = 4;

/** Options of {@link ConcurrencyLimiter}. */
export interface ConcurrencyLimiterOptions {
  /** Limit per key (backend name); keys not listed get `defaultLimit`. */
  readonly limits?: Readonly<Record<string, number>>;
  readonly defaultLimit?: number;
}

interface Waiter {
  readonly grant: () => void;
}

/**
 * A counting semaphore per key (one per agent backend), FIFO among waiters. `acquire` resolves a
 * release function once a slot is free; an aborted wait rejects with the signal's reason and leaves
 * the queue. Release is idempotent.
 */
export class ConcurrencyLimiter {
  readonly #limits: Readonly<Record<string, number>>;
  readonly #defaultLimit: number;
  readonly #active = new Map<string, number>();
  readonly #queues = new Map<string, Waiter[]>();

  constructor(options: ConcurrencyLimiterOptions = {}) {
    this.#limits = options.limits ?? {};
    this.#defaultLimit = options.defaultLimit ?? DEFAULT_CONCURRENCY;
  }

  /** The limit for `key`. */
  limit(key: string): number {
    return this.#limits[key] ?? this.#defaultLimit;
  }

  /** Turns running under `key` now. */
  active(key: string): number {
    return this.#active.get(key) ?? 0;
  }

  /** Turns waiting for a slot under `key`. */
  waiting(key: string): number {
    return this.#queues.get(key)?.length ?? 0;
  }

  acquire(key: string, signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.active(key) < this.limit(key)) return Promise.resolve(this.#take(key));
    return new Promise((resolve, reject) => {
      const queue = this.#queues.get(key) ?? [];
      this.#queues.set(key, queue);
      const onAbort = (): void => {
        queue.splice(queue.indexOf(waiter), 1);
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.#take(key));
        },
      };
      queue.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  #take(key: string): () => void {
    this.#active.set(key, this.active(key) + 1);
    let isReleased = false;
    return () => {
      if (isReleased) return;
      isReleased = true;
      this.#active.set(key, this.active(key) - 1);
      this.#queues.get(key)?.shift()?.grant();
    };
  }
}
