import { describe, expect, it } from 'vitest';
import {
  cumulativeSeries,
  edgeAnchor,
  linearScale,
  niceCeil,
  tickLabel,
  timeTicks,
  valueTicks,
} from './chart-scale.js';

describe('dashboard chart scales', () => {
  it('maps values linearly, also onto a reversed range (SVG y grows downwards)', () => {
    const x = linearScale([100, 200], [0, 500]);
    expect([x(100), x(150), x(200)]).toEqual([0, 250, 500]);
    const y = linearScale([0, 10], [80, 0]);
    expect([y(0), y(5), y(10)]).toEqual([80, 40, 0]);
    expect(linearScale([5, 5], [10, 20])(5)).toBe(10);
  });

  it('rounds chart tops up to 1, 2 or 5 and spaces value ticks evenly', () => {
    expect([0, 0.0042, 0.3, 3, 7.2, 12, 99, 101].map(niceCeil)).toEqual([1, 0.005, 0.5, 5, 10, 20, 100, 200]);
    expect(valueTicks(7.2)).toEqual([0, 2, 4, 6, 8]);
    expect(valueTicks(0.3, 2)).toEqual([0, 0.2, 0.4]);
    expect(valueTicks(50_000)).toEqual([0, 20_000, 40_000, 60_000]);
    expect(valueTicks(0)).toEqual([0, 1]);
  });

  it('puts time ticks on whole steps, no more than asked', () => {
    expect(timeTicks(0, 60_000, 6)).toEqual([0, 15_000, 30_000, 45_000, 60_000]);
    expect(timeTicks(61_000, 3_700_000, 6)).toEqual([900_000, 1_800_000, 2_700_000, 3_600_000]);
    expect(timeTicks(0, 0, 5)).toEqual([]);
    expect(timeTicks(0, 10 * 86_400_000, 3).length).toBeLessThanOrEqual(4);
    expect([0, 100, 195].map((x) => edgeAnchor(x, 200))).toEqual(['start', 'middle', 'end']);
    const clock = (): string => '09:03:07';
    expect([tickLabel(0, 15_000, clock), tickLabel(0, 60_000, clock)]).toEqual(['09:03:07', '09:03']);
  });

  it('adds up each key’s values over time from 0, largest total first', () => {
    const series = cumulativeSeries([
      { key: 'alice', startedAt: 10, at: 20, value: 5 },
      { key: 'bob', startedAt: 0, at: 50, value: 100 },
      { key: 'alice', startedAt: 30, at: 40, value: 2 },
      { key: undefined, startedAt: 0, at: 1, value: 1000 },
    ]);
    expect(series).toEqual([
      {
        key: 'bob',
        total: 100,
        points: [
          { at: 0, value: 0 },
          { at: 50, value: 100 },
        ],
      },
      {
        key: 'alice',
        total: 7,
        points: [
          { at: 10, value: 0 },
          { at: 20, value: 5 },
          { at: 40, value: 7 },
        ],
      },
    ]);
  });
});
