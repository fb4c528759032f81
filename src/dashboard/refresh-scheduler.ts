/**
 * Coalesces refresh requests per topic: a request while a refresh of that topic is pending or running
 * causes exactly one more run after it, `delayMs` later, so a burst of events costs one or two fetches.
 * Failures go to `onError`; the next request tries again.
 */
export class RefreshScheduler<T extends string> {
  readonly #run: (topic: T) => Promise<void>;
  readonly #onError: (topic: T, err: unknown) => void;
  readonly #delayMs: number;
  readonly #pending = new Set<T>();
  readonly #running = new Set<T>();
  readonly #again = new Set<T>();

  constructor(options: {
    run: (topic: T) => Promise<void>;
    onError: (topic: T, err: unknown) => void;
    delayMs: number;
  }) {
    this.#run = options.run;
    this.#onError = options.onError;
    this.#delayMs = options.delayMs;
  }

  /** Asks for a refresh of `topic` soon. */
  request(topic: T): void {
    if (this.#running.has(topic)) {
      this.#again.add(topic);
      return;
    }
    if (this.#pending.has(topic)) return;
    this.#pending.add(topic);
    setTimeout(() => void this.#start(topic), this.#delayMs);
  }

  /** Refreshes `topic` now and resolves when done (used at start-up and after actions). */
  async now(topic: T): Promise<void> {
    this.#pending.delete(topic);
    await this.#start(topic);
  }

  async #start(topic: T): Promise<void> {
    this.#pending.delete(topic);
    if (this.#running.has(topic)) {
      this.#again.add(topic);
      return;
    }
    this.#running.add(topic);
    try {
      await this.#run(topic);
    } catch (err) {
      this.#onError(topic, err);
    } finally {
      this.#running.delete(topic);
      if (this.#again.delete(topic)) this.request(topic);
    }
  }
}
