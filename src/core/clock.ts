/** A cancellable timer handle returned by {@link Clock.setTimer}. */
export interface Timer {
  cancel(): void;
}

/**
 * Time as musubi sees it. Injected everywhere time matters (leases, backoff, timeouts) so tests can
 * drive it with a fake clock instead of sleeping.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Runs `fn` once after `delayMs`. Timers never keep the process alive. */
  setTimer(fn: () => void, delayMs: number): Timer;
}

/** The real wall clock; its timers are `unref()`'d. */
export function createSystemClock(): Clock {
  return {
    now: () => Date.now(),
    setTimer(fn, delayMs) {
      const handle = setTimeout(fn, Math.max(0, delayMs));
      handle.unref();
      return { cancel: () => clearTimeout(handle) };
    },
  };
}
