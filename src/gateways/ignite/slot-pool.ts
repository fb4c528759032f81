/**
 * A FIFO counting semaphore: at most `capacity` holders, waiters served oldest first (spec/ignite.md 4.3:
 * deliveries in parallel up to parallel_max, oldest-waiting agent first). The capacity can change at
 * run time (SIGHUP reload); a smaller one takes effect as holders release.
 */
export class SlotPool {
  #capacity: number;
  #held = 0;
  readonly #waiters: Array<{ grant: () => void; signal: AbortSignal | undefined; onAbort: () => void }> = [];

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** Slots currently held. */
  get held(): number {
    return this.#held;
  }

  /** Changes the capacity and wakes waiters that now fit. */
  resize(capacity: number): void {
    this.#capacity = capacity;
    this.#drain();
  }

  /** Resolves a release function once a slot is free; rejects with the signal's reason when aborted. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    return new Promise((resolve, reject) => {
      const waiter = {
        signal,
        grant: () => {
          signal?.removeEventListener('abort', waiter.onAbort);
          resolve(this.#releaser());
        },
        onAbort: () => {
          const at = this.#waiters.indexOf(waiter);
          if (at !== -1) this.#waiters.splice(at, 1);
          reject(signal?.reason);
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.#waiters.push(waiter);
      this.#drain();
    });
  }

  #releaser(): () => void {
    this.#held++;
    let isReleased = false;
    return () => {
      if (isReleased) return;
      isReleased = true;
      this.#held--;
      this.#drain();
    };
  }

  #drain(): void {
    while (this.#held < this.#capacity) {
      const next = this.#waiters.shift();
      if (next === undefined) return;
      next.grant();
    }
  }
}
