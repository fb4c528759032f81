/** An item that knows where it sits in the {@link IndexedHeap} holding it (-1: in none). */
export interface HeapSlot {
  heapIndex: number;
}

/**
 * A binary min-heap ordered by `compare` (negative when `a` comes first) whose items carry their own
 * index, so any item can be removed or re-placed in O(log n) and nothing stale is ever left behind.
 * An item sits in at most one such heap at a time.
 */
export class IndexedHeap<T extends HeapSlot> {
  readonly #items: T[] = [];
  readonly #compare: (a: T, b: T) => number;

  constructor(compare: (a: T, b: T) => number) {
    this.#compare = compare;
  }

  get size(): number {
    return this.#items.length;
  }

  /** The first item without removing it. */
  peek(): T | undefined {
    return this.#items[0];
  }

  /** The items in heap order (not sorted); do not change them through this. */
  items(): readonly T[] {
    return this.#items;
  }

  push(item: T): void {
    item.heapIndex = this.#items.length;
    this.#items.push(item);
    this.#up(item.heapIndex);
  }

  /** Removes and returns the first item. */
  pop(): T | undefined {
    const top = this.#items[0];
    if (top !== undefined) this.remove(top);
    return top;
  }

  /** Removes `item` (which must be in this heap); its index becomes -1. */
  remove(item: T): void {
    const items = this.#items;
    const i = item.heapIndex;
    const last = items.pop();
    item.heapIndex = -1;
    if (last === undefined || last === item) return;
    items[i] = last;
    last.heapIndex = i;
    this.#down(i);
    this.#up(last.heapIndex);
  }

  #up(start: number): void {
    const items = this.#items;
    let i = start;
    const item = items[i];
    if (item === undefined) return;
    while (i > 0) {
      const parentIndex = (i - 1) >> 1;
      const parent = items[parentIndex];
      if (parent === undefined || this.#compare(item, parent) >= 0) break;
      items[i] = parent;
      parent.heapIndex = i;
      i = parentIndex;
    }
    items[i] = item;
    item.heapIndex = i;
  }

  #down(start: number): void {
    const items = this.#items;
    const n = items.length;
    let i = start;
    const item = items[i];
    if (item === undefined) return;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      let child = left;
      let childItem = items[left];
      const rightItem = items[right];
      if (
        right < n &&
        rightItem !== undefined &&
        childItem !== undefined &&
        this.#compare(rightItem, childItem) < 0
      ) {
        child = right;
        childItem = rightItem;
      }
      if (childItem === undefined || this.#compare(childItem, item) >= 0) break;
      items[i] = childItem;
      childItem.heapIndex = i;
      i = child;
    }
    items[i] = item;
    item.heapIndex = i;
  }
}
