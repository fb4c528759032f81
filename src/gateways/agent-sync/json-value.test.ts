import { describe, expect, it } from 'vitest';
import { JsonNumber, isJsonArray, isJsonObject, parseJson } from './json-value.js';

describe('parseJson', () => {
  it('keeps number tokens so ints and floats stay apart', () => {
    const parsed = parseJson('[1, 1.0, 1e2, -0, 12345678901234567890]');
    expect(parsed.ok).toBe(true);
    if (!parsed.ok || !isJsonArray(parsed.value)) return;
    const tokens = parsed.value.map((n) => (n instanceof JsonNumber ? [n.token, n.isInteger] : null));
    expect(tokens).toEqual([
      ['1', true],
      ['1.0', false],
      ['1e2', false],
      ['-0', true],
      ['12345678901234567890', true],
    ]);
  });

  it('keeps key order and lets a duplicate key keep its first position with the last value', () => {
    const parsed = parseJson('{"b": 1, "a": 2, "b": 3, "__proto__": 4}');
    if (!parsed.ok || !isJsonObject(parsed.value)) throw new Error('expected an object');
    expect([...parsed.value.keys()]).toEqual(['b', 'a', '__proto__']);
    const b = parsed.value.get('b');
    expect(b instanceof JsonNumber && b.token).toBe('3');
  });

  it('accepts JSON whitespace and lone surrogate escapes like Python', () => {
    expect(parseJson(' \t{"a": "\\ud800"}\r\n')).toEqual({ ok: true, value: new Map([['a', '\ud800']]) });
  });

  it('marks integers past 4300 digits and overflowing floats as out of range, and accepts the limits', () => {
    for (const text of [`[${'1'.repeat(4301)}]`, `-${'1'.repeat(4301)}`, '1e400', '{"a": -2.5E+999}']) {
      expect(parseJson(text)).toEqual({ ok: false, isNumberOutOfRange: true });
    }
    for (const text of [
      `-${'1'.repeat(4300)}`,
      '1.7976931348623157e308',
      '1e-400',
      `1.${'0'.repeat(5000)}`,
    ]) {
      expect(parseJson(text).ok).toBe(true);
    }
    expect(parseJson('[1,')).toEqual({ ok: false });
  });

  it('rejects what Python json.loads rejects (and NaN / Infinity)', () => {
    for (const text of [
      '',
      ' ',
      '{',
      '{"a":1,}',
      '[1 2]',
      '"a\u0001"',
      "'a'",
      'NaN',
      '-Infinity',
      '01',
      '1.',
      '{} x',
      '\ufeff{}',
    ]) {
      expect(parseJson(text), text).toEqual({ ok: false });
    }
  });

  it('refuses absurd nesting instead of overflowing the stack', () => {
    expect(parseJson('['.repeat(60_000) + ']'.repeat(60_000))).toEqual({ ok: false });
  });
});
