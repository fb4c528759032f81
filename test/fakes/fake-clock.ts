import type { Clock, Timer } from '../../src/core/clock.js';

interface PendingTimer {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
  isCancelled: boolean;
}

/** A clock tests move by hand: `advance(ms)` runs every timer that falls due, in time order. */
export class FakeClock implements Clock {
  #now: number;
  #seq = 0;
  #timers: PendingTimer[] = [];

  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  setTimer(fn: () => void, delayMs: number): Timer {
    const timer: PendingTimer = {
      at: this.#now + Math.max(0, delayMs),
      seq: this.#seq++,
      fn,
      isCancelled: false,
    };
    this.#timers.push(timer);
    return { cancel: () => void (timer.isCancelled = true) };
  }

  /** Moves time forward by `ms`, firing due timers (including ones they schedule) in order. */
  advance(ms: number): void {
    const target = this.#now + ms;
    for (;;) {
      const due = this.#timers
        .filter((t) => !t.isCancelled && t.at <= target)
        .sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (due === undefined) break;
      this.#timers = this.#timers.filter((t) => t !== due);
      this.#now = Math.max(this.#now, due.at);
      due.fn();
    }
    this.#now = target;
  }

  /** Timers scheduled and not yet fired or cancelled. */
  pendingTimers(): number {
    return this.#timers.filter((t) => !t.isCancelled).length;
  }
}
