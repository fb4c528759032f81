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

/** A whole number token JSON.parse reads exactly (at most 15 digits, no fraction or exponent). */
const SAFE_INT_TOKEN = /^-?(?:0|[1-9][0-9]{0,14})$/;

/**
 * The common request, read natively: a JSON object of strings, booleans, nulls and whole numbers of at
 * most 15 digits, with no key twice and no key starting with a digit (JS would move array-index keys to
 * the front). Its numbers' tokens are taken from the text, so the result is exactly what the full
 * parser gives. Undefined for anything else, valid or not: the full parser then decides.
 */
function parseFlatObject(text: string): Map<string, JsonValue> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined; // not JSON as JSON.parse reads it: the full parser words the failure
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const record = parsed as Record<string, unknown>;
  const keys = Object.keys(record);
  let numbers = 0;
  for (const key of keys) {
    const first = key.charCodeAt(0);
    if (first >= 0x30 && first <= 0x39) return undefined;
    const value = record[key];
    if (typeof value === 'number') numbers++;
    else if (typeof value === 'object' && value !== null) return undefined;
  }
  // Without numbers a repeated key needs no care: JS and Python both keep its first place, last value.
  const tokens = numbers === 0 ? [] : numberTokens(text, keys.length, numbers);
  if (tokens === undefined) return undefined;
  const object = new Map<string, JsonValue>();
  let next = 0;
  for (const key of keys) {
    const value = record[key] as string | number | boolean | null;
    if (typeof value !== 'number') object.set(key, value);
    else {
      const token = tokens[next++] ?? '';
      if (!SAFE_INT_TOKEN.test(token)) return undefined;
      object.set(key, new JsonNumber(token, true));
    }
  }
  return object;
}

/**
 * The number tokens outside strings of a flat object's text, in order; undefined unless it has exactly
 * one `:` per key (no key repeats, so the tokens line up with the keys) and `numbers` tokens.
 */
function numberTokens(text: string, keyCount: number, numbers: number): string[] | undefined {
  const tokens: string[] = [];
  let colons = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Skip the string (JSON.parse accepted the text, so it is terminated).
      for (i++; text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
    } else if (c === 0x3a) colons++;
    else if (numbers > 0 && (c === 0x2d || (c >= 0x30 && c <= 0x39))) {
      const start = i;
      while (isNumberChar(text.charCodeAt(i + 1))) i++;
      tokens.push(text.slice(start, i + 1));
    }
  }
  return colons === keyCount && tokens.length === numbers ? tokens : undefined;
}

/** Digits, sign, point and exponent: the characters of a JSON number token. */
function isNumberChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45;
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
