/** Receives the mailbox that may have claimable messages, or null for "any mailbox". */
export type AvailableListener = (mailbox: string | null) => void;

/**
 * The `onAvailable` listeners of one store. Listeners run synchronously after the write has committed;
 * one that throws must not turn a committed write into a failed call, so its error is rethrown on a
 * microtask (surfacing as an uncaught exception) instead of reaching the writer.
 */
export class AvailableListeners {
  readonly #listeners = new Set<AvailableListener>();
  /** The listeners as they were at the last change: a notify walks this, unaffected by changes it makes. */
  #snapshot: readonly AvailableListener[] = [];

  /** Number of subscribed listeners. */
  get size(): number {
    return this.#listeners.size;
  }

  /** Subscribes; the returned function unsubscribes (idempotent). */
  add(listener: AvailableListener): () => void {
    // Wrap so the same function subscribed twice gets two independent subscriptions.
    const entry: AvailableListener = (mailbox) => listener(mailbox);
    this.#listeners.add(entry);
    this.#snapshot = [...this.#listeners];
    return () => {
      if (this.#listeners.delete(entry)) this.#snapshot = [...this.#listeners];
    };
  }

  /** Calls every listener with `mailbox`. */
  notify(mailbox: string | null): void {
    for (const listener of this.#snapshot) {
      try {
        listener(mailbox);
      } catch (err) {
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }

  /** Removes every listener. */
  clear(): void {
    this.#listeners.clear();
    this.#snapshot = [];
  }
}
