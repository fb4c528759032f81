import { describe, expect, it } from 'vitest';
import { IndexedHeap, type HeapSlot } from './indexed-heap.js';

interface Item extends HeapSlot {
  readonly key: number;
  readonly id: number;
}

/** A small deterministic generator (mulberry32), so a failing sequence can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const byKeyThenId = (a: Item, b: Item): number => a.key - b.key || a.id - b.id;

describe('IndexedHeap', () => {
  it('pops in order and keeps every index right through random pushes, pops and removals', () => {
    for (const seed of [1, 2, 3, 42, 1234]) {
      const next = random(seed);
      const heap = new IndexedHeap<Item>(byKeyThenId);
      const inHeap = new Set<Item>();
      let id = 0;
      for (let step = 0; step < 3_000; step++) {
        const roll = next();
        if (roll < 0.5) {
          const item: Item = { key: Math.floor(next() * 50), id: id++, heapIndex: -1 };
          heap.push(item);
          inHeap.add(item);
        } else if (roll < 0.75) {
          const expected = [...inHeap].sort(byKeyThenId)[0];
          expect(heap.pop()).toBe(expected);
          if (expected !== undefined) {
            expect(expected.heapIndex).toBe(-1);
            inHeap.delete(expected);
          }
        } else if (inHeap.size > 0) {
          const victims = [...inHeap];
          const victim = victims[Math.floor(next() * victims.length)];
          if (victim === undefined) continue;
          heap.remove(victim);
          expect(victim.heapIndex).toBe(-1);
          inHeap.delete(victim);
        }
        expect(heap.size).toBe(inHeap.size);
        heap.items().forEach((item, index) => expect(item.heapIndex).toBe(index));
        expect(heap.peek()).toBe([...inHeap].sort(byKeyThenId)[0]);
      }
      const drained: Item[] = [];
      for (let item = heap.pop(); item !== undefined; item = heap.pop()) drained.push(item);
      expect(drained).toEqual([...inHeap].sort(byKeyThenId));
    }
  });

  it('is empty after removing its only item, and pops nothing when empty', () => {
    const heap = new IndexedHeap<Item>(byKeyThenId);
    const only: Item = { key: 1, id: 1, heapIndex: -1 };
    heap.push(only);
    heap.remove(only);
    expect(heap.size).toBe(0);
    expect(heap.pop()).toBeUndefined();
    expect(heap.peek()).toBeUndefined();
  });
});
