/** Dropped slots tolerated before the array is compacted; keeps small logs from copying often. */
const MIN_COMPACT = 1_024;

/**
 * An in-memory append-only log keeping at most `retention` newest entries, each with a strictly
 * increasing position. Dropping the oldest entry only moves a head index (and clears the slot, so the
 * entry can be collected); the array is compacted once the dropped prefix is at least as long as what
 * is kept, so each append costs O(1) amortised and at most twice `retention` slots are allocated.
 */
export class BoundedLog<T> {
  #entries: (T | undefined)[] = [];
  #head = 0;
  readonly #positionOf: (entry: T) => number;
  readonly #retention: number;

  constructor(options: { positionOf: (entry: T) => number; retention: number }) {
    this.#positionOf = options.positionOf;
    this.#retention = options.retention;
  }

  append(entry: T): void {
    this.#entries.push(entry);
    if (this.#entries.length - this.#head > this.#retention) this.#entries[this.#head++] = undefined;
    if (this.#head >= MIN_COMPACT && this.#head >= this.#entries.length - this.#head) {
      this.#entries = this.#entries.slice(this.#head);
      this.#head = 0;
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

  /** Index of the first kept entry with position > after (binary search; positions increase). */
  #firstAfter(after: number): number {
    let low = this.#head;
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
