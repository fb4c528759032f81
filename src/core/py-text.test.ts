import { describe, expect, it } from 'vitest';
import { firstCodePoints, hasMoreCodePoints, parsePyInt, pyIntOf, pyStr, pyStrip } from './py-text.js';

describe('py-text', () => {
  it('strips what Python str.strip() strips and keeps U+FEFF', () => {
    expect(pyStrip('\u001c\u0085\u00a0\u3000 x \t\n')).toBe('x');
    expect(pyStrip('\ufeffx')).toBe('\ufeffx');
  });

  it('parses integers like Python int()', () => {
    expect(parsePyInt(' 3 ')).toBe(3);
    expect(parsePyInt('+7')).toBe(7);
    expect(parsePyInt('-2')).toBe(-2);
    expect(parsePyInt('1_000')).toBe(1000);
    expect(parsePyInt('007')).toBe(7);
    for (const bad of ['3.0', 'abc', '', '_1', '1__0', '1_']) expect(parsePyInt(bad)).toBeUndefined();
  });

  it('converts JSON values like Python int()', () => {
    expect(pyIntOf(2.9)).toBe(2);
    expect(pyIntOf(-2.9)).toBe(-2);
    expect(pyIntOf(true)).toBe(1);
    expect(pyIntOf('2500')).toBe(2500);
    expect(pyIntOf(' 2_500 ')).toBe(2500);
    for (const bad of ['abc', null, {}, [1], '2.5']) expect(pyIntOf(bad)).toBeUndefined();
  });

  it('renders scalars as Python str() does', () => {
    expect([pyStr('a'), pyStr(null), pyStr(true), pyStr(false), pyStr(3), pyStr(1.5)]).toEqual([
      'a',
      'None',
      'True',
      'False',
      '3',
      '1.5',
    ]);
  });

  it('counts and slices code points, never halving a surrogate pair', () => {
    expect(firstCodePoints('😀😀😀', 2)).toBe('😀😀');
    expect(hasMoreCodePoints('😀😀', 2)).toBe(false);
    expect(hasMoreCodePoints('😀😀😀', 2)).toBe(true);
  });
});
