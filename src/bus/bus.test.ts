import { afterEach, describe, expect, it } from 'vitest';
import { createIdGenerator } from '../core/ids.js';
import { createSilentLogger } from '../core/logger.js';
import { isMusubiError, type ErrorCode } from '../core/errors.js';
import { MemoryStore } from '../store/memory/memory-store.js';
import { FakeClock } from '../../test/fakes/fake-clock.js';
import type { Bus } from './bus.types.js';
import { createBus } from './bus.js';

const retry = { baseMs: 5_000, capMs: 300_000, maxAttempts: 3 };

function setup(options: { random?: () => number } = {}): { bus: Bus; store: MemoryStore; clock: FakeClock } {
  const clock = new FakeClock();
  const store = new MemoryStore({ clock });
  const bus = createBus({
    store,
    clock,
    ids: createIdGenerator(clock),
    logger: createSilentLogger(),
    config: { leaseMs: 1_000, retry },
    random: options.random ?? (() => 0.5),
  });
  cleanups.push(async () => {
    await bus.close();
    await store.close();
  });
  return { bus, store, clock };
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function expectCode(promise: Promise<unknown>, code: ErrorCode): Promise<void> {
  const err: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isMusubiError(err, code), `expected ${code}, got ${String(err)}`).toBe(true);
}

describe('bus - validation', () => {
  it.each([['../x'], [''], ['a'.repeat(200)], ['a\0b'], ['.hidden'], ['a/b']])(
    'rejects mailbox name %j with MAILBOX_NAME_INVALID and leaves the store untouched',
    async (name) => {
      const { bus, store } = setup();
      await expectCode(bus.send({ from: 'cli', to: name, type: 'note' }), 'MAILBOX_NAME_INVALID');
      await expectCode(bus.receive(name, { timeoutMs: 0 }), 'MAILBOX_NAME_INVALID');
      await expectCode(bus.peek(name), 'MAILBOX_NAME_INVALID');
      expect(await store.listMailboxes()).toEqual([]);
      expect(await store.readEvents()).toEqual([]);
    },
  );

  it('rejects an invalid envelope with ENVELOPE_INVALID listing the problems', async () => {
    const { bus, store } = setup();
    const err: unknown = await bus
      .send({ from: 'cli', to: 'worker', type: 'bad type!', headers: { 'x-a': 'line\nbreak' } })
      .catch((e: unknown) => e);
    expect(isMusubiError(err, 'ENVELOPE_INVALID')).toBe(true);
    if (isMusubiError(err)) expect(err.details?.['issues']).toHaveLength(2);
    expect(await store.listMailboxes()).toEqual([]);
  });

  it('rejects invalid KV keys with KV_KEY_INVALID', async () => {
    const { bus } = setup();
    await expectCode(bus.kv.kvSet('../etc', 1), 'KV_KEY_INVALID');
    await expectCode(bus.kv.kvGet(''), 'KV_KEY_INVALID');
  });
});

describe('bus - delivery', () => {
  it('hands out messages by priority, then send order', async () => {
    const { bus } = setup();
    await bus.send({ from: 'a', to: 'w', type: 't', body: '1' });
    await bus.send({ from: 'a', to: 'w', type: 't', body: '2', priority: 'critical' });
    await bus.send({ from: 'a', to: 'w', type: 't', body: '3', priority: 'low' });
    await bus.send({ from: 'a', to: 'w', type: 't', body: '4' });
    const bodies: string[] = [];
    for (let i = 0; i < 4; i++) {
      const d = await bus.receive('w', { timeoutMs: 0 });
      bodies.push(d?.envelope.body ?? 'none');
      if (d) await bus.ack(d.deliveryId);
    }
    expect(bodies).toEqual(['2', '1', '4', '3']);
  });

  it('wakes a waiting receive when a message is sent', async () => {
    const { bus } = setup();
    const pending = bus.receive('w', { timeoutMs: 60_000 });
    await bus.send({ from: 'a', to: 'w', type: 't', body: 'hello' });
    expect((await pending)?.envelope.body).toBe('hello');
  });

  it('serves each of several waiting receivers once when several messages arrive', async () => {
    const { bus } = setup();
    const pending = [0, 1, 2].map(() => bus.receive('w', { timeoutMs: 60_000 }));
    for (const body of ['a', 'b', 'c']) await bus.send({ from: 'x', to: 'w', type: 't', body });
    const got = await Promise.all(pending);
    expect(got.map((d) => d?.envelope.body).sort()).toEqual(['a', 'b', 'c']);
  });

  it('resolves null when nothing arrives before the timeout', async () => {
    const { bus, clock } = setup();
    const pending = bus.receive('w', { timeoutMs: 5_000 });
    await Promise.resolve();
    clock.advance(5_000);
    expect(await pending).toBeNull();
  });

  it('rejects with the signal reason when the receive is aborted', async () => {
    const { bus } = setup();
    const controller = new AbortController();
    const pending = bus.receive('w', { timeoutMs: 60_000, signal: controller.signal });
    controller.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
  });

  it('wakes a waiting receive when a delayed message becomes due', async () => {
    const { bus, clock } = setup();
    await bus.send({ from: 'a', to: 'w', type: 't', body: 'later' });
    const first = await bus.receive('w', { timeoutMs: 0 });
    await bus.nack(first?.deliveryId ?? '', { delayMs: 2_000 });
    const pending = bus.receive('w', { timeoutMs: 60_000 });
    await new Promise((r) => setImmediate(r));
    clock.advance(2_000);
    const again = await pending;
    expect(again?.envelope.body).toBe('later');
    expect(again?.envelope.attempt).toBe(2);
  });

  it('rejects a peek limit that is not a non-negative integer with USAGE_INVALID', async () => {
    const { bus } = setup();
    await bus.send({ from: 'a', to: 'w', type: 't' });
    for (const limit of [1.5, -1, Number.NaN, Infinity])
      await expectCode(bus.peek('w', { limit }), 'USAGE_INVALID');
    expect(await bus.peek('w', { limit: 0 })).toEqual([]);
    expect(await bus.peek('w', { limit: 1 })).toHaveLength(1);
  });

  it('sends one envelope id to every mailbox of a broadcast', async () => {
    const { bus } = setup();
    const results = await bus.broadcast({ from: 'lead', type: 'announce', body: 'hi' }, ['a', 'b', 'a']);
    expect(results).toHaveLength(2);
    expect(new Set(results.map((r) => r.envelope.id)).size).toBe(1);
    expect((await bus.count('a')).total).toBe(1);
    expect((await bus.count('b')).total).toBe(1);
  });
});

describe('bus - wake-ups', () => {
  it('hands a wake-up on when the woken receive is aborted before it claims', async () => {
    const { bus } = setup();
    const first = new AbortController();
    const aborted = bus.receive('w', { timeoutMs: 60_000, signal: first.signal }).catch((e: unknown) => e);
    const second = bus.receive('w', { timeoutMs: 60_000 });
    await new Promise((resolve) => setImmediate(resolve)); // both park, `first` at the head
    const sending = bus.send({ from: 'a', to: 'w', type: 't', body: 'only one' });
    first.abort(new Error('gone')); // after the append woke `first`, before it could claim
    await sending;
    expect(await aborted).toEqual(new Error('gone'));
    // The fake clock never moves: only a handed-on wake-up can make `second` claim.
    expect((await second)?.envelope.body).toBe('only one');
  });
});

describe('bus - take', () => {
  it('removes a ready message so a later receive gets nothing', async () => {
    const { bus, store } = setup();
    const { envelope } = await bus.send({ from: 'a', to: 'w', type: 't', body: 'handed on' });
    expect(await bus.take('w', envelope.id)).toBe(true);
    expect(await bus.receive('w', { timeoutMs: 0 })).toBeNull();
    expect((await store.readEvents()).at(-1)).toMatchObject({
      type: 'message.acked',
      messageId: envelope.id,
    });
    expect(await bus.take('w', envelope.id)).toBe(false);
  });

  it('resolves false for a message leased by a receive, whose holder can still ack it', async () => {
    const { bus } = setup();
    await bus.send({ from: 'a', to: 'w', type: 't', id: 'job-1' });
    const delivery = await bus.receive('w', { timeoutMs: 0 });
    expect(await bus.take('w', 'job-1')).toBe(false);
    await bus.ack(delivery?.deliveryId ?? '');
    expect((await bus.count('w')).total).toBe(0);
  });

  it.each([['../x'], [''], ['a/b']])('rejects mailbox name %j with MAILBOX_NAME_INVALID', async (name) => {
    const { bus } = setup();
    await expectCode(bus.take(name, 'job-1'), 'MAILBOX_NAME_INVALID');
  });

  it('resolves false without asking the store for an id no envelope can have', async () => {
    const { bus, store } = setup();
    await bus.send({ from: 'a', to: 'w', type: 't', id: 'job-1' });
    const asked: string[] = [];
    const take = store.take.bind(store);
    store.take = (mailbox, id) => {
      asked.push(id);
      return take(mailbox, id);
    };
    for (const id of ['', 'a:b', '../job-1', 'x'.repeat(200), 42 as unknown as string]) {
      expect(await bus.take('w', id)).toBe(false);
    }
    expect(asked).toEqual([]);
    expect(await bus.take('w', 'job-1')).toBe(true);
    expect(asked).toEqual(['job-1']);
    expect((await store.count('w')).total).toBe(0);
  });

  it('rejects BUS_CLOSED after close', async () => {
    const { bus } = setup();
    await bus.close();
    await expectCode(bus.take('w', 'job-1'), 'BUS_CLOSED');
  });
});

describe('bus - retries and dead letters', () => {
  it('retries after a full-jitter backoff then dead-letters with an escalation event', async () => {
    const { bus, clock, store } = setup({ random: () => 0.5 });
    await bus.send({ from: 'a', to: 'w', type: 't', id: 'job-1' });
    const delays: number[] = [];
    for (let attempt = 1; attempt <= 2; attempt++) {
      const d = await bus.receive('w', { timeoutMs: 0 });
      expect(d?.envelope.attempt).toBe(attempt);
      const outcome = await bus.nack(d?.deliveryId ?? '');
      if (outcome.outcome !== 'retry') throw new Error('expected a retry');
      delays.push(outcome.delayMs);
      clock.advance(outcome.delayMs);
    }
    expect(delays).toEqual([2_500, 5_000]);
    const last = await bus.receive('w', { timeoutMs: 0 });
    const outcome = await bus.nack(last?.deliveryId ?? '', { reason: 'tests fail' });
    expect(outcome.outcome).toBe('dead-lettered');
    expect((await bus.listDeadLetters({ mailbox: 'w' })).map((d) => [d.envelope.id, d.reason])).toEqual([
      ['job-1', 'tests fail'],
    ]);
    const events = await store.readEvents();
    expect(events.filter((e) => e.type === 'escalation')).toHaveLength(1);
    const retried = await bus.retryDeadLetter('job-1');
    expect(retried).toHaveLength(1);
    expect((await bus.receive('w', { timeoutMs: 0 }))?.envelope.attempt).toBe(1);
  });

  it('discards a dead letter, recording message.discarded, and the id can be sent again', async () => {
    const { bus, store } = setup();
    await bus.send({ from: 'a', to: 'w', type: 't', id: 'job-1', body: 'first' });
    const delivery = await bus.receive('w', { timeoutMs: 0 });
    await bus.deadLetter(delivery?.deliveryId ?? '', 'broken');
    const discarded = await bus.discardDeadLetter('job-1');
    expect(discarded.map((d) => [d.mailbox, d.envelope.id, d.reason])).toEqual([['w', 'job-1', 'broken']]);
    expect(await bus.listDeadLetters()).toEqual([]);
    expect((await store.readEvents()).at(-1)).toMatchObject({ type: 'message.discarded', mailbox: 'w' });
    await bus.send({ from: 'a', to: 'w', type: 't', id: 'job-1', body: 'second' });
    expect((await bus.receive('w', { timeoutMs: 0 }))?.envelope.body).toBe('second');
  });

  it('rejects NOT_FOUND when discarding an id with no dead letter or a malformed id', async () => {
    const { bus } = setup();
    await bus.send({ from: 'a', to: 'w', type: 't', id: 'live' });
    await expectCode(bus.discardDeadLetter('live'), 'NOT_FOUND');
    await expectCode(bus.discardDeadLetter('nope'), 'NOT_FOUND');
    for (const bad of ['', 'has space', 'a'.repeat(500), 42 as unknown as string]) {
      await expectCode(bus.discardDeadLetter(bad), 'NOT_FOUND');
    }
    await bus.close();
    await expectCode(bus.discardDeadLetter('live'), 'BUS_CLOSED');
  });

  it('dead-letters a message whose leases expired max-attempts times instead of handing it out again', async () => {
    const { bus, clock, store } = setup();
    await bus.send({ from: 'a', to: 'w', type: 't', id: 'stuck' });
    for (let i = 0; i < 3; i++) {
      expect(await bus.receive('w', { timeoutMs: 0, leaseMs: 100 })).not.toBeNull();
      clock.advance(101);
    }
    expect(await bus.receive('w', { timeoutMs: 0 })).toBeNull();
    expect((await bus.listDeadLetters()).map((d) => d.envelope.id)).toEqual(['stuck']);
    expect((await store.readEvents()).some((e) => e.type === 'escalation' && e.attempts === 4)).toBe(true);
  });
});

describe('bus - close', () => {
  it('resolves waiting receives with null and rejects later calls with BUS_CLOSED', async () => {
    const { bus } = setup();
    const pending = bus.receive('w', { timeoutMs: 60_000 });
    await new Promise((r) => setImmediate(r));
    await bus.close();
    await bus.close();
    expect(await pending).toBeNull();
    await expectCode(bus.send({ from: 'a', to: 'w', type: 't' }), 'BUS_CLOSED');
  });
});
