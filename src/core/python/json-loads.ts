/**
 * JSON decoding as Python's `json.loads` sees it: number tokens keep Python's int/float distinction and
 * every digit, objects keep key order with Python's duplicate-key rule, and the int-digit limit holds.
 */
import { MAX_INT_DIGITS, pyFloatRepr } from './numbers.js';

/**
 * A JSON number that keeps its source token, so Python's int/float distinction survives a round trip:
 * `5` stays an int, `5.0` and `5e0` stay floats, `12345678901234567890` keeps every digit.
 */
export class JsonNumber {
  readonly token: string;
  /** True for a token with no fraction and no exponent (a Python `int`). */
  readonly isInteger: boolean;

  /** `isInteger` may be passed by a caller that already knows the token's form. */
  constructor(token: string, isInteger = !/[.eE]/.test(token)) {
    this.token = token;
    this.isInteger = isInteger;
  }

  /** The value as a JS number (large ints lose precision; use `token` where digits matter). */
  get value(): number {
    return Number(this.token);
  }

  /** A float with this finite value (timestamps), its token as Python `repr(float)` writes it. */
  static float(value: number): JsonNumber {
    return new JsonNumber(Number.isFinite(value) ? pyFloatRepr(value) : '0.0');
  }
}

/** A JSON object with insertion-ordered keys (duplicate keys: last value wins, first position kept). */
export type JsonObject = ReadonlyMap<string, JsonValue>;

/** A parsed JSON value as Python's `json.loads` would see it. */
export type JsonValue = null | boolean | string | JsonNumber | readonly JsonValue[] | JsonObject;

/** Deep enough for any real request; deeper input is rejected instead of exhausting the stack. */
const MAX_DEPTH = 512;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

class ParseFailure extends Error {
  constructor(
    message: string,
    readonly isRangeError = false,
  ) {
    super(message);
  }
}

/**
 * The outcome of {@link parseJson}. `isNumberOutOfRange` marks valid JSON refused for a number no reply
 * could carry: an integer of more than {@link MAX_INT_DIGITS} digits, or a float that overflows (`1e400`,
 * which Python turns into `inf` and writes back as `Infinity`, a token strict parsers reject).
 */
export type JsonParseResult =
  | { readonly ok: true; readonly value: JsonValue }
  | { readonly ok: false; readonly isNumberOutOfRange?: true };

/**
 * Parses JSON text with Python `json.loads` semantics, keeping number tokens. An integer past
 * {@link MAX_INT_DIGITS} digits is refused as Python refuses it: a reply holding one would crash every
 * Python client, so no request may carry one. Rejects `NaN`/`Infinity` (which Python accepts, but no
 * strict client could read back), raw control characters inside strings, trailing data and nesting
 * deeper than 512. Lone surrogate escapes (`"\ud800"`) are accepted, as Python does. Never throws.
 */
export function parseJson(text: string): JsonParseResult {
  const flat = parseFlatObject(text);
  if (flat !== undefined) return { ok: true, value: flat };
  const parser = new Parser(text);
  try {
    parser.skipSpace();
    const value = parser.value(0);
    parser.skipSpace();
    if (parser.pos !== text.length) return { ok: false };
    return { ok: true, value };
  } catch (err) {
    if (err instanceof ParseFailure)
      return err.isRangeError ? { ok: false, isNumberOutOfRange: true } : { ok: false };
    throw err;
  }
}

/**
 * The common request, read in one pass: a JSON object whose values are strings without escapes or
 * control characters, whole numbers of at most 15 digits, `true`, `false` or `null`, with no key twice,
 * spaces or tabs between tokens. The result is exactly what the full parser gives (a Map in text order,
 * number tokens kept). Undefined for anything else, valid or not: the full parser then decides.
 */
function parseFlatObject(text: string): Map<string, JsonValue> | undefined {
  const end = text.length;
  let i = skipBlanks(text, 0, true);
  if (text.charCodeAt(i) !== 0x7b) return undefined;
  const object = new Map<string, JsonValue>();
  i = skipBlanks(text, i + 1, false);
  if (text.charCodeAt(i) === 0x7d) return skipBlanks(text, i + 1, true) === end ? object : undefined;
  for (;;) {
    const keyEnd = plainStringEnd(text, i);
    if (keyEnd < 0) return undefined;
    const key = text.slice(i + 1, keyEnd);
    if (object.has(key)) return undefined;
    i = skipBlanks(text, keyEnd + 1, false);
    if (text.charCodeAt(i) !== 0x3a) return undefined;
    i = skipBlanks(text, i + 1, false);
    const c = text.charCodeAt(i);
    let value: JsonValue;
    if (c === 0x22) {
      const valueEnd = plainStringEnd(text, i);
      if (valueEnd < 0) return undefined;
      value = text.slice(i + 1, valueEnd);
      i = valueEnd + 1;
    } else if (c === 0x2d || isDigit(c)) {
      const start = i;
      if (c === 0x2d) i++;
      const digits = i;
      while (isDigit(text.charCodeAt(i))) i++;
      const count = i - digits;
      const next = text.charCodeAt(i);
      if (count === 0 || count > 15 || (count > 1 && text.charCodeAt(digits) === 0x30)) return undefined;
      if (next === 0x2e || next === 0x65 || next === 0x45) return undefined;
      value = new JsonNumber(text.slice(start, i), true);
    } else if (text.startsWith('true', i)) {
      value = true;
      i += 4;
    } else if (text.startsWith('false', i)) {
      value = false;
      i += 5;
    } else if (text.startsWith('null', i)) {
      value = null;
      i += 4;
    } else return undefined;
    object.set(key, value);
    i = skipBlanks(text, i, false);
    const separator = text.charCodeAt(i);
    if (separator === 0x7d) return skipBlanks(text, i + 1, true) === end ? object : undefined;
    if (separator !== 0x2c) return undefined;
    i = skipBlanks(text, i + 1, false);
  }
}

/** Past spaces and tabs (and, at either end of the text, line breaks). */
function skipBlanks(text: string, from: number, isEnd: boolean): number {
  let i = from;
  for (let c = text.charCodeAt(i); c === 0x20 || c === 0x09 || (isEnd && (c === 0x0a || c === 0x0d));) {
    c = text.charCodeAt(++i);
  }
  return i;
}

/** Where the string starting at `start` (a `"`) ends, or -1 unless it has no escape and no control. */
function plainStringEnd(text: string, start: number): number {
  if (text.charCodeAt(start) !== 0x22) return -1;
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) return i;
    if (c === 0x5c || c < 0x20) return -1;
  }
  return -1;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

class Parser {
  pos = 0;
  readonly #text: string;

  constructor(text: string) {
    this.#text = text;
  }

  skipSpace(): void {
    const t = this.#text;
    let c = t.charCodeAt(this.pos);
    while (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) c = t.charCodeAt(++this.pos);
  }

  value(depth: number): JsonValue {
    if (depth > MAX_DEPTH) throw new ParseFailure('too deep');
    const c = this.#text.charCodeAt(this.pos);
    if (c === 0x22) return this.string();
    if (c === 0x7b) return this.object(depth);
    if (c === 0x5b) return this.array(depth);
    if (c === 0x74) return this.literal('true', true);
    if (c === 0x66) return this.literal('false', false);
    if (c === 0x6e) return this.literal('null', null);
    return this.number();
  }

  literal<T extends JsonValue>(word: string, value: T): T {
    if (!this.#text.startsWith(word, this.pos)) throw new ParseFailure('bad literal');
    this.pos += word.length;
    return value;
  }

  number(): JsonNumber {
    NUMBER.lastIndex = this.pos;
    const match = NUMBER.exec(this.#text);
    if (match === null) throw new ParseFailure('unexpected character');
    this.pos += match[0].length;
    const number = new JsonNumber(match[0]);
    const digits = number.isInteger ? match[0].length - (match[0].startsWith('-') ? 1 : 0) : 0;
    if (digits > MAX_INT_DIGITS || (!number.isInteger && !Number.isFinite(number.value))) {
      throw new ParseFailure('number out of range', true);
    }
    return number;
  }

  string(): string {
    const t = this.#text;
    let start = ++this.pos;
    let out = '';
    for (;;) {
      const c = t.charCodeAt(this.pos);
      if (Number.isNaN(c) || c < 0x20) throw new ParseFailure('unterminated string');
      if (c === 0x22) {
        out += t.slice(start, this.pos++);
        return out;
      }
      if (c !== 0x5c) {
        this.pos++;
        continue;
      }
      out += t.slice(start, this.pos) + this.escape();
      start = this.pos;
    }
  }

  escape(): string {
    const t = this.#text;
    const e = t[this.pos + 1];
    this.pos += 2;
    switch (e) {
      case '"':
      case '\\':
      case '/':
        return e;
      case 'b':
        return '\b';
      case 'f':
        return '\f';
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case 't':
        return '\t';
      case 'u': {
        const hex = t.slice(this.pos, this.pos + 4);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new ParseFailure('bad \\u escape');
        this.pos += 4;
        return String.fromCharCode(parseInt(hex, 16));
      }
      default:
        throw new ParseFailure('bad escape');
    }
  }

  array(depth: number): JsonValue[] {
    const items: JsonValue[] = [];
    this.pos++;
    this.skipSpace();
    if (this.#text.charCodeAt(this.pos) === 0x5d) {
      this.pos++;
      return items;
    }
    for (;;) {
      this.skipSpace();
      items.push(this.value(depth + 1));
      this.skipSpace();
      const c = this.#text.charCodeAt(this.pos++);
      if (c === 0x5d) return items;
      if (c !== 0x2c) throw new ParseFailure('expected , or ]');
    }
  }

  object(depth: number): Map<string, JsonValue> {
    const entries = new Map<string, JsonValue>();
    this.pos++;
    this.skipSpace();
    if (this.#text.charCodeAt(this.pos) === 0x7d) {
      this.pos++;
      return entries;
    }
    for (;;) {
      this.skipSpace();
      if (this.#text.charCodeAt(this.pos) !== 0x22) throw new ParseFailure('expected a key');
      const key = this.string();
      this.skipSpace();
      if (this.#text.charCodeAt(this.pos++) !== 0x3a) throw new ParseFailure('expected :');
      this.skipSpace();
      entries.set(key, this.value(depth + 1));
      this.skipSpace();
      const c = this.#text.charCodeAt(this.pos++);
      if (c === 0x7d) return entries;
      if (c !== 0x2c) throw new ParseFailure('expected , or }');
    }
  }
}

/** True when `v` is a JSON object (a Map). */
export function isJsonObject(v: JsonValue | undefined): v is JsonObject {
  return v instanceof Map;
}

/** True when `v` is a JSON array. */
export function isJsonArray(v: JsonValue | undefined): v is readonly JsonValue[] {
  return Array.isArray(v);
}
