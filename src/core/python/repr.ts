/**
 * How Python shows a value (`str()`, `repr()`, a tuple, the type name in its error texts) and judges
 * it (`bool()`). Every function takes a parsed `JsonValue` (number tokens keep int/float apart)
 * or a plain JS value (`JSON.parse` output: an integral number counts as an int, a Map or record as a
 * dict, undefined as None).
 */
import { JsonNumber } from './json-loads.js';
import { pyFloatRepr } from './numbers.js';

// Python's str.isprintable() is false for these categories (space excepted).
const NON_PRINTABLE = /[\p{C}\p{Z}]/u;

/**
 * A number as Python's `str()` shows it: an int token's digits, a float token like `repr(float)`; a JS
 * number that is integral as an int, any other like `repr(float)`. Past 2^53 a JS number no longer
 * tells an int from a float: it keeps JSON.stringify's text, which from 1e21 on is also `repr(float)`.
 */
export function pyNumber(n: JsonNumber | number): string {
  if (n instanceof JsonNumber) return n.isInteger ? BigInt(n.token).toString() : pyFloatRepr(n.value);
  return Number.isInteger(n) ? String(n) : pyFloatRepr(n);
}

function hex(code: number, width: number): string {
  return code.toString(16).padStart(width, '0');
}

function escapeCodePoint(ch: string, code: number): string {
  if (code === 0x5c) return '\\\\';
  if (code === 0x0a) return '\\n';
  if (code === 0x0d) return '\\r';
  if (code === 0x09) return '\\t';
  if (code < 0x20 || code === 0x7f) return `\\x${hex(code, 2)}`;
  if (code < 0x7f || !NON_PRINTABLE.test(ch)) return ch;
  if (code <= 0xff) return `\\x${hex(code, 2)}`;
  if (code <= 0xffff) return `\\u${hex(code, 4)}`;
  return `\\U${hex(code, 8)}`;
}

/** A string as Python's `repr()` quotes it. */
export function pyReprString(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const code = ch.codePointAt(0) ?? 0;
    out += ch === quote ? `\\${quote}` : escapeCodePoint(ch, code);
  }
  return out + quote;
}

// Own members of a record, skipping undefined ones as JSON.stringify does.
function recordEntries(v: object): Array<[string, unknown]> {
  return Object.entries(v).filter(([, value]) => value !== undefined);
}

/**
 * Python `repr()`: strings quoted, `None`/`True`/`False`, numbers as {@link pyNumber}, lists and dicts
 * of reprs (`[1, 'a']`, `{'k': None}`). A value JSON has no counterpart for (bigint, symbol, function)
 * falls back to `String()`.
 */
export function pyRepr(v: unknown): string {
  if (typeof v === 'string') return pyReprString(v);
  if (v === null || v === undefined) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'number' || v instanceof JsonNumber) return pyNumber(v);
  if (Array.isArray(v)) return `[${v.map((item: unknown) => pyRepr(item)).join(', ')}]`;
  if (typeof v !== 'object') return String(v);
  const entries: Array<[unknown, unknown]> = v instanceof Map ? [...v.entries()] : recordEntries(v);
  return `{${entries.map(([key, value]) => `${pyRepr(key)}: ${pyRepr(value)}`).join(', ')}}`;
}

/** Python `str()`: a string is itself, anything else as {@link pyRepr}. */
export function pyStr(v: unknown): string {
  return typeof v === 'string' ? v : pyRepr(v);
}

/** A tuple of names as Python prints it: `('a', 'b')`, `('solo',)`, `()`. */
export function pyTuple(names: readonly string[]): string {
  const items = names.map(pyReprString);
  return items.length === 1 ? `(${items[0]},)` : `(${items.join(', ')})`;
}

/** Python's type name of a value, as used in its TypeError texts (`str`, `int`, `list`, `dict`, ...). */
export function pyTypeName(v: unknown): string {
  if (typeof v === 'string') return 'str';
  if (v === null || v === undefined) return 'NoneType';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (v instanceof JsonNumber) return v.isInteger ? 'int' : 'float';
  if (Array.isArray(v)) return 'list';
  return 'dict';
}

/** Python truthiness (`bool(v)`): None, False, zero, and empty strings, lists and dicts are false. */
export function isTruthy(v: unknown): boolean {
  if (v === null || v === undefined || typeof v === 'boolean') return v === true;
  if (typeof v === 'string') return v.length > 0;
  // NaN is true in Python, unlike JS's Boolean(NaN).
  if (typeof v === 'number') return v !== 0;
  if (v instanceof JsonNumber) return v.isInteger ? BigInt(v.token) !== 0n : v.value !== 0;
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof Map) return v.size > 0;
  return typeof v === 'object' ? recordEntries(v).length > 0 : Boolean(v);
}
