import { describe, expect, it } from 'vitest';
import { backoffDelayMs } from './retry-policy.js';

const config = { baseMs: 5_000, capMs: 300_000 };

describe('backoffDelayMs', () => {
  it('draws from [0, min(cap, base * 2^(attempt-1))] in whole milliseconds', () => {
    const top = (attempt: number): number => backoffDelayMs(config, attempt, () => 0.999_999_9);
    expect([1, 2, 3, 4, 5, 6, 7, 8].map(top)).toEqual([
      5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000,
    ]);
    expect(backoffDelayMs(config, 1, () => 0)).toBe(0);
    expect(backoffDelayMs(config, 2, () => 0.5)).toBe(5_000);
    expect(backoffDelayMs({ baseMs: 10, capMs: 100 }, 1, () => 0.33)).toBe(3);
  });

  it('draws whole steps when given stepMs, the ceiling cut to whole steps', () => {
    for (let attempt = 1; attempt <= 10; attempt++) {
      for (const r of [0, 0.25, 0.5, 0.9999]) {
        const delay = backoffDelayMs(config, attempt, () => r, { stepMs: 1_000 });
        expect(delay % 1_000).toBe(0);
        expect(delay).toBeLessThanOrEqual(Math.min(300_000, 5_000 * 2 ** (attempt - 1)));
      }
    }
    // Uniform over the 6 values 0..5 s, not over 5,001 milliseconds.
    expect(backoffDelayMs(config, 1, () => 0.5, { stepMs: 1_000 })).toBe(3_000);
    expect(backoffDelayMs({ baseMs: 2_500, capMs: 300_000 }, 1, () => 0.999, { stepMs: 1_000 })).toBe(2_000);
  });
});
