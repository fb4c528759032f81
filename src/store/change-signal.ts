/**
 * A wake-up for followers of a log (kv watches, event follows): writers call `notify()`, followers
 * remember `version` before reading and then wait with `waitAfter(version)`. Because the version is taken
 * before the read, a write that lands between the read and the wait is never missed.
 */
export class ChangeSignal {
  #version = 0;
  readonly #waiters = new Set<() => void>();

  /** Increases with every {@link ChangeSignal.notify}. */
  get version(): number {
    return this.#version;
  }

  /** Wakes every waiter. */
  notify(): void {
    this.#version++;
    if (this.#waiters.size === 0) return;
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const wake of waiters) wake();
  }

  /**
   * Resolves once the version differs from `version` (at once if it already does) or `signal` aborts.
   * Never rejects; the caller checks the signal afterwards.
   */
  waitAfter(version: number, signal: AbortSignal): Promise<void> {
    if (this.#version !== version || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = (): void => {
        this.#waiters.delete(wake);
        signal.removeEventListener('abort', wake);
        resolve();
      };
      this.#waiters.add(wake);
      signal.addEventListener('abort', wake, { once: true });
    });
  }
}
