import { describe, expect, it } from 'vitest';
import type { Envelope } from '../../core/envelope.js';
import { isMusubiError } from '../../core/errors.js';
import { EnvelopeCache } from './envelope-cache.js';
import { decodeEnvelope } from './sqlite-rows.js';

const envelope: Envelope = {
  id: '01KB7Z4Y2X3W4V5T6S7R8Q9P0N',
  from: 'alice',
  to: 'bob',
  type: 'note',
  priority: 'normal',
  headers: { trace: 'abc' },
  body: 'hello',
  createdAt: 1_700_000_000_000,
  attempt: 0,
  thread: 't-1',
};
const text = JSON.stringify(envelope);

describe('EnvelopeCache', () => {
  it('answers a remembered row exactly as decoding the row would, with the live attempt', () => {
    const cache = new EnvelopeCache();
    cache.remember(7, text, envelope);
    const hit = cache.decode(7, text, 2, 'test');
    const decoded = decodeEnvelope(text, 2, 'test');
    expect(hit).toStrictEqual(decoded);
    expect(Object.keys(hit)).toEqual(Object.keys(decoded));
  });

  it('does not freeze or share the caller’s headers', () => {
    const headers = { trace: 'abc' };
    const cache = new EnvelopeCache();
    cache.remember(1, text, { ...envelope, headers });
    expect(Object.isFrozen(headers)).toBe(false);
    expect(cache.decode(1, text, 1, 'test').headers).not.toBe(headers);
  });

  it('decodes and validates again when the stored text is not the remembered one', () => {
    const cache = new EnvelopeCache();
    cache.remember(3, text, envelope);
    const other = JSON.stringify({ ...envelope, body: 'changed by hand' });
    expect(cache.decode(3, other, 1, 'test').body).toBe('changed by hand');
    let caught: unknown;
    try {
      cache.decode(3, '{"id": 42', 1, 'row 3');
    } catch (err) {
      caught = err;
    }
    expect(isMusubiError(caught) && caught.code).toBe('STORE_CORRUPT');
  });

  it('hands out copies: changing one envelope’s headers changes no other', () => {
    const cache = new EnvelopeCache();
    cache.remember(1, text, envelope);
    const first = cache.decode(1, text, 1, 'test');
    (first.headers as Record<string, string>)['trace'] = 'changed';
    expect(cache.decode(1, text, 2, 'test').headers).toEqual({ trace: 'abc' });
  });

  it('keeps at most its capacity, dropping the oldest entry, and forgets deleted rows', () => {
    const cache = new EnvelopeCache({ capacity: 2 });
    cache.remember(1, text, envelope);
    cache.remember(2, text, envelope);
    cache.remember(3, text, envelope);
    expect(cache.seqs()).toEqual([2, 3]);
    cache.forget(2);
    expect(cache.seqs()).toEqual([3]);
  });

  it('bounds the text it holds and never holds a large row', () => {
    const cache = new EnvelopeCache({ maxChars: text.length * 2 });
    for (let seq = 1; seq <= 5; seq++) cache.remember(seq, text, envelope);
    expect(cache.seqs()).toEqual([4, 5]);
    const big = { ...envelope, body: 'x'.repeat(20_000) };
    cache.remember(6, JSON.stringify(big), big);
    expect(cache.seqs()).toEqual([4, 5]);
    expect(cache.decode(6, JSON.stringify(big), 1, 'row 6').body).toHaveLength(20_000);
    expect(cache.seqs()).toEqual([4, 5]);
  });
});
