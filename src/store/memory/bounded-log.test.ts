import { describe, expect, it } from 'vitest';
import { BoundedLog } from './bounded-log.js';

function logOf(retention: number, count: number): BoundedLog<{ position: number }> {
  const log = new BoundedLog<{ position: number }>({ positionOf: (e) => e.position, retention });
  for (let position = 1; position <= count; position++) log.append({ position });
  return log;
}

function positions(log: BoundedLog<{ position: number }>, after: number, limit = Infinity): number[] {
  return log.readAfter(after, { limit }).items.map((e) => e.position);
}

describe('BoundedLog', () => {
  it('keeps exactly the newest entries across many compactions', () => {
    const log = logOf(10, 25_003);
    expect(positions(log, 0)).toEqual(Array.from({ length: 10 }, (_, i) => 24_994 + i));
    expect(log.last()?.position).toBe(25_003);
  });

  it('reads after a position, with a limit and a filter, reporting the last position examined', () => {
    const log = logOf(100, 5_000);
    expect(positions(log, 4_990, 3)).toEqual([4_991, 4_992, 4_993]);
    expect(log.readAfter(4_990, { limit: 2, accept: (e) => e.position % 2 === 0 })).toEqual({
      items: [{ position: 4_992 }, { position: 4_994 }],
      cursor: 4_994,
    });
    expect(log.readAfter(5_000, { limit: 10 })).toEqual({ items: [], cursor: 5_000 });
  });

  it('keeps everything while under its retention', () => {
    expect(positions(logOf(100_000, 3_000), 0)).toHaveLength(3_000);
    expect(positions(logOf(5, 0), 0)).toEqual([]);
  });
});
