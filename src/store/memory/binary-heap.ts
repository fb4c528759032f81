/**
 * A binary min-heap ordered by `compare` (negative when `a` comes first). Push and pop are O(log n).
 * Entries are never updated in place: callers push a fresh entry and skip stale ones when popping.
 */
export class BinaryHeap<T> {
  readonly #items: T[] = [];
  readonly #compare: (a: T, b: T) => number;

  constructor(compare: (a: T, b: T) => number) {
    this.#compare = compare;
  }

  get size(): number {
    return this.#items.length;
  }

  /** The first entry without removing it. */
  peek(): T | undefined {
    return this.#items[0];
  }

  push(item: T): void {
    const items = this.#items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#less(i, parent)) break;
      this.#swap(i, parent);
      i = parent;
    }
  }

  /** Removes and returns the first entry. */
  pop(): T | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length === 0 || last === undefined) return top;
    items[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < items.length && this.#less(left, smallest)) smallest = left;
      if (right < items.length && this.#less(right, smallest)) smallest = right;
      if (smallest === i) break;
      this.#swap(i, smallest);
      i = smallest;
    }
    return top;
  }

  #less(i: number, j: number): boolean {
    const a = this.#items[i];
    const b = this.#items[j];
    return a !== undefined && b !== undefined && this.#compare(a, b) < 0;
  }

  #swap(i: number, j: number): void {
    const items = this.#items;
    const a = items[i];
    const b = items[j];
    if (a === undefined || b === undefined) return;
    items[i] = b;
    items[j] = a;
  }
}
