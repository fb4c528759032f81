/**
 * Text rules shared by every IGNITE message reader and writer (spec/ignite.md 2.3, 2.4): line-break
 * characters and newline normalisation.
 */

/**
 * Characters that break a header line (Python `str.splitlines()` boundaries): CR, LF, VT, FF, FS, GS,
 * RS, NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR. NUL is refused too: no header may carry it.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the purpose
const LINE_BREAK = /[\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029\0]/;

/** True when `value` holds a character that would start a new header line (or a NUL). */
export function hasLineBreak(value: string): boolean {
  return LINE_BREAK.test(value);
}

/** Converts CRLF and lone CR to LF. */
export function toLf(text: string): string {
  return text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text;
}
