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
 */
export function backoffDelayMs(config: RetryConfig, attempt: number, random: () => number): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 52);
  const ceiling = Math.min(config.capMs, config.baseMs * 2 ** exponent);
  return Math.floor(random() * (ceiling + 1));
}
