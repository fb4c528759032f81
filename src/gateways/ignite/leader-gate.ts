import { readFileSync } from 'node:fs';
import type { Clock, Timer } from '../../core/clock.js';

/** The session id recorded for agent `idx` (`<state>/.agent_session_<idx>`), or '' when missing or empty. */
export async function readSessionId(stateDir: string, idx: number): Promise<string> {
  try {
    return Promise.resolve(readFileSync(`${stateDir}/.agent_session_${idx}`, 'utf8').trim());
  } catch {
    // Missing or unreadable: no session recorded.
    return Promise.resolve('');
  }
}

/** Options of {@link LeaderGate}. */
export interface LeaderGateOptions {
  readonly stateDir: string;
  readonly clock: Clock;
  readonly checkMs: number;
  readonly graceMs: number;
  readonly threshold: number;
  /** Called once when the leader session stayed missing past the grace period and threshold. */
  readonly onGiveUp: () => void;
}

/**
 * The leader gate (spec/ignite.md 4.8): no queue is processed while `.agent_session_0` is missing or
 * empty; it is re-checked every `checkMs`. Missing for at least `graceMs` and `threshold` consecutive
 * checks calls `onGiveUp` (the monitor exits 1). `close()` stops checking and releases waiters.
 */
export class LeaderGate {
  readonly #options: LeaderGateOptions;
  #isOpen = false;
  #missingSince: number | null = null;
  #misses = 0;
  #timer: Timer | undefined;
  #isClosed = false;
  #waiters: Array<() => void> = [];

  constructor(options: LeaderGateOptions) {
    this.#options = options;
  }

  /** True when the last check found the leader session. */
  get isOpen(): boolean {
    return this.#isOpen;
  }

  /** Checks once now, then every `checkMs` until closed. */
  async start(): Promise<void> {
    await this.#check();
  }

  /** Resolves when the gate is open (at once if it is), or when the gate closes or `signal` aborts. */
  waitOpen(signal?: AbortSignal): Promise<void> {
    if (this.#isOpen || this.#isClosed || signal?.aborted === true) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        signal?.removeEventListener('abort', done);
        resolve();
      };
      signal?.addEventListener('abort', done, { once: true });
      this.#waiters.push(done);
    });
  }

  close(): void {
    this.#isClosed = true;
    this.#timer?.cancel();
    this.#release();
  }

  #release(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  async #check(): Promise<void> {
    if (this.#isClosed) return;
    const now = this.#options.clock.now();
    this.#isOpen = (await readSessionId(this.#options.stateDir, 0)) !== '';
    if (this.#isOpen) {
      this.#missingSince = null;
      this.#misses = 0;
      this.#release();
    } else {
      this.#missingSince ??= now;
      this.#misses++;
      if (now - this.#missingSince >= this.#options.graceMs && this.#misses >= this.#options.threshold) {
        this.#options.onGiveUp();
        return;
      }
    }
    if (!this.#isClosed)
      this.#timer = this.#options.clock.setTimer(() => void this.#check(), this.#options.checkMs);
  }
}
