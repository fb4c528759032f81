import { describe, expect, it } from 'vitest';
import { isMusubiError } from '../../core/errors.js';
import { dueRow, kvLogRow, parseRow, peekRow } from './sqlite-rows.js';

const peek = {
  priority: 2,
  seq: 3,
  attempt: 0,
  envelope: '{}',
  is_leased: 0,
  available_at: 1_700_000_000_000,
};

function corruption(schema: Parameters<typeof parseRow>[0], row: unknown): unknown {
  try {
    parseRow(schema, row, 'messages bob');
  } catch (err) {
    return err;
  }
  return undefined;
}

describe('row decoding', () => {
  it('accepts rows whose columns have the stored types', () => {
    expect(parseRow(peekRow, peek, 'messages bob')).toEqual(peek);
    expect(parseRow(dueRow, { due: null }, 'messages bob')).toEqual({ due: null });
    expect(parseRow(kvLogRow, { revision: 1, key: 'k', op: 'put', value: null }, 'kv_log')).toEqual({
      revision: 1,
      key: 'k',
      op: 'put',
      value: null,
    });
  });

  it.each([
    ['a fractional integer column', { ...peek, seq: 1.5 }],
    ['an integer beyond 2^53', { ...peek, available_at: 2 ** 60 }],
    ['a BigInt', { ...peek, seq: 3n }],
    ['text where an integer belongs', { ...peek, attempt: '0' }],
    ['a missing column', { seq: 3, attempt: 0, envelope: '{}', is_leased: 0 }],
    ['a number where text belongs', { ...peek, envelope: 7 }],
    ['no row at all', undefined],
  ])('refuses %s with STORE_CORRUPT naming where it was found', (_label, row) => {
    const err = corruption(peekRow, row);
    expect(isMusubiError(err, 'STORE_CORRUPT')).toBe(true);
    expect(String((err as Error).message)).toContain('messages bob');
  });

  it('checks columns that are not plain (an enum) with the schema', () => {
    const err = corruption(kvLogRow, { revision: 1, key: 'k', op: 'upsert', value: null });
    expect(isMusubiError(err, 'STORE_CORRUPT')).toBe(true);
  });
});
