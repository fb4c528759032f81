/** Retry settings: exponential backoff with full jitter, then dead letters after `maxAttempts`. */
export interface RetryConfig {
  readonly baseMs: number;
  readonly capMs: number;
  readonly maxAttempts: number;
}

/**
 * The delay before the next delivery after `attempt` failed deliveries (attempt >= 1):
 * uniform in [0, min(cap, base * 2^(attempt-1))] — "full jitter", which spreads a burst of failures
 * out instead of retrying them in lock-step. `random` returns [0, 1) and is injectable for tests.
 * The delay is a whole number of `stepMs` (default 1 ms): IGNITE's contract draws whole seconds
 * (spec/ignite.md 4.6), so the ceiling is cut to whole steps before drawing.
 */
export function backoffDelayMs(
  config: Pick<RetryConfig, 'baseMs' | 'capMs'>,
  attempt: number,
  random: () => number,
  options: { readonly stepMs?: number } = {},
): number {
  const stepMs = options.stepMs ?? 1;
  const exponent = Math.min(Math.max(attempt - 1, 0), 52);
  const steps = Math.floor(Math.min(config.capMs, config.baseMs * 2 ** exponent) / stepMs);
  return Math.floor(random() * (steps + 1)) * stepMs;
}
