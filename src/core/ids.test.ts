import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../test/fakes/fake-clock.js';
import { createIdGenerator } from './ids.js';

describe('ids', () => {
  it('produces strictly increasing ids within one millisecond', () => {
    const ids = createIdGenerator(new FakeClock());
    const list = Array.from({ length: 10_000 }, () => ids.next());
    expect(new Set(list).size).toBe(list.length);
    expect([...list].sort()).toEqual(list);
  });

  it('sorts ids by time across milliseconds', () => {
    const clock = new FakeClock();
    const ids = createIdGenerator(clock);
    const a = ids.next();
    clock.advance(1);
    const b = ids.next();
    expect(a < b).toBe(true);
    expect(a).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
  });

  it('draws a fresh random part in each millisecond, across many refills of the random pool', () => {
    const clock = new FakeClock();
    const ids = createIdGenerator(clock);
    const randomParts = Array.from({ length: 2_000 }, () => {
      clock.advance(1);
      return ids.next().slice(10);
    });
    expect(new Set(randomParts).size).toBe(randomParts.length);
    const digits = new Set(randomParts.join(''));
    expect(digits.size).toBe(32);
  });
});
