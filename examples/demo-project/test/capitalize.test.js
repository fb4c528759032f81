import assert from 'node:assert/strict';
import { test } from 'node:test';
import { capitalize } from '../src/capitalize.js';

test('capitalize upper-cases the first letter', () => {
  assert.equal(capitalize('hello world'), 'Hello world');
});

test('capitalize leaves an empty string alone', () => {
  assert.equal(capitalize(''), '');
});
