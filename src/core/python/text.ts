/**
 * Python-compatible text rules the yadon wire contract is written in (spec yadon.md): `int()` parsing,
 * `str.strip()`, `str()` of JSON values, and code-point slicing.
 */

// Characters Python's str.isspace() accepts (NOT U+FEFF, which JS's \s includes).
const PY_SPACE =
  '\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const LEADING_SPACE = new RegExp(`^[${PY_SPACE}]+`);
const TRAILING_SPACE = new RegExp(`[${PY_SPACE}]+$`);

/** `s.strip()` as Python does it (Python's whitespace, not JS's). */
export function pyStrip(text: string): string {
  return text.replace(LEADING_SPACE, '').replace(TRAILING_SPACE, '');
}

/**
 * Python `int(text)` for a string: surrounding whitespace, an optional sign and `_` between digits are
 * allowed. Returns undefined where Python raises ValueError (`"3.0"`, `"abc"`, `""`).
 */
export function parsePyInt(text: string): number | undefined {
  const m = /^([+-]?)(\d+(?:_\d+)*)$/.exec(pyStrip(text));
  if (m?.[2] === undefined) return undefined;
  const value = Number(m[2].replaceAll('_', ''));
  return m[1] === '-' ? -value : value;
}

/**
 * Python `int(value)` for a decoded JSON value: a number is truncated toward zero, `true`/`false` are
 * 1/0, a string is parsed by {@link parsePyInt}; anything else (null, objects, NaN-like) is undefined.
 */
export function pyIntOf(value: unknown): number | undefined {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number') return Number.isFinite(value) ? Math.trunc(value) : undefined;
  if (typeof value === 'string') {
    const n = parsePyInt(value);
    return n !== undefined && Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

/**
 * Python `str()` of a decoded JSON scalar: a string is itself, null is `None`, booleans are
 * `True`/`False`, numbers are decimal; arrays and objects fall back to their JSON text.
 */
export function pyStr(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return Number.isInteger(value) ? value.toFixed(0) : String(value);
  return JSON.stringify(value);
}

/** The first `max` code points of `text` (never splits a surrogate pair). */
export function firstCodePoints(text: string, max: number): string {
  let count = 0;
  let end = 0;
  for (const ch of text) {
    if (count === max) break;
    count++;
    end += ch.length;
  }
  return text.slice(0, end);
}

/** True when `text` has more than `max` code points. */
export function hasMoreCodePoints(text: string, max: number): boolean {
  if (text.length <= max) return false;
  return firstCodePoints(text, max).length < text.length;
}
