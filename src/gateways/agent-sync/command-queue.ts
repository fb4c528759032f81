/**
 * Runs tasks one at a time in call order, so every agent_sync command is atomic with respect to every
 * other. A task is queued synchronously by {@link CommandQueue.run}: whatever is queued later runs later.
 */
export class CommandQueue {
  #tail: Promise<unknown> = Promise.resolve();

  /** Queues `task`; resolves or rejects with its outcome. A failed task does not stop the queue. */
  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(task);
    this.#tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}
