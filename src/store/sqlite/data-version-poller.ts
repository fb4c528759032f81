/**
 * Notices commits made by other connections (other processes, or other stores on the same file) by
 * polling `PRAGMA data_version`, which changes only when another connection commits. It polls only while
 * someone holds it (an onAvailable listener, a kv watch, an event follow), on an unref'd real-time
 * interval: it watches the file, not store time, so it never uses the injected clock.
 */
export class DataVersionPoller {
  readonly #read: () => number;
  readonly #onChange: () => void;
  readonly #intervalMs: number;
  #holders = 0;
  #timer: NodeJS.Timeout | undefined;
  #last = 0;

  constructor(options: { read: () => number; onChange: () => void; intervalMs: number }) {
    this.#read = options.read;
    this.#onChange = options.onChange;
    this.#intervalMs = options.intervalMs;
  }

  /** Starts polling if this is the first holder; the returned release (idempotent) stops it after the last. */
  hold(): () => void {
    if (this.#holders++ === 0) this.#start();
    let isHeld = true;
    return () => {
      if (!isHeld) return;
      isHeld = false;
      if (--this.#holders === 0) this.#stop();
    };
  }

  /** Stops polling for good. */
  close(): void {
    this.#holders = 0;
    this.#stop();
  }

  #start(): void {
    this.#last = this.#read();
    this.#timer = setInterval(() => this.#poll(), this.#intervalMs);
    this.#timer.unref();
  }

  #stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #poll(): void {
    let version: number;
    try {
      version = this.#read();
    } catch {
      // Reading failed (the file went away or is damaged): wake everyone, so their next store call
      // reports the real failure instead of waiting forever for a change nobody can see.
      this.#onChange();
      return;
    }
    if (version === this.#last) return;
    this.#last = version;
    this.#onChange();
  }
}
