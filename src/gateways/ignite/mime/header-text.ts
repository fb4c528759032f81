/**
 * Text rules shared by every IGNITE message reader and writer (spec/ignite.md 2.3, 2.4): line-break
 * characters, newline normalisation and Python-compatible whitespace stripping.
 */

/**
 * Characters that break a header line (Python `str.splitlines()` boundaries): CR, LF, VT, FF, FS, GS,
 * RS, NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR. NUL is refused too: no header may carry it.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the purpose
const LINE_BREAK = /[\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029\0]/;

/** The header-block line splitter after CRLF/CR were turned into LF. */
// eslint-disable-next-line no-control-regex -- matching control characters is the purpose
const SPLITLINES = /[\n\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;

// Python's str.strip() whitespace set (str.isspace), which differs from String.prototype.trim():
// it includes FS..US and NEL, and excludes the BOM.
const PY_SPACE =
  '\t\n\v\f\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000';

/** True when `value` holds a character that would start a new header line (or a NUL). */
export function hasLineBreak(value: string): boolean {
  return LINE_BREAK.test(value);
}

/** Converts CRLF and lone CR to LF. */
export function toLf(text: string): string {
  return text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text;
}

/** Splits like Python `str.splitlines()` on text that has no CR left (a trailing break adds no line). */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split(SPLITLINES);
  if (SPLITLINES.test(text.charAt(text.length - 1))) lines.pop();
  return lines;
}

/** Python `str.strip()`: removes Unicode whitespace (Python's definition) from both ends. */
export function pyStrip(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && PY_SPACE.includes(text.charAt(start))) start++;
  while (end > start && PY_SPACE.includes(text.charAt(end - 1))) end--;
  return text.slice(start, end);
}
