import { describe, expect, it } from 'vitest';
import { parseTapCounts } from './sample-tests.js';

describe('parseTapCounts', () => {
  it('reads the closing totals of node --test TAP output', () => {
    const tap = [
      'TAP version 13',
      'ok 1 - a',
      'not ok 2 - b',
      '1..2',
      '# tests 2',
      '# pass 1',
      '# fail 1',
    ].join('\n');
    expect(parseTapCounts(tap)).toEqual({ tests: 2, pass: 1, fail: 1 });
  });

  it('takes the last totals when output holds several, and nothing when totals are missing', () => {
    expect(parseTapCounts('# tests 1\n# pass 1\n# fail 0\n# tests 5\n# pass 5\n# fail 0')).toEqual({
      tests: 5,
      pass: 5,
      fail: 0,
    });
    expect(parseTapCounts('echo: run node --test\n# tests 3')).toBeUndefined();
  });
});
