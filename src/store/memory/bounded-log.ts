/**
 * An in-memory append-only log keeping at most `retention` newest entries, each with a strictly
 * increasing position. Trimming happens in chunks so appends stay O(1) amortised.
 */
export class BoundedLog<T> {
  readonly #entries: T[] = [];
  readonly #positionOf: (entry: T) => number;
  readonly #retention: number;

  constructor(options: { positionOf: (entry: T) => number; retention: number }) {
    this.#positionOf = options.positionOf;
    this.#retention = options.retention;
  }

  append(entry: T): void {
    this.#entries.push(entry);
    if (this.#entries.length > this.#retention + TRIM_CHUNK) {
      this.#entries.splice(0, this.#entries.length - this.#retention);
    }
  }

  /** The newest entry. */
  last(): T | undefined {
    return this.#entries[this.#entries.length - 1];
  }

  /**
   * Entries after position `after` matching `accept`, oldest first, at most `limit`; `cursor` is the
   * position of the last entry examined (or `after` when none was).
   */
  readAfter(
    after: number,
    options: { limit: number; accept?: (entry: T) => boolean },
  ): { items: T[]; cursor: number } {
    const items: T[] = [];
    let cursor = after;
    for (let i = this.#firstAfter(after); i < this.#entries.length && items.length < options.limit; i++) {
      const entry = this.#entries[i];
      if (entry === undefined) break;
      cursor = this.#positionOf(entry);
      if (options.accept === undefined || options.accept(entry)) items.push(entry);
    }
    return { items, cursor };
  }

  /** Index of the first entry with position > after (binary search; positions increase). */
  #firstAfter(after: number): number {
    let low = 0;
    let high = this.#entries.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      const entry = this.#entries[mid];
      if (entry !== undefined && this.#positionOf(entry) <= after) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

const TRIM_CHUNK = 1000;
