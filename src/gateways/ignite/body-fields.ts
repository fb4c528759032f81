import { isMap, isScalar, parseDocument, type Document } from 'yaml';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function scalarText(node: unknown): string | undefined {
  if (node === undefined || node === null) return undefined;
  if (isScalar(node)) {
    if (node.value === null) return '';
    // Plain scalars "as written" (`percent: 50.0` stays 50.0); quoted and block scalars as their text.
    return node.type === 'PLAIN' && typeof node.source === 'string' ? node.source : String(node.value);
  }
  return JSON.stringify(node);
}

/**
 * Reads "body field" values of one message body (spec/ignite.md 2.5). Both layouts are accepted: flat
 * (fields at the top level) and envelope (fields under `payload:`). A body that is not a YAML mapping
 * falls back to the first line `^\s*k:` with whitespace and every `"` removed. Missing fields are ''.
 */
export class BodyFields {
  readonly #body: string;
  readonly #doc: Document | undefined;

  constructor(body: string) {
    this.#body = body;
    let doc: Document | undefined;
    try {
      const parsed = parseDocument(body, { uniqueKeys: false });
      doc = parsed.errors.length === 0 && isMap(parsed.contents) ? parsed : undefined;
    } catch {
      // Not YAML at all: the line-based fallback applies.
      doc = undefined;
    }
    this.#doc = doc;
  }

  /** The value of body field `key`, or '' when absent. */
  get(key: string): string {
    if (this.#doc === undefined) {
      const line = new RegExp(`^\\s*${escapeRegExp(key)}:(.*)$`, 'm').exec(this.#body);
      return line?.[1] === undefined ? '' : line[1].trim().replaceAll('"', '');
    }
    const payload = this.#doc.get('payload', true);
    if (isMap(payload) && payload.has(key)) return scalarText(payload.get(key, true)) ?? '';
    return scalarText(this.#doc.get(key, true)) ?? '';
  }

  /** True when the field is present (in `payload` or at the top level, or as a matching line). */
  has(key: string): boolean {
    if (this.#doc === undefined) return new RegExp(`^\\s*${escapeRegExp(key)}:`, 'm').test(this.#body);
    const payload = this.#doc.get('payload', true);
    return (isMap(payload) && payload.has(key)) || this.#doc.has(key);
  }
}
