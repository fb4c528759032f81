import { describe, expect, it } from 'vitest';
import { KeyedSerialQueue, SerialQueue } from './serial-queue.js';

/** A promise with its resolve function, to hold a task until the test lets it finish. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe('SerialQueue', () => {
  it('runs tasks one at a time in order, and a failure reaches only its caller', async () => {
    const queue = new SerialQueue();
    const order: string[] = [];
    const first = gate();
    const a = queue.run(async () => {
      order.push('a start');
      await first.promise;
      order.push('a end');
      return 1;
    });
    const b = queue.run(() => {
      order.push('b');
      throw new Error('b failed');
    });
    const c = queue.run(async () => {
      order.push('c');
      return 3;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['a start']);
    first.open();
    expect(await a).toBe(1);
    await expect(b).rejects.toThrow('b failed');
    expect(await c).toBe(3);
    expect(order).toEqual(['a start', 'a end', 'b', 'c']);
    await queue.idle();
  });

  it('is idle only after every queued task finished', async () => {
    const queue = new SerialQueue();
    const held = gate();
    let isDone = false;
    void queue.run(async () => {
      await held.promise;
      isDone = true;
    });
    const idle = queue.idle().then(() => isDone);
    held.open();
    expect(await idle).toBe(true);
  });
});

describe('KeyedSerialQueue', () => {
  it('serialises per key and lets other keys run meanwhile', async () => {
    const queue = new KeyedSerialQueue<string>();
    const order: string[] = [];
    const held = gate();
    const x1 = queue.run('x', async () => {
      await held.promise;
      order.push('x1');
    });
    const x2 = queue.run('x', () => void order.push('x2'));
    const y = queue.run('y', () => void order.push('y'));
    await y;
    expect(order).toEqual(['y']);
    held.open();
    await Promise.all([x1, x2]);
    expect(order).toEqual(['y', 'x1', 'x2']);
  });
});
