import { describe, expect, it } from 'vitest';
import { anchoredScrollTop, virtualWindow } from './virtual-window.js';

const base = { count: 10_000, rowHeightPx: 30, scrollTopPx: 0, viewportPx: 600, overscan: 5 };

describe('dashboard virtual window', () => {
  it('builds the visible rows plus the overscan below at the top', () => {
    expect(virtualWindow(base)).toEqual({ start: 0, end: 26, offsetPx: 0, totalPx: 300_000 });
  });

  it('builds only a window around the scroll position in the middle of a long list', () => {
    const w = virtualWindow({ ...base, scrollTopPx: 150_015 });
    expect(w.start).toBe(4995);
    expect(w.end).toBe(5026);
    expect(w.offsetPx).toBe(4995 * 30);
    expect(w.end - w.start).toBeLessThanOrEqual(600 / 30 + 1 + 2 * 5);
  });

  it('stops at the end, and treats a position past the end (the list shrank) as the end', () => {
    expect(virtualWindow({ ...base, scrollTopPx: 300_000 - 600 }).end).toBe(10_000);
    const shrunk = virtualWindow({ ...base, count: 50, scrollTopPx: 99_999 });
    expect(shrunk).toEqual({ start: 25, end: 50, offsetPx: 750, totalPx: 1500 });
  });

  it('handles an empty list, a list shorter than the box and a box not laid out yet', () => {
    expect(virtualWindow({ ...base, count: 0 })).toEqual({ start: 0, end: 0, offsetPx: 0, totalPx: 0 });
    expect(virtualWindow({ ...base, count: 3 })).toMatchObject({ start: 0, end: 3 });
    expect(virtualWindow({ ...base, viewportPx: 0, rowHeightPx: 0 })).toMatchObject({ start: 0, end: 6 });
  });

  it('keeps the rows in view still when rows arrive above, except for a reader at the top', () => {
    expect(anchoredScrollTop(0, 3, 30)).toBe(0);
    expect(anchoredScrollTop(300, 3, 30)).toBe(390);
    expect(anchoredScrollTop(300, 0, 30)).toBe(300);
  });
});
