/**
 * Python's `str` rules the wire contracts are written in: `str.strip()`, `str.splitlines()` and
 * counting in code points (Python's `len` and slicing), which JS's `trim()`, `split` and UTF-16
 * indexes each get subtly wrong.
 */

// The characters Python's str.isspace() accepts. It differs from JS's `\s`: U+001C..U+001F and U+0085
// are in, U+FEFF is out.
const PY_SPACE =
  '\t\n\v\f\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000';

// str.splitlines() boundaries: CRLF as one, then LF, CR, VT, FF, FS, GS, RS, NEL, U+2028, U+2029.
// eslint-disable-next-line no-control-regex -- matching control characters is the purpose
const LINE_BOUNDARY = /\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]/;

/**
 * `text.strip(chars)` as Python does it: removes any of `chars` (BMP characters) from both ends, by
 * default Python's whitespace (not JS's).
 */
export function pyStrip(text: string, chars = PY_SPACE): string {
  // A scan from each end, not `/\s+$/`: that regex is quadratic on long inner runs of spaces.
  let start = 0;
  let end = text.length;
  while (start < end && chars.includes(text.charAt(start))) start++;
  while (end > start && chars.includes(text.charAt(end - 1))) end--;
  return text.slice(start, end);
}

/** `text.splitlines()`: split at every Python line boundary; a final boundary adds no empty line. */
export function pySplitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split(LINE_BOUNDARY);
  if (lines.at(-1) === '') lines.pop();
  return lines;
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
