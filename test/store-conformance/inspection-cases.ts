import { expect } from 'vitest';
import { claimOne, envelope, type ConformanceContext } from './conformance-context.js';

/** Looking without claiming: peek, count, listMailboxes, nextDueAt. */
export function inspectionCases({ test, store, clock, passTime }: ConformanceContext): void {
  test('peeks in delivery order with state and availableAt, claiming nothing', async () => {
    await store().append('bob', envelope('low', { priority: 'low' }));
    await store().append('bob', envelope('high', { priority: 'high' }));
    await store().append('bob', envelope('normal-1'));
    await store().append('bob', envelope('normal-2'));
    const t0 = clock().now();
    await claimOne(store(), 'bob', 1_000);
    const delayed = await claimOne(store(), 'bob');
    await store().nack(delayed.deliveryId, { delayMs: 500 });

    const peeked = await store().peek('bob');
    expect(peeked.map((m) => [m.envelope.id, m.state, m.envelope.attempt])).toEqual([
      ['high', 'leased', 1],
      ['normal-1', 'delayed', 1],
      ['normal-2', 'ready', 0],
      ['low', 'ready', 0],
    ]);
    expect(peeked[0]?.availableAt).toBe(t0 + 1_000);
    expect(peeked[1]?.availableAt).toBe(t0 + 500);
    expect(peeked.every((m) => m.mailbox === 'bob')).toBe(true);
    const seqs = peeked.map((m) => m.seq);
    expect(new Set(seqs).size).toBe(4);
    expect((await store().peek('bob', { limit: 2 })).map((m) => m.envelope.id)).toEqual(['high', 'normal-1']);
    expect((await claimOne(store(), 'bob')).envelope.id).toBe('normal-2');
    expect(await store().peek('nobody')).toEqual([]);
  });

  test('reports leased and delayed messages as ready once their time has passed', async () => {
    await store().append('bob', envelope('leased'));
    await store().append('bob', envelope('delayed'));
    await claimOne(store(), 'bob', 1_000);
    await store().nack((await claimOne(store(), 'bob')).deliveryId, { delayMs: 500 });
    await passTime(1_000);
    expect((await store().peek('bob')).map((m) => m.state)).toEqual(['ready', 'ready']);
    expect(await store().count('bob')).toMatchObject({ ready: 2, delayed: 0, leased: 0, total: 2 });
  });

  test('counts ready, delayed, leased and dead letters of a mailbox', async () => {
    for (const id of ['a', 'b', 'c', 'd', 'e']) await store().append('bob', envelope(id));
    await claimOne(store(), 'bob');
    await store().nack((await claimOne(store(), 'bob')).deliveryId, { delayMs: 500 });
    await store().deadLetter((await claimOne(store(), 'bob')).deliveryId, { reason: 'x' });
    expect(await store().count('bob')).toEqual({
      mailbox: 'bob',
      ready: 2,
      delayed: 1,
      leased: 1,
      total: 4,
      deadLetters: 1,
    });
  });

  test('returns zero counts for a mailbox never used', async () => {
    expect(await store().count('nobody')).toEqual({
      mailbox: 'nobody',
      ready: 0,
      delayed: 0,
      leased: 0,
      total: 0,
      deadLetters: 0,
    });
  });

  test('lists only mailboxes holding messages or dead letters, sorted by name', async () => {
    await store().append('zed', envelope('z', { to: 'zed' }));
    await store().append('mid', envelope('m', { to: 'mid' }));
    await store().append('alpha', envelope('a', { to: 'alpha' }));
    await store().ack((await claimOne(store(), 'mid')).deliveryId);
    await store().deadLetter((await claimOne(store(), 'alpha')).deliveryId, { reason: 'x' });
    const listed = await store().listMailboxes();
    expect(listed.map((c) => c.mailbox)).toEqual(['alpha', 'zed']);
    expect(listed[0]).toMatchObject({ total: 0, deadLetters: 1 });
    expect(listed[1]).toMatchObject({ ready: 1, total: 1, deadLetters: 0 });
  });

  test('reports the earliest lease end or delay end as nextDueAt, or null', async () => {
    expect(await store().nextDueAt('bob')).toBeNull();
    await store().append('bob', envelope('a'));
    await store().append('bob', envelope('b'));
    expect(await store().nextDueAt('bob')).toBeNull();
    const t0 = clock().now();
    const leased = await claimOne(store(), 'bob', 1_000);
    expect(await store().nextDueAt('bob')).toBe(t0 + 1_000);
    const delayed = await claimOne(store(), 'bob', 1_000);
    await store().nack(delayed.deliveryId, { delayMs: 300 });
    expect(await store().nextDueAt('bob')).toBe(t0 + 300);
    await store().extend(leased.deliveryId, { leaseMs: 100 });
    expect(await store().nextDueAt('bob')).toBe(t0 + 100);
    await store().ack(leased.deliveryId);
    expect(await store().nextDueAt('bob')).toBe(t0 + 300);
    await passTime(300);
    await store().ack((await claimOne(store(), 'bob')).deliveryId);
    expect(await store().nextDueAt('bob')).toBeNull();
    expect(await store().nextDueAt('nobody')).toBeNull();
  });
}
