import { splitMime } from './mime-parse.js';

/** One header edit: set `name` to `value` (replace the first match or append at the end of the block). */
export interface HeaderSet {
  readonly name: string;
  readonly value: string;
}

/**
 * A message opened for editing: the header block as LF-separated lines (a trailing empty line dropped)
 * and the body. Edits follow spec/ignite.md 3.1: a line matches NAME when it starts with `NAME:`
 * (case-sensitive); continuation lines are never touched.
 */
export class MimeEditor {
  readonly #lines: string[];
  readonly #body: string;

  constructor(text: string) {
    const parts = splitMime(text);
    this.#lines = parts.headerBlock === '' ? [] : parts.headerBlock.split('\n');
    if (this.#lines.at(-1) === '') this.#lines.pop();
    this.#body = parts.body;
  }

  /** Replaces every `X-IGNITE-Status:` line by the new status, or appends one. */
  setStatus(status: string): this {
    const line = `X-IGNITE-Status: ${status}`;
    let isFound = false;
    for (let i = 0; i < this.#lines.length; i++) {
      if (this.#lines[i]?.startsWith('X-IGNITE-Status:') === true) {
        this.#lines[i] = line;
        isFound = true;
      }
    }
    if (!isFound) this.#lines.push(line);
    return this;
  }

  /** Replaces the FIRST line starting with `NAME:` by `NAME: VALUE`, or appends it. */
  setHeader(name: string, value: string): this {
    const line = `${name}: ${value}`;
    const at = this.#lines.findIndex((l) => l.startsWith(`${name}:`));
    if (at === -1) this.#lines.push(line);
    else this.#lines[at] = line;
    return this;
  }

  /** Applies `sets` in order after collapsing duplicate names (first position, last value). */
  setHeaders(sets: readonly HeaderSet[]): this {
    const collapsed = new Map<string, string>();
    for (const { name, value } of sets) collapsed.set(name, value);
    for (const [name, value] of collapsed) this.setHeader(name, value);
    return this;
  }

  /** Deletes ALL lines starting with `NAME:`. */
  removeHeader(name: string): this {
    for (let i = this.#lines.length - 1; i >= 0; i--) {
      if (this.#lines[i]?.startsWith(`${name}:`) === true) this.#lines.splice(i, 1);
    }
    return this;
  }

  /** The rewritten message: header lines joined by LF, a blank line, then the body. */
  toString(): string {
    return `${this.#lines.join('\n')}\n\n${this.#body}`;
  }
}

/** Options of {@link updateStatusText}: `--processed-at` and the `--extra K=V` items, in order. */
export interface UpdateStatusOptions {
  readonly processedAt?: string;
  readonly extras?: readonly HeaderSet[];
}

/**
 * `update-status`: replace every status line (or append one), then apply `X-IGNITE-Processed-At` (when
 * non-empty) and the extras with duplicates collapsed. Returns the rewritten text.
 */
export function updateStatusText(text: string, status: string, options: UpdateStatusOptions = {}): string {
  const sets: HeaderSet[] = [];
  if (options.processedAt !== undefined && options.processedAt !== '') {
    sets.push({ name: 'X-IGNITE-Processed-At', value: options.processedAt });
  }
  sets.push(...(options.extras ?? []));
  return new MimeEditor(text).setStatus(status).setHeaders(sets).toString();
}

/** Parses one `--extra` item: split at the first `=`; without `=` the value is empty. */
export function parseExtra(item: string): HeaderSet {
  const at = item.indexOf('=');
  return at === -1 ? { name: item, value: '' } : { name: item.slice(0, at), value: item.slice(at + 1) };
}
