import { describe, expect, it } from 'vitest';
import { viewFromHash } from './view-tabs.js';

describe('dashboard view tabs', () => {
  it('reads the view from the location hash: the overview when empty, none for other fragments', () => {
    expect(['#timeline', '#runs', 'inbox', '#overview', '', '#nope', '#main'].map(viewFromHash)).toEqual([
      'timeline',
      'runs',
      'inbox',
      'overview',
      'overview',
      undefined,
      undefined,
    ]);
  });
});
