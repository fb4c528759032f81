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
});
