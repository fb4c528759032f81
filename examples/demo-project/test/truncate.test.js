import assert from 'node:assert/strict';
import { test } from 'node:test';
import { truncate } from '../src/truncate.js';

test('truncate keeps short text unchanged', () => {
  assert.equal(truncate('short', 10), 'short');
});

test('truncate cuts long text to max characters with an ellipsis', () => {
  assert.equal(truncate('The quick brown fox', 10), 'The quick…');
});
