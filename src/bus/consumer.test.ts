import { describe, expect, it } from 'vitest';
import { memoryBus } from '../../test/fixtures/memory-bus.js';
import { MusubiError } from '../core/errors.js';
import { sleep } from '../core/sleep.js';
import { formatDeliveryId } from '../store/delivery-id.js';
import type { Delivery } from '../store/store.js';
import type { Settlement } from './bus.types.js';

/** Lets pending promise callbacks (store writes, loop steps) run. */
const settleMicrotasks = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** A consumer on a fresh memory bus whose settlements are recorded. */
function consumerSetup() {
  // Backoff at the top of its jitter range, so a nacked message is never due at once.
  const { bus, clock, store } = memoryBus({ leaseMs: 3_000, random: () => 0.99 });
  const stop = new AbortController();
  const settled: { id: string; settlement: Settlement }[] = [];
  const onSettled = (delivery: Delivery, settlement: Settlement): void => {
    settled.push({ id: delivery.envelope.id, settlement });
  };
  return { bus, clock, store, stop, settled, onSettled };
}

describe('bus.consume', () => {
  it('acks what the handler finishes, nacks what it throws (with the error as reason), in order', async () => {
    const { bus, stop, settled, onSettled } = consumerSetup();
    await bus.send({ id: 'good', to: 'w', from: 'a', type: 't', body: 'ok' });
    await bus.send({ id: 'bad', to: 'w', from: 'a', type: 't', body: 'fail' });
    const running = bus.consume(
      'w',
      async (delivery) => {
        if (delivery.envelope.body === 'fail') throw new Error('could not do it');
      },
      { signal: stop.signal, onSettled },
    );
    await settleMicrotasks();
    stop.abort();
    await running;
    expect(settled.map((s) => [s.id, s.settlement.kind])).toEqual([
      ['good', 'acked'],
      ['bad', 'nacked'],
    ]);
    expect((await bus.count('w')).total).toBe(1);
    const [left] = await bus.peek('w');
    expect(left).toMatchObject({ state: 'delayed', envelope: { id: 'bad', attempt: 1 } });
  });

  it('dead-letters with the retry policy once the attempts are used up', async () => {
    const { bus, clock, stop, settled, onSettled } = consumerSetup();
    await bus.send({ id: 'm', to: 'w', from: 'a', type: 't', body: 'x' });
    const running = bus.consume('w', async () => ({ kind: 'nack', reason: 'nope', delayMs: 0 }), {
      signal: stop.signal,
      onSettled,
    });
    for (let i = 0; i < 5; i++) {
      await settleMicrotasks();
      clock.advance(10);
    }
    stop.abort();
    await running;
    expect(settled.map((s) => s.settlement.kind)).toEqual(['nacked', 'nacked', 'nacked']);
    const last = settled[2]?.settlement;
    expect(last?.kind === 'nacked' && last.outcome.outcome).toBe('dead-lettered');
    expect((await bus.listDeadLetters()).map((l) => [l.envelope.id, l.reason])).toEqual([['m', 'nope']]);
  });

  it('renews the lease while a long handler runs, so the message is never handed out twice', async () => {
    const { bus, clock, stop, settled, onSettled } = consumerSetup();
    await bus.send({ id: 'long', to: 'w', from: 'a', type: 't', body: 'x' });
    let release: () => void = () => undefined;
    const handled: number[] = [];
    const running = bus.consume(
      'w',
      async (delivery) => {
        handled.push(delivery.envelope.attempt);
        await new Promise<void>((resolve) => (release = resolve));
      },
      { signal: stop.signal, onSettled, concurrency: 2 },
    );
    for (let i = 0; i < 12; i++) {
      await settleMicrotasks();
      clock.advance(1_000); // 12 s under a 3 s lease
    }
    expect(handled).toEqual([1]);
    release();
    await settleMicrotasks();
    stop.abort();
    await running;
    expect(settled).toEqual([{ id: 'long', settlement: { kind: 'acked' } }]);
  });

  it('aborts the handler when its lease is lost, and does not settle what it no longer holds', async () => {
    const { bus, clock, stop, settled, onSettled } = consumerSetup();
    await bus.send({ id: 'm', to: 'w', from: 'a', type: 't', body: 'x' });
    let aborted: unknown;
    const running = bus.consume(
      'w',
      async (_delivery, { signal }) => {
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
        aborted = signal.reason;
        return { kind: 'ack' };
      },
      { signal: stop.signal, onSettled, autoExtend: true, leaseMs: 3_000 },
    );
    await settleMicrotasks();
    // Another holder takes the message over: the lease is gone once the first renewal is refused.
    const [stolen] = await bus.peek('w');
    expect(stolen?.state).toBe('leased');
    await bus.deadLetter((await firstLeaseOf(bus, 'w')) ?? '', 'taken away');
    clock.advance(1_000);
    await settleMicrotasks();
    stop.abort();
    await running;
    expect(aborted).toBeInstanceOf(MusubiError);
    expect(settled.map((s) => s.settlement.kind)).toEqual(['lost']);
  });

  it('abandons a delivery whose handler fails because the consumer is stopping', async () => {
    const { bus, stop, settled, onSettled } = consumerSetup();
    await bus.send({ id: 'm', to: 'w', from: 'a', type: 't', body: 'x' });
    const running = bus.consume(
      'w',
      async (_delivery, { signal }) => {
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
        throw new Error('cancelled');
      },
      { signal: stop.signal, onSettled },
    );
    await settleMicrotasks();
    stop.abort();
    await running;
    expect(settled.map((s) => s.settlement.kind)).toEqual(['abandoned']);
    const [left] = await bus.peek('w');
    expect(left).toMatchObject({ state: 'leased', envelope: { attempt: 1 } });
  });

  it('receives nothing while beforeReceive waits, and claims once it resolves', async () => {
    const { bus, stop, settled, onSettled } = consumerSetup();
    await bus.send({ id: 'm', to: 'w', from: 'a', type: 't', body: 'x' });
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let calls = 0;
    const running = bus.consume('w', async () => ({ kind: 'ack' }), {
      signal: stop.signal,
      onSettled,
      beforeReceive: async (signal) => {
        calls++;
        if (calls === 1) await gate;
        // The stop signal ends a wait: the consumer then returns without receiving.
        else await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
      },
    });
    await settleMicrotasks();
    expect((await bus.peek('w'))[0]?.state).toBe('ready');
    open();
    await settleMicrotasks();
    expect(settled).toEqual([{ id: 'm', settlement: { kind: 'acked' } }]);
    expect(calls).toBe(2);
    stop.abort();
    await running;
  });

  it('calls a failing beforeReceive again a second later, without receiving in between', async () => {
    const { bus, clock, stop, settled, onSettled } = consumerSetup();
    await bus.send({ id: 'm', to: 'w', from: 'a', type: 't', body: 'x' });
    let calls = 0;
    const running = bus.consume('w', async () => undefined, {
      signal: stop.signal,
      onSettled,
      beforeReceive: async () => {
        if (++calls === 1) throw new Error('gate unreadable');
      },
    });
    await settleMicrotasks();
    expect(settled).toEqual([]);
    clock.advance(1_000);
    await settleMicrotasks();
    expect(settled.map((s) => s.settlement.kind)).toEqual(['acked']);
    stop.abort();
    await running;
  });

  it('leaves a delivery the handler settled itself alone, also when a renewal then finds it gone', async () => {
    const { bus, clock, stop, settled, onSettled } = consumerSetup();
    await bus.send({ id: 'm', to: 'w', from: 'a', type: 't', body: 'x' });
    let aborted = false;
    const running = bus.consume(
      'w',
      async (delivery, { signal }) => {
        await bus.nack(delivery.deliveryId, { delayMs: 60_000, reason: 'my own retry' });
        // Still busy after settling: the next renewal is refused (the lease is gone).
        clock.advance(1_000);
        await settleMicrotasks();
        aborted = signal.aborted;
        return { kind: 'settled' };
      },
      { signal: stop.signal, onSettled, leaseMs: 3_000 },
    );
    await settleMicrotasks();
    stop.abort();
    await running;
    expect(aborted).toBe(true);
    expect(settled).toEqual([{ id: 'm', settlement: { kind: 'settled' } }]);
    const [left] = await bus.peek('w');
    expect(left).toMatchObject({ state: 'delayed', envelope: { id: 'm', attempt: 1 } });
  });

  it('asks a leaseMs function before every receive', async () => {
    const { bus, clock, stop, onSettled } = consumerSetup();
    let leaseMs = 2_000;
    const leases: number[] = [];
    const running = bus.consume(
      'w',
      async (delivery) => {
        leases.push(delivery.leaseUntil - clock.now());
        leaseMs = 9_000; // settings reloaded while a delivery is handled
      },
      { signal: stop.signal, onSettled, leaseMs: () => leaseMs },
    );
    await bus.send({ id: 'a', to: 'w', from: 'a', type: 't', body: 'x' });
    await settleMicrotasks();
    await bus.send({ id: 'b', to: 'w', from: 'a', type: 't', body: 'x' });
    await settleMicrotasks();
    stop.abort();
    await running;
    expect(leases).toEqual([2_000, 9_000]);
  });

  it('renews a sub-second lease in time and a long one at least every minute', async () => {
    const { bus, clock, stop, onSettled } = consumerSetup();
    await bus.send({ id: 'short', to: 'w', from: 'a', type: 't', body: 'x' });
    let release: () => void = () => undefined;
    const handled: string[] = [];
    const consume = (mailbox: string, leaseMs: number): Promise<void> =>
      bus.consume(
        mailbox,
        async (delivery) => {
          handled.push(`${delivery.envelope.id}:${delivery.envelope.attempt}`);
          await new Promise<void>((resolve) => (release = resolve));
        },
        { signal: stop.signal, onSettled, leaseMs },
      );
    const short = consume('w', 300);
    for (let i = 0; i < 24; i++) {
      await settleMicrotasks();
      clock.advance(50); // 1.2 s under a 300 ms lease, renewed every 100 ms
    }
    await settleMicrotasks();
    expect((await bus.peek('w'))[0]).toMatchObject({ state: 'leased', envelope: { attempt: 1 } });
    release();
    await bus.send({ id: 'long', to: 'v', from: 'a', type: 't', body: 'x' });
    const long = consume('v', 600_000);
    await settleMicrotasks();
    const firstUntil = (await bus.peek('v'))[0]?.availableAt ?? 0;
    clock.advance(60_000);
    await settleMicrotasks();
    expect((await bus.peek('v'))[0]?.availableAt).toBe(firstUntil + 60_000);
    release();
    await settleMicrotasks();
    stop.abort();
    await Promise.all([short, long]);
    expect(handled).toEqual(['short:1', 'long:1']);
  });

  it('ends when the bus closes, and refuses a bad mailbox name at once', async () => {
    const { bus, stop } = consumerSetup();
    await expect(
      bus.consume('no spaces', async () => undefined, { signal: stop.signal }),
    ).rejects.toMatchObject({
      code: 'MAILBOX_NAME_INVALID',
    });
    const running = bus.consume('w', async () => undefined, { signal: stop.signal });
    await settleMicrotasks();
    await bus.close();
    await running;
  });
});

describe('sleep', () => {
  it('resolves true after the time on the injected clock, false at once when aborted', async () => {
    const { clock } = memoryBus();
    const stop = new AbortController();
    const done = sleep(clock, 5_000, stop.signal);
    clock.advance(5_000);
    expect(await done).toBe(true);
    const cut = sleep(clock, 5_000, stop.signal);
    stop.abort();
    expect(await cut).toBe(false);
    expect(await sleep(clock, 1, stop.signal)).toBe(false);
  });
});

/** The delivery id of the live lease of the first message, as a second party that knows it would use it. */
async function firstLeaseOf(
  bus: ReturnType<typeof memoryBus>['bus'],
  mailbox: string,
): Promise<string | undefined> {
  const [message] = await bus.peek(mailbox);
  if (message === undefined) return undefined;
  return formatDeliveryId({
    mailbox,
    envelopeId: message.envelope.id,
    seq: message.seq,
    attempt: message.envelope.attempt,
  });
}
