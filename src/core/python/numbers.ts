/**
 * Python's number rules: `int()` and `float()` of text, the int string-conversion limit and
 * `repr(float)`.
 */
import { pyStrip } from './text.js';

/**
 * Python refuses int strings longer than this (`sys.int_info.default_max_str_digits`), in `int()` and
 * in `json.loads` alike.
 */
export const MAX_INT_DIGITS = 4300;

// int() and float() first turn non-ASCII whitespace into ' ' and every Unicode decimal digit into its
// ASCII digit, then trim C's isspace() set. So U+0085 and U+3000 may surround a number, but U+001C..U+001F
// (ASCII, yet not C whitespace) may not, although str.strip() removes them.
const NUMBER_SPACE =
  '\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000';
const NON_ASCII_DIGIT = /(?![0-9])\p{Nd}/gu;
const DIGIT = /^\p{Nd}$/u;
const INT = /^[+-]?[0-9](?:_?[0-9])*$/;
const DIGITS = '[0-9](?:_?[0-9])*';
const FLOAT = new RegExp(`^[+-]?(?:${DIGITS}(?:\\.(?:${DIGITS})?)?|\\.${DIGITS})(?:[eE][+-]?${DIGITS})?$`);
const FLOAT_WORD = /^([+-]?)(inf|infinity|nan)$/i;

// Unicode encodes every decimal digit set as ten consecutive code points 0..9, so a digit's value is
// its distance from the start of its run of digits, modulo 10 (some sets sit back to back).
function digitValue(ch: string): string {
  let code = ch.codePointAt(0) ?? 0;
  let offset = 0;
  while (DIGIT.test(String.fromCodePoint(code - 1))) {
    code--;
    offset++;
  }
  return String(offset % 10);
}

function numberText(text: string): string {
  return pyStrip(text, NUMBER_SPACE).replace(NON_ASCII_DIGIT, digitValue);
}

/**
 * Python `int(text)`: surrounding whitespace, an optional sign, `_` between digits and any Unicode
 * decimal digits are allowed. Returns undefined where Python raises ValueError (`"3.0"`, `"abc"`, `""`,
 * more than {@link MAX_INT_DIGITS} digits). Values past 2^53 lose precision.
 */
export function parsePyInt(text: string): number | undefined {
  const s = numberText(text);
  if (!INT.test(s) || s.replace(/[+_-]/g, '').length > MAX_INT_DIGITS) return undefined;
  return Number(s.replaceAll('_', '')) + 0; // `+ 0` turns int('-0') into 0, as Python has no negative zero int
}

/**
 * Python `float(text)`: like {@link parsePyInt} plus a fraction, an exponent and the words `inf`,
 * `infinity` and `nan` (any case); an overflowing literal is an infinity. Undefined where Python raises.
 */
export function parsePyFloat(text: string): number | undefined {
  const s = numberText(text);
  const word = FLOAT_WORD.exec(s);
  if (word !== null) {
    const value = word[2]?.toLowerCase() === 'nan' ? NaN : Infinity;
    return word[1] === '-' ? -value : value;
  }
  return FLOAT.test(s) ? Number(s.replaceAll('_', '')) : undefined;
}

/**
 * Python `int(value)` for a decoded JSON value: a number is truncated toward zero, `true`/`false` are
 * 1/0, a string is parsed by {@link parsePyInt}; anything else (null, objects, NaN-like) is undefined.
 */
export function pyIntOf(value: unknown): number | undefined {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number') return Number.isFinite(value) ? Math.trunc(value) + 0 : undefined;
  if (typeof value === 'string') {
    const n = parsePyInt(value);
    return n !== undefined && Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

/**
 * Renders a float exactly like Python's `repr(float)`: the shortest round-trip digits, exponent form
 * when the decimal exponent is < -4 or >= 16 (`1e+16`, `1e-05`), `.0` on integral values, and
 * `inf` / `-inf` / `nan` for the non-finite ones.
 */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const magnitude = Math.abs(x);
  if (magnitude >= 1e-4 && magnitude < 1e16) {
    // JS prints this range in fixed notation with the same shortest digits as repr (timestamps land here).
    const fixed = String(x);
    return fixed.includes('.') ? fixed : `${fixed}.0`;
  }
  // toExponential() without an argument yields the shortest digits that round-trip, as repr does.
  const [mantissa = '', expText = '0'] = x.toExponential().split('e');
  const exp = Number(expText);
  const sign = x < 0 ? '-' : '';
  const digits = mantissa.replace('-', '').replace('.', '');
  if (exp < -4 || exp >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  if (digits.length <= exp + 1) return `${sign}${digits}${'0'.repeat(exp + 1 - digits.length)}.0`;
  return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
}
