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
  /** Runs `fn` once after `delayMs` (any length; Infinity never fires). Timers never keep the process alive. */
  setTimer(fn: () => void, delayMs: number): Timer;
}

/**
 * The longest delay Node's setTimeout honours (2^31 - 1 ms, about 24.8 days); a longer one fires after
 * 1 ms instead, with only a warning.
 */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * Runs `fn` after `delayMs` through `schedule` (setTimeout-like), waiting in steps of at most
 * {@link MAX_TIMEOUT_MS} so that a long delay (a month-long lease, a large configured timeout) is not
 * cut to 1 ms. `schedule` returns a cancel function.
 */
export function longTimer(
  fn: () => void,
  delayMs: number,
  schedule: (fn: () => void, ms: number) => () => void,
): Timer {
  let cancel: () => void = () => undefined;
  let isCancelled = false;
  const arm = (remaining: number): void => {
    if (remaining === Infinity) return;
    const step = Math.min(Math.max(0, remaining), MAX_TIMEOUT_MS);
    cancel = schedule(() => {
      if (isCancelled) return;
      if (remaining > MAX_TIMEOUT_MS) arm(remaining - MAX_TIMEOUT_MS);
      else fn();
    }, step);
  };
  arm(Number.isNaN(delayMs) ? 0 : delayMs);
  return {
    cancel: () => {
      isCancelled = true;
      cancel();
    },
  };
}

/** The real wall clock; its timers are `unref()`'d. */
export function createSystemClock(): Clock {
  return {
    now: () => Date.now(),
    setTimer(fn, delayMs) {
      return longTimer(fn, delayMs, (run, ms) => {
        const handle = setTimeout(run, ms);
        handle.unref();
        return () => clearTimeout(handle);
      });
    },
  };
}
