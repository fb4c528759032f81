import { JsonNumber, type JsonValue } from './json-value.js';
import { pyFloatRepr } from './py-float.js';

/** Pre-rendered JSON text inserted verbatim (stored mailbox items, discussion entries). */
export class RawJson {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** What {@link pyJson} renders: parsed values, plain numbers, raw fragments, arrays and records. */
export type PyJsonInput =
  | JsonValue
  | number
  | RawJson
  | readonly PyJsonInput[]
  | ReadonlyMap<string, PyJsonInput>
  | { readonly [key: string]: PyJsonInput | undefined };

/** Options of {@link pyJson}. */
export interface PyJsonOptions {
  /** Escape every non-ASCII character as `\uXXXX` (Python's default); otherwise emit it raw. */
  readonly ensureAscii?: boolean;
  /** Pretty-print with this many spaces per level (Python `indent=`), using `,` + newline. */
  readonly indent?: number;
}

// eslint-disable-next-line no-control-regex -- JSON strings must escape the C0 control characters
const SIMPLE_RAW = /["\\\u0000-\u001f\ud800-\udfff]/;
const SIMPLE_ASCII = /[^\u0020-\u007e]|["\\]/;
const SHORT: Readonly<Record<number, string>> = {
  0x22: '\\"',
  0x5c: '\\\\',
  0x0a: '\\n',
  0x0d: '\\r',
  0x09: '\\t',
  0x08: '\\b',
  0x0c: '\\f',
};

function u(code: number): string {
  return `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * A JSON string literal as Python's json encoder writes it. Without `ensureAscii`, lone UTF-16
 * surrogates are still escaped so the output is always valid UTF-8 (Python would fail to encode them).
 */
export function pyJsonString(s: string, ensureAscii: boolean): string {
  if (!(ensureAscii ? SIMPLE_ASCII : SIMPLE_RAW).test(s)) return `"${s}"`;
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i);
    const short = SHORT[code];
    if (short !== undefined) out += short;
    else if (code < 0x20) out += u(code);
    else if (ensureAscii) out += code > 0x7e ? u(code) : s.charAt(i);
    else if (code >= 0xd800 && code <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        out += s.slice(i, i + 2);
        i++;
      } else out += u(code);
    } else if (code >= 0xdc00 && code <= 0xdfff) out += u(code);
    else out += s.charAt(i);
  }
  return `${out}"`;
}

function floatJson(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  return pyFloatRepr(x);
}

function numberJson(n: JsonNumber | number): string {
  if (typeof n === 'number') return Number.isInteger(n) ? String(n) : floatJson(n);
  return n.isInteger ? BigInt(n.token).toString() : floatJson(n.value);
}

function render(v: PyJsonInput, ascii: boolean, indent: number | undefined, depth: number): string {
  if (typeof v === 'string') return pyJsonString(v, ascii);
  if (v === null) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number' || v instanceof JsonNumber) return numberJson(v);
  if (v instanceof RawJson) return v.text;
  let parts: string[];
  let open: string;
  let close: string;
  if (Array.isArray(v)) {
    parts = v.map((item: PyJsonInput) => render(item, ascii, indent, depth + 1));
    [open, close] = ['[', ']'];
  } else {
    const entries: Iterable<[string, PyJsonInput | undefined]> =
      v instanceof Map ? v.entries() : Object.entries(v);
    parts = [];
    for (const [key, value] of entries) {
      if (value !== undefined)
        parts.push(`${pyJsonString(key, ascii)}: ${render(value, ascii, indent, depth + 1)}`);
    }
    [open, close] = ['{', '}'];
  }
  if (parts.length === 0) return open + close;
  if (indent === undefined) return open + parts.join(', ') + close;
  const pad = '\n' + ' '.repeat(indent * (depth + 1));
  return open + pad + parts.join(',' + pad) + '\n' + ' '.repeat(indent * depth) + close;
}

/**
 * Serialises like Python's `json.dumps`: `", "` and `": "` separators (`","` + newline when indented),
 * keys in insertion order, floats as `repr(float)`. `ensureAscii` defaults to false (raw UTF-8).
 */
export function pyJson(value: PyJsonInput, options: PyJsonOptions = {}): string {
  return render(value, options.ensureAscii ?? false, options.indent, 0);
}
