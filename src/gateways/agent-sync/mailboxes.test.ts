import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../test/fakes/fake-clock.js';
import { createBus } from '../../bus/bus.js';
import type { Bus } from '../../bus/bus.types.js';
import { createIdGenerator } from '../../core/ids.js';
import { createSilentLogger } from '../../core/logger.js';
import { MemoryStore } from '../../store/memory/memory-store.js';
import { BusMailboxes } from './mailboxes.js';

const retry = { baseMs: 5_000, capMs: 300_000, maxAttempts: 3 };
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** BusMailboxes over a real bus whose takes wait until `release()` is called. */
function setup(options: { writesInOrder?: boolean } = {}): {
  boxes: BusMailboxes;
  bus: Bus;
  release: () => void;
} {
  const clock = new FakeClock();
  const store = new MemoryStore({ clock });
  // Stands in for a store like NATS, whose concurrent writes may become durable out of order.
  if (options.writesInOrder === false) Object.defineProperty(store, 'writesInOrder', { value: false });
  const bus = createBus({
    store,
    clock,
    ids: createIdGenerator(clock),
    logger: createSilentLogger(),
    config: { leaseMs: 1_000, retry },
  });
  let release = (): void => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const take = bus.take.bind(bus);
  bus.take = async (mailbox, id) => {
    await gate;
    return take(mailbox, id);
  };
  closers.push(async () => {
    await bus.close();
    await store.close();
  });
  return { boxes: new BusMailboxes({ bus, logger: createSilentLogger() }), bus, release };
}

describe('BusMailboxes - removing what a written listen reply carried', () => {
  it.each([true, false])(
    'commits without the mailbox lock only where the store writes in order (%s)',
    async (writesInOrder) => {
      const { boxes, bus } = setup({ writesInOrder });
      await bus.send({ from: 'a', to: 'b', type: 'message', body: '{}' });
      expect((await boxes.reserve('b', 'b'))?.commitsAlone).toBe(writesInOrder);
    },
  );

  it('counts a message as gone while its removal is still running, and hands it to no other listen', async () => {
    const { boxes, bus, release } = setup();
    await bus.send({ from: 'a', to: 'b', type: 'message', body: '{}' });
    const reservation = await boxes.reserve('b', 'b');
    expect(reservation?.items).toHaveLength(1);
    const committing = reservation?.commit();
    // The take waits for the gate: the message is still stored, yet reserved and counted as removed.
    expect(await boxes.reserve('b', 'b')).toBeNull();
    let pending: number | undefined;
    const counting = boxes.pending('b').then((n) => (pending = n));
    await new Promise((resolve) => setImmediate(resolve));
    expect(pending).toBeUndefined(); // peek's count waits for the running removal
    release();
    await committing;
    await counting;
    expect(pending).toBe(0);
    expect((await bus.count('b')).total).toBe(0);
  });

  it('makes a released message available to the next listen at once', async () => {
    const { boxes, bus } = setup();
    await bus.send({ from: 'a', to: 'b', type: 'message', body: '{}' });
    const reservation = await boxes.reserve('b', 'b');
    await reservation?.release();
    expect((await boxes.reserve('b', 'b'))?.items).toHaveLength(1);
  });
});
