import { describe, expect, it } from 'vitest';
import { longTimer, MAX_TIMEOUT_MS } from './clock.js';

/** A schedule that records each requested step and lets the test fire them in order. */
function steps(): {
  schedule: (fn: () => void, ms: number) => () => void;
  fire: () => void;
  asked: number[];
} {
  const pending: Array<{ fn: () => void; isCancelled: boolean }> = [];
  const asked: number[] = [];
  return {
    asked,
    schedule: (fn, ms) => {
      asked.push(ms);
      const entry = { fn, isCancelled: false };
      pending.push(entry);
      return () => {
        entry.isCancelled = true;
      };
    },
    fire: () => {
      const next = pending.shift();
      if (next !== undefined && !next.isCancelled) next.fn();
    },
  };
}

describe('longTimer', () => {
  it('waits in steps no longer than setTimeout honours, then runs once', () => {
    const s = steps();
    let runs = 0;
    longTimer(() => runs++, 2 * MAX_TIMEOUT_MS + 5, s.schedule);
    s.fire();
    s.fire();
    expect(runs).toBe(0);
    s.fire();
    expect(runs).toBe(1);
    expect(s.asked).toEqual([MAX_TIMEOUT_MS, MAX_TIMEOUT_MS, 5]);
  });

  it('passes a short delay through as it is, a negative or NaN one as 0, and never fires for Infinity', () => {
    const s = steps();
    longTimer(() => undefined, 250, s.schedule);
    longTimer(() => undefined, -3, s.schedule);
    longTimer(() => undefined, Number.NaN, s.schedule);
    longTimer(() => undefined, Infinity, s.schedule);
    expect(s.asked).toEqual([250, 0, 0]);
  });

  it('stays cancelled between steps', () => {
    const s = steps();
    let runs = 0;
    const timer = longTimer(() => runs++, MAX_TIMEOUT_MS + 1, s.schedule);
    s.fire(); // first step done, second armed
    timer.cancel();
    s.fire();
    expect(runs).toBe(0);
  });
});
