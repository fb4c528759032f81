import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../core/events.js';
import { lastEventCursor, readRecentEvents, type EventReader } from './event-tail.js';

/** An event log with the given cursors (gaps allowed), counting reads. */
function log(cursors: readonly number[]): EventReader & { reads: number } {
  const events: StoredEvent[] = cursors.map((cursor) => ({
    type: cursor % 2 === 0 ? 'task.changed' : 'agent.status_changed',
    data: {},
    cursor,
    at: cursor,
  }));
  const reader = {
    reads: 0,
    async readEvents(options: { after?: number; limit?: number } = {}) {
      reader.reads++;
      const after = options.after ?? 0;
      return events.filter((e) => e.cursor > after).slice(0, options.limit ?? Infinity);
    },
  };
  return reader;
}

describe('event tail', () => {
  it('finds the newest cursor of empty, short, long and gappy logs', async () => {
    expect(await lastEventCursor(log([]))).toBe(0);
    expect(await lastEventCursor(log([1]))).toBe(1);
    expect(await lastEventCursor(log([5, 6, 9]))).toBe(9);
    const long = log(Array.from({ length: 100_000 }, (_, i) => i + 1));
    expect(await lastEventCursor(long)).toBe(100_000);
    expect(long.reads).toBeLessThan(60);
    const gappy = log([3, 40, 41, 5000, 70_001, 70_003]);
    expect(await lastEventCursor(gappy)).toBe(70_003);
  });

  it('reads the newest matching events backwards, oldest first, within the scan limit', async () => {
    const reader = log(Array.from({ length: 3000 }, (_, i) => i + 1));
    const match = (e: StoredEvent): boolean => e.type === 'task.changed';
    const recent = await readRecentEvents(reader, { tail: 3000, match, limit: 3, scanLimit: 10_000 });
    expect(recent.map((e) => e.cursor)).toEqual([2996, 2998, 3000]);
    const bounded = await readRecentEvents(reader, { tail: 3000, match, limit: 10_000, scanLimit: 1200 });
    expect(bounded).toHaveLength(600);
    expect(bounded[0]?.cursor).toBe(1802);
    expect(await readRecentEvents(reader, { tail: 0, match, limit: 5, scanLimit: 100 })).toEqual([]);
  });
});
