/** Keys kept at a count of 0 at most before they are swept out (request names are unbounded). */
const MAX_IDLE_KEYS = 4_096;

interface Request {
  /** Null: exclusive (conflicts with everything). Otherwise the mailbox keys it needs alone. */
  readonly keys: readonly string[] | null;
  /** Called once the request holds its keys. */
  readonly start: () => void;
}

/**
 * Makes agent_sync commands atomic with respect to each other while letting independent ones overlap
 * (so the store can commit their writes together). A state command runs alone; a mailbox command runs
 * alongside others that touch different mailboxes. Conflicting requests run in the order they were made,
 * and a request is queued synchronously by the call: whatever is requested later, and conflicts, runs later.
 *
 * What runs is kept as counts (per mailbox key, and of state commands), so checking a request against
 * everything running costs one map lookup per key, however many commands are in flight.
 */
export class CommandLocks {
  readonly #waiting: Request[] = [];
  /**
   * Running mailbox commands per key (a command names each key once). A key whose count drops to 0
   * stays in the map (deleting and adding again churns the table); the map is emptied of them when it
   * grows past {@link MAX_IDLE_KEYS}.
   */
  readonly #runningKeys = new Map<string, number>();
  #runningCount = 0;
  #isExclusiveRunning = false;

  /** Runs `task` with nothing else running (commands that read or change the round state). */
  exclusive<T>(task: () => Promise<T>): Promise<T> {
    return this.#run(null, task);
  }

  /** Runs `task` once no running or earlier request touches any of `keys` and no state command runs. */
  mailboxes<T>(keys: readonly string[], task: () => Promise<T>): Promise<T> {
    return this.#run(keys.length > 1 ? [...new Set(keys)] : keys, task);
  }

  /**
   * Takes `keys` (null: everything) at once when nothing running conflicts and nothing waits; false
   * otherwise (then call {@link CommandLocks.hold}, in the same synchronous step). Release with
   * {@link CommandLocks.release}. For callers that hold the lock across their own awaits.
   */
  tryHold(keys: readonly string[] | null): boolean {
    if (this.#waiting.length > 0 || this.#isBlocked(keys)) return false;
    this.#enter(keys);
    return true;
  }

  /** Queues for `keys` (null: everything) behind every earlier request; resolves once they are held. */
  hold(keys: readonly string[] | null): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#waiting.push({ keys, start: resolve });
      this.#dispatch();
    });
  }

  /** Gives back what {@link CommandLocks.tryHold} or {@link CommandLocks.hold} took. */
  release(keys: readonly string[] | null): void {
    this.#leave(keys);
    this.#dispatch();
  }

  async #run<T>(keys: readonly string[] | null, task: () => Promise<T>): Promise<T> {
    // Nothing waits and nothing running conflicts: start now, skipping the queue. Either way the
    // request holds its keys from the moment it starts (#dispatch enters it synchronously).
    if (!this.tryHold(keys)) await this.hold(keys);
    try {
      return await task();
    } finally {
      this.release(keys);
    }
  }

  #enter(keys: readonly string[] | null): void {
    this.#runningCount++;
    if (keys === null) this.#isExclusiveRunning = true;
    else for (const key of keys) this.#runningKeys.set(key, (this.#runningKeys.get(key) ?? 0) + 1);
  }

  #leave(keys: readonly string[] | null): void {
    this.#runningCount--;
    if (keys === null) this.#isExclusiveRunning = false;
    else for (const key of keys) this.#runningKeys.set(key, (this.#runningKeys.get(key) ?? 1) - 1);
    if (this.#runningKeys.size > MAX_IDLE_KEYS) {
      for (const [key, count] of this.#runningKeys) if (count === 0) this.#runningKeys.delete(key);
    }
  }

  /** Whether a request for `keys` conflicts with something running. */
  #isBlocked(keys: readonly string[] | null): boolean {
    if (this.#isExclusiveRunning) return true;
    if (keys === null) return this.#runningCount > 0;
    for (const key of keys) if ((this.#runningKeys.get(key) ?? 0) > 0) return true;
    return false;
  }

  /** Starts, in order, every waiting request that conflicts with nothing running or waiting before it. */
  #dispatch(): void {
    if (this.#waiting.length === 0) return;
    const skippedKeys = new Set<string>();
    for (let i = 0; i < this.#waiting.length;) {
      const request = this.#waiting[i];
      if (request === undefined) break;
      const keys = request.keys;
      if (this.#isBlocked(keys) || (keys === null ? i > 0 : keys.some((k) => skippedKeys.has(k)))) {
        if (keys === null) break; // nothing may pass a waiting state command
        for (const key of keys) skippedKeys.add(key);
        i++;
        continue;
      }
      this.#waiting.splice(i, 1);
      this.#enter(keys);
      request.start();
    }
  }
}
