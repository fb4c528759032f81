import { describe, expect, it } from 'vitest';
import { clip, formatAgo, formatCount, formatDuration, formatUsd, hueOf, initialOf } from './text-format.js';

describe('dashboard text format', () => {
  it('formats times, counts and money for a glance', () => {
    expect(
      [0, 2_000, 45_000, 180_000, 7_200_000, 200_000_000].map((ago) => formatAgo(1e9 - ago, 1e9)),
    ).toEqual(['just now', 'just now', '45 s ago', '3 min ago', '2 h ago', '2 d ago']);
    expect([5_000, 185_000, 7_800_000].map(formatDuration)).toEqual(['5 s', '3 min 05 s', '2 h 10 min']);
    expect([950, 1_000, 1_250, 12_345, 4_200_000].map(formatCount)).toEqual([
      '950',
      '1k',
      '1.25k',
      '12.3k',
      '4.2M',
    ]);
    expect([0, 0.0042, 1.254].map(formatUsd)).toEqual(['$0', '$0.0042', '$1.25']);
  });

  it('handles any script: initials, clipping by code point, stable hues', () => {
    expect(initialOf('yadon-1')).toBe('Y');
    expect(initialOf('_ねこ')).toBe('ね');
    expect(initialOf('')).toBe('?');
    expect(clip('レビューお願いします', 5)).toBe('レビュー…');
    expect(clip('short', 10)).toBe('short');
    expect(hueOf('alice')).toBe(hueOf('alice'));
    expect(hueOf('alice')).toBeGreaterThanOrEqual(0);
    expect(hueOf('alice')).toBeLessThan(360);
  });
});
