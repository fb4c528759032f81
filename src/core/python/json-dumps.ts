/**
 * JSON encoding as Python's `json.dumps` writes it, byte for byte: separators, key order, string
 * escapes and number forms, for parsed values and plain JS values alike.
 */
import { JsonNumber, type JsonValue } from './json-loads.js';
import { pyNumber } from './repr.js';

/** Pre-rendered JSON text inserted verbatim (stored mailbox items, discussion entries). */
export class RawJson {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/**
 * The values {@link pyJson} is meant for: parsed values, plain numbers, raw fragments, arrays and
 * records. Builders declare it so the compiler checks what they put in; pyJson itself accepts `unknown`
 * because some wires hand it `JSON.parse` output.
 */
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
  /**
   * What a NaN or infinite JS number becomes: Python's `NaN` / `Infinity` / `-Infinity` tokens
   * (`'token'`, the default, as `allow_nan=True` writes them) or `null` (JSON.stringify's choice, for
   * wires read back by strict JSON parsers).
   */
  readonly nonFinite?: 'token' | 'null';
}

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
  // Without ensureAscii, Python's escapes are exactly JSON.stringify's (well-formed since ES2019: lone
  // surrogates as lowercase \uXXXX, other controls as \u00XX or their short forms); a test holds them
  // to each other over every UTF-16 code unit.
  if (!ensureAscii) return JSON.stringify(s);
  if (!SIMPLE_ASCII.test(s)) return `"${s}"`;
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i);
    const short = SHORT[code];
    if (short !== undefined) out += short;
    else if (code < 0x20 || code > 0x7e) out += u(code);
    else out += s.charAt(i);
  }
  return `${out}"`;
}

interface RenderContext {
  readonly ascii: boolean;
  readonly indent: number | undefined;
  readonly isNonFiniteNull: boolean;
}

const DEFAULT_CONTEXT: RenderContext = { ascii: false, indent: undefined, isNonFiniteNull: false };

function numberJson(n: JsonNumber | number, ctx: RenderContext): string {
  const x = typeof n === 'number' ? n : n.value;
  if (Number.isFinite(x) || (n instanceof JsonNumber && n.isInteger)) return pyNumber(n);
  if (ctx.isNonFiniteNull) return 'null';
  if (Number.isNaN(x)) return 'NaN';
  return x > 0 ? 'Infinity' : '-Infinity';
}

function members(v: object): Iterable<[unknown, unknown]> {
  return v instanceof Map ? v.entries() : Object.entries(v);
}

function render(v: unknown, ctx: RenderContext, depth: number): string {
  if (typeof v === 'string') return pyJsonString(v, ctx.ascii);
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number' || v instanceof JsonNumber) return numberJson(v, ctx);
  if (v instanceof RawJson) return v.text;
  // JSON has no bigint, symbol or function; JSON.stringify-like, they become null.
  if (typeof v !== 'object') return 'null';
  const parts: string[] = [];
  if (Array.isArray(v)) {
    for (const item of v) parts.push(render(item, ctx, depth + 1));
  } else {
    for (const [key, value] of members(v)) {
      if (value !== undefined)
        parts.push(`${pyJsonString(String(key), ctx.ascii)}: ${render(value, ctx, depth + 1)}`);
    }
  }
  const [open, close] = Array.isArray(v) ? ['[', ']'] : ['{', '}'];
  if (parts.length === 0) return open + close;
  if (ctx.indent === undefined) return open + parts.join(', ') + close;
  const pad = '\n' + ' '.repeat(ctx.indent * (depth + 1));
  return open + pad + parts.join(',' + pad) + '\n' + ' '.repeat(ctx.indent * depth) + close;
}

/**
 * Serialises like Python's `json.dumps`: `", "` and `": "` separators (`","` + newline when indented),
 * keys in insertion order, ints as digits, floats as `repr(float)`. `ensureAscii` defaults to false (raw
 * UTF-8). Takes any value: a {@link JsonNumber} keeps its int/float form; a JS number is an int when it
 * is integral; a Map or record is an object whose undefined members are skipped; undefined elsewhere
 * and values JSON lacks (bigint, symbol, function) are `null`.
 */
export function pyJson(value: unknown, options?: PyJsonOptions): string {
  // The common case, a string with the default options, skips building a render context.
  if (typeof value === 'string' && options === undefined) return pyJsonString(value, false);
  if (options === undefined) return render(value, DEFAULT_CONTEXT, 0);
  const ctx: RenderContext = {
    ascii: options.ensureAscii ?? false,
    indent: options.indent,
    isNonFiniteNull: options.nonFinite === 'null',
  };
  return render(value, ctx, 0);
}
