import type { Clock } from './clock.js';

/**
 * Waits `ms` on `clock` (so a fake clock drives it in tests). Resolves true when the time passed, false
 * as soon as `signal` aborts (at once when it already has); never rejects, so a loop can simply
 * `await sleep(...)` and then look at its signal.
 */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted === true) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      timer.cancel();
      resolve(false);
    };
    const timer = clock.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
