import assert from 'node:assert/strict';
import { test } from 'node:test';
import { slugify } from '../src/slugify.js';

test('slugify lower-cases and joins words with dashes', () => {
  assert.equal(slugify('Hello, World!'), 'hello-world');
});

test('slugify drops accents and trims dashes', () => {
  assert.equal(slugify('  Crème Brûlée  '), 'creme-brulee');
});
