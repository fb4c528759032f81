// How receives are woken: no lost wake-up when nobody is parked, and no herd of wasted claims.
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../test/fakes/fake-clock.js';
import { createIdGenerator } from '../core/ids.js';
import { createSilentLogger } from '../core/logger.js';
import { MemoryStore } from '../store/memory/memory-store.js';
import type { Delivery } from '../store/store.js';
import { createBus } from './bus.js';
import type { Bus } from './bus.types.js';
import { MailboxWaiters } from './mailbox-waiters.js';

/** Holds one call until released: `gate()` in the store method, `release()` in the test. */
class Gate {
  #open = (): void => undefined;
  readonly #opened = new Promise<void>((resolve) => (this.#open = resolve));
  release(): void {
    this.#open();
  }
  wait(): Promise<void> {
    return this.#opened;
  }
}

/** A memory store that counts claims and can hold its next claim or next due-time read. */
class GatedStore extends MemoryStore {
  claims = 0;
  claimGate: Gate | undefined;
  dueGate: Gate | undefined;

  override async claim(mailbox: string, options: { readonly leaseMs: number }): Promise<Delivery | null> {
    this.claims++;
    const gate = this.claimGate;
    this.claimGate = undefined;
    // Finds what was there when it started, then waits: a message sent meanwhile is not seen.
    const found = await super.claim(mailbox, options);
    await gate?.wait();
    return found;
  }

  override async nextDueAt(mailbox: string): Promise<number | null> {
    const gate = this.dueGate;
    this.dueGate = undefined;
    const due = await super.nextDueAt(mailbox);
    await gate?.wait();
    return due;
  }
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

function setup(): { bus: Bus; store: GatedStore } {
  const clock = new FakeClock();
  const store = new GatedStore({ clock });
  const bus = createBus({
    store,
    clock,
    ids: createIdGenerator(clock),
    logger: createSilentLogger(),
    config: { leaseMs: 60_000, retry: { baseMs: 1_000, capMs: 1_000, maxAttempts: 3 } },
  });
  cleanups.push(async () => {
    await bus.close();
    await store.close();
  });
  return { bus, store };
}

describe('bus wake-ups', () => {
  it.each([
    ['its claim', 'claimGate'],
    ['its due-time read', 'dueGate'],
  ] as const)(
    'with nobody parked, a receive busy with %s when a message arrives claims again and gets it',
    async (_, gateName) => {
      const { bus, store } = setup();
      const gate = new Gate();
      store[gateName] = gate;
      const receiving = bus.receive('q', { timeoutMs: 60_000 });
      await new Promise((resolve) => setImmediate(resolve)); // the receive is held at the gate
      await bus.send({ from: 'p', to: 'q', type: 't', body: 'late' });
      gate.release();
      const delivery = await receiving;
      expect(delivery?.envelope.body).toBe('late');
      expect(store.claims).toBe(2);
    },
  );

  it('32 consumers and one producer: every message once, a few claims per message instead of one per consumer', async () => {
    const { bus, store } = setup();
    const count = 300;
    const received: string[] = [];
    const consume = async (): Promise<void> => {
      for (;;) {
        const d = await bus.receive('q', { timeoutMs: 60_000 });
        if (d === null) return; // the bus closed
        received.push(d.envelope.body);
        await bus.ack(d.deliveryId);
      }
    };
    const consumers = Array.from({ length: 32 }, consume);
    for (let i = 0; i < count; i++) await bus.send({ from: 'p', to: 'q', type: 't', body: String(i) });
    while (received.length < count) await new Promise((resolve) => setImmediate(resolve));
    await bus.close();
    await Promise.all(consumers);
    expect(new Set(received).size).toBe(count);
    expect(received).toHaveLength(count);
    // Before missed notifications were counted per receiver, this was about 20 claims per message.
    expect(store.claims / count).toBeLessThan(4);
  });
});

describe('MailboxWaiters missed notifications', () => {
  it('counts a notification that woke nobody once per busy receiver, and forgets it when none is busy', () => {
    const waiters = new MailboxWaiters({ clock: new FakeClock() });
    waiters.notify('q'); // nobody busy, nobody parked: nothing to remember
    waiters.enter('q');
    expect(waiters.takeMissed('q')).toBe(false);
    waiters.notify('q');
    waiters.notify('q');
    waiters.notify(null);
    expect(waiters.takeMissed('q')).toBe(true); // capped at the one busy receiver
    expect(waiters.takeMissed('q')).toBe(false);
    waiters.notify('q');
    waiters.leave('q');
    waiters.enter('q');
    expect(waiters.takeMissed('q')).toBe(false); // a receiver arriving later starts clean
    waiters.leave('q');
  });
});
