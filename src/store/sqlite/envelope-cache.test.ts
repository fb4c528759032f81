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
  it('answers a remembered envelope exactly as decoding its stored JSON would, with the live attempt', () => {
    const cache = new EnvelopeCache();
    cache.remember(7, envelope);
    const hit = cache.stored(7, 2);
    const decoded = decodeEnvelope(text, 2, 'test');
    expect(hit).toStrictEqual(decoded);
    expect(Object.keys(hit ?? {})).toEqual(Object.keys(decoded));
  });

  it('hands out the frozen stored envelope for attempt 0 and a copy otherwise; the caller’s object stays its own', () => {
    const headers = { trace: 'abc' };
    const cache = new EnvelopeCache();
    cache.remember(1, { ...envelope, headers });
    expect(Object.isFrozen(headers)).toBe(false);
    const first = cache.stored(1, 0);
    expect(Object.isFrozen(first) && Object.isFrozen(first?.headers)).toBe(true);
    expect(first?.headers).not.toBe(headers);
    const copy = cache.stored(1, 1);
    (copy?.headers as Record<string, string>)['trace'] = 'changed';
    expect(cache.stored(1, 2)?.headers).toEqual({ trace: 'abc' });
  });

  it('answers a row holding its envelope only while the row still holds the text it was decoded from', () => {
    const cache = new EnvelopeCache();
    expect(cache.decode(3, text, 1, 'test').body).toBe('hello');
    const other = JSON.stringify({ ...envelope, body: 'changed by hand' });
    expect(cache.decode(3, other, 1, 'test').body).toBe('changed by hand');
    let caught: unknown;
    try {
      cache.decode(3, '{"id": 42', 1, 'row 3');
    } catch (err) {
      caught = err;
    }
    expect(isMusubiError(caught) && caught.code).toBe('STORE_CORRUPT');
    // A row's decoded text never stands in for a trusted envelope.
    expect(cache.stored(3, 0)).toBeUndefined();
  });

  it('keeps at most its capacity, dropping the oldest entry, and forgets rows that left', () => {
    const cache = new EnvelopeCache({ capacity: 2 });
    cache.remember(1, envelope);
    cache.remember(2, envelope);
    cache.remember(3, envelope);
    expect(cache.seqs()).toEqual([2, 3]);
    cache.forget(2);
    expect(cache.seqs()).toEqual([3]);
  });

  it('bounds the text it holds and never holds a large envelope', () => {
    const cache = new EnvelopeCache({ maxChars: text.length * 2 });
    for (let seq = 1; seq <= 5; seq++) cache.decode(seq, text, 0, 'test');
    expect(cache.seqs()).toEqual([4, 5]);
    const big = { ...envelope, body: 'x'.repeat(20_000) };
    cache.remember(6, big);
    expect(cache.seqs()).toEqual([4, 5]);
    expect(cache.decode(7, JSON.stringify(big), 1, 'row 7').body).toHaveLength(20_000);
    expect(cache.seqs()).toEqual([4, 5]);
  });
});
