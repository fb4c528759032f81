/** Values shorter than this are never masked: masking "1" or "true" everywhere would wreck every text. */
export const MIN_SECRET_CHARS = 8;

/**
 * A cut piece of a secret (the start of one before a cut, the end of one after it) shorter than this,
 * beyond the secret's public prefix, is left as it is: that short a piece says nothing of the secret.
 */
const MIN_PIECE_CHARS = 6;

/** What a secret reads as once masked, after its public prefix. */
const MASKED = '…[masked]';

/** Where texts are cut (`… [N more characters]`, a tail starting with `…`, a line ending in `…`). */
const CUT = '…';

/**
 * Prefixes that name the vendor of a key and nothing of the key itself, kept in the masked form so a
 * reader still sees which key it was (`sk-ant-…[masked]`). Longest first: the first match is kept.
 */
const PUBLIC_PREFIXES = [
  'github_pat_',
  'sk-proj-',
  'sk-ant-',
  'glpat-',
  'xoxb-',
  'xoxp-',
  'AIza',
  'ghp_',
  'gho_',
  'ghu_',
  'ghs_',
  'ghr_',
  'sk-',
];

/** One stretch of a text to mask, and the public prefix its masked form keeps. */
interface Span {
  readonly start: number;
  end: number;
  readonly shown: string;
}

function publicPrefixOf(secret: string): string {
  return PUBLIC_PREFIXES.find((p) => secret.length > p.length && secret.startsWith(p)) ?? '';
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Masks known secret values in text. Built once from the values (those shorter than
 * {@link MIN_SECRET_CHARS} are dropped); immutable afterwards. Every occurrence of a secret becomes
 * `<public prefix>…[masked]`, overlapping occurrences of several secrets one masked stretch, so no part
 * of any of them stays. A text cut before this mask saw it (a tail, a `…`-cut line, a
 * `… [N more characters]` cut) may hold a piece of a secret at the cut: the end of one at the start of
 * the text or right after a `…`, the start of one at the end or right before a `…`; such pieces are
 * masked too. Masking a masked text changes nothing.
 */
export class SecretMask {
  readonly #secrets: readonly string[];

  constructor(values: Iterable<string>) {
    const kept = new Set([...values].filter((v) => v.length >= MIN_SECRET_CHARS));
    this.#secrets = [...kept].sort((a, b) => b.length - a.length);
  }

  /** True when there is nothing to mask: {@link mask} returns every text as it is. */
  get isEmpty(): boolean {
    return this.#secrets.length === 0;
  }

  /** `text` with every secret (and every cut piece of one) masked; the same string when it had none. */
  mask(text: string): string {
    if (this.isEmpty || text.length < MIN_PIECE_CHARS) return text;
    const spans: Span[] = [];
    for (const secret of this.#secrets) {
      const shown = publicPrefixOf(secret);
      for (let at = text.indexOf(secret); at !== -1; at = text.indexOf(secret, at + 1))
        spans.push({ start: at, end: at + secret.length, shown });
    }
    this.#addCutPieces(text, spans);
    return spans.length === 0 ? text : masked(text, spans);
  }

  /**
   * `value` with every string inside it masked: strings, arrays and plain objects (keys stay), other
   * values as they are. Parts without a secret are the same objects; nothing is changed in place.
   */
  maskDeep<T>(value: T): T {
    if (this.isEmpty) return value;
    return this.#deep(value) as T;
  }

  #deep(value: unknown): unknown {
    if (typeof value === 'string') return this.mask(value);
    if (typeof value !== 'object' || value === null) return value;
    if (Array.isArray(value)) {
      const items: unknown[] = value.map((v: unknown) => this.#deep(v));
      return items.some((v, i) => v !== value[i]) ? items : value;
    }
    if (!isPlainObject(value)) return value;
    let changed: Record<string, unknown> | undefined;
    for (const [key, v] of Object.entries(value)) {
      const next = this.#deep(v);
      if (next !== v) (changed ??= { ...value })[key] = next;
    }
    return changed ?? value;
  }

  #addCutPieces(text: string, spans: Span[]): void {
    const cuts: number[] = [];
    for (let at = text.indexOf(CUT); at !== -1; at = text.indexOf(CUT, at + 1)) cuts.push(at);
    for (const secret of this.#secrets) {
      const shown = publicPrefixOf(secret);
      // After a cut: the end of a secret whose start was cut away.
      for (const start of [0, ...cuts.map((c) => c + CUT.length)]) {
        for (let n = Math.min(secret.length - 1, text.length - start); n >= MIN_PIECE_CHARS; n--) {
          if (text.startsWith(secret.slice(-n), start)) {
            spans.push({ start, end: start + n, shown: '' });
            break;
          }
        }
      }
      // Before a cut: the start of a secret whose end was cut away.
      for (const end of [...cuts, text.length]) {
        for (let n = Math.min(secret.length - 1, end); n >= shown.length + MIN_PIECE_CHARS; n--) {
          if (text.startsWith(secret.slice(0, n), end - n)) {
            spans.push({ start: end - n, end, shown });
            break;
          }
        }
      }
    }
  }
}

/** `text` with the spans (in any order, possibly overlapping) replaced by their masked forms. */
function masked(text: string, spans: Span[]): string {
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  let out = '';
  let at = 0;
  let current: Span | undefined;
  for (const span of spans) {
    if (current !== undefined && span.start < current.end) {
      current.end = Math.max(current.end, span.end);
      continue;
    }
    if (current !== undefined) {
      out += `${current.shown}${MASKED}`;
      at = current.end;
    }
    out += text.slice(at, span.start);
    current = { ...span };
  }
  if (current === undefined) return text;
  return `${out}${current.shown}${MASKED}${text.slice(current.end)}`;
}
