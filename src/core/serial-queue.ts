/**
 * Runs async tasks one at a time, in the order they were queued. A task's failure reaches its own
 * caller only: the queue goes on with the next task.
 */
export class SerialQueue {
  #tail: Promise<unknown> = Promise.resolve();

  /** Queues `task`; resolves or rejects with its outcome once it has run. */
  run<T>(task: () => Promise<T> | T): Promise<T> {
    const run = this.#tail.then(task);
    this.#tail = run.catch(() => undefined);
    return run;
  }

  /** Resolves once every task queued so far has finished, whatever its outcome. */
  idle(): Promise<void> {
    return this.#tail.then(() => undefined);
  }
}

/** A {@link SerialQueue} per key (tasks of different keys run side by side); idle keys are forgotten. */
export class KeyedSerialQueue<K> {
  readonly #tails = new Map<K, Promise<unknown>>();

  /** Queues `task` behind the other tasks of `key`. */
  run<T>(key: K, task: () => Promise<T> | T): Promise<T> {
    const run = (this.#tails.get(key) ?? Promise.resolve()).then(task);
    const tail = run.catch(() => undefined);
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return run;
  }
}
