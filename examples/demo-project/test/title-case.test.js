import assert from 'node:assert/strict';
import { test } from 'node:test';
import { titleCase } from '../src/title-case.js';

test('titleCase capitalises every word', () => {
  assert.equal(titleCase('the quick brown fox'), 'The Quick Brown Fox');
});

test('titleCase lower-cases the rest of each word', () => {
  assert.equal(titleCase('hELLO wORLD'), 'Hello World');
});
