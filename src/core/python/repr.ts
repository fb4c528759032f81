import { isJsonArray, isJsonObject, type JsonNumber, type JsonValue } from './json-value.js';
import { pyFloatRepr } from './py-float.js';

// Python's str.isprintable() is false for these categories (space excepted).
const NON_PRINTABLE = /[\p{C}\p{Z}]/u;

/** A number as Python's `str()` shows it: an int token's digits, a float token like `repr(float)`. */
export function pyNumber(n: JsonNumber): string {
  return n.isInteger ? BigInt(n.token).toString() : pyFloatRepr(n.value);
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

/** Python `repr()` of a parsed JSON value (strings quoted, `None`/`True`/`False`, lists and dicts). */
export function pyRepr(v: JsonValue): string {
  return typeof v === 'string' ? pyReprString(v) : pyStr(v);
}

/** Python `str()` of a parsed JSON value: a string is itself, everything else as {@link pyRepr}. */
export function pyStr(v: JsonValue): string {
  if (typeof v === 'string') return v;
  if (v === null) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (isJsonArray(v)) return `[${v.map(pyRepr).join(', ')}]`;
  if (isJsonObject(v)) {
    const pairs = [...v].map(([key, value]) => `${pyReprString(key)}: ${pyRepr(value)}`);
    return `{${pairs.join(', ')}}`;
  }
  return pyNumber(v);
}

/** A tuple of names as Python prints it: `('a', 'b')`, `('solo',)`, `()`. */
export function pyTuple(names: readonly string[]): string {
  const items = names.map(pyReprString);
  return items.length === 1 ? `(${items[0]},)` : `(${items.join(', ')})`;
}

/** Python's type name of a value, as used in its TypeError texts (`str`, `int`, `list`, `dict`, ...). */
export function pyTypeName(v: JsonValue): string {
  if (typeof v === 'string') return 'str';
  if (v === null) return 'NoneType';
  if (typeof v === 'boolean') return 'bool';
  if (isJsonArray(v)) return 'list';
  if (isJsonObject(v)) return 'dict';
  return v.isInteger ? 'int' : 'float';
}
