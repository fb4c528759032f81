import { expect } from 'vitest';
import { PRIORITIES, type Priority } from '../../src/core/envelope.js';
import { claimOne, envelope, type ConformanceContext } from './conformance-context.js';

/** Appending and claiming: order, idempotency, attempts, delivery ids. */
export function messageCases({ test, store, clock }: ConformanceContext): void {
  test('hands out messages by priority, then in send order', async () => {
    const sends: [string, Priority][] = [
      ['low-1', 'low'],
      ['normal-1', 'normal'],
      ['critical-1', 'critical'],
      ['normal-2', 'normal'],
      ['high-1', 'high'],
      ['low-2', 'low'],
      ['critical-2', 'critical'],
    ];
    for (const [id, priority] of sends) await store().append('bob', envelope(id, { priority }));
    const claimed: string[] = [];
    for (
      let d = await store().claim('bob', { leaseMs: 1_000 });
      d;
      d = await store().claim('bob', { leaseMs: 1_000 })
    ) {
      claimed.push(d.envelope.id);
    }
    expect(claimed).toEqual(['critical-1', 'critical-2', 'high-1', 'normal-1', 'normal-2', 'low-1', 'low-2']);
  });

  test('claims each of many messages exactly once in priority-then-send order', async () => {
    const sent = Array.from({ length: 200 }, (_, i) => ({
      id: `m-${i}`,
      priority: PRIORITIES[(i * 7) % PRIORITIES.length] ?? 'normal',
    }));
    for (const m of sent) await store().append('bob', envelope(m.id, { priority: m.priority }));
    const rank = (p: Priority): number => PRIORITIES.indexOf(p);
    const expected = sent
      .map((m, i) => ({ ...m, i }))
      .sort((a, b) => rank(a.priority) - rank(b.priority) || a.i - b.i)
      .map((m) => m.id);
    const claimed: string[] = [];
    for (
      let d = await store().claim('bob', { leaseMs: 60_000 });
      d;
      d = await store().claim('bob', { leaseMs: 60_000 })
    ) {
      claimed.push(d.envelope.id);
    }
    expect(claimed).toEqual(expected);
  });

  test('returns increasing seqs in send order', async () => {
    const first = await store().append('bob', envelope('a'));
    const second = await store().append('bob', envelope('b'));
    const third = await store().append('carol', envelope('c'));
    expect(second.seq).toBeGreaterThan(first.seq);
    expect(third.seq).toBeGreaterThan(second.seq);
  });

  test('returns the original seq and keeps one message when an envelope id is appended twice', async () => {
    const first = await store().append('bob', envelope('same', { body: 'original' }));
    const again = await store().append('bob', envelope('same', { body: 'changed' }));
    expect(first.isDuplicate).toBe(false);
    expect(again).toEqual({ seq: first.seq, isDuplicate: true });
    expect((await store().count('bob')).total).toBe(1);
    const delivery = await claimOne(store(), 'bob');
    expect(delivery.envelope.body).toBe('original');
    expect(await store().claim('bob', { leaseMs: 1_000 })).toBeNull();
  });

  test('reports a duplicate while the first copy is leased', async () => {
    const first = await store().append('bob', envelope('same'));
    await claimOne(store(), 'bob');
    expect(await store().append('bob', envelope('same'))).toEqual({ seq: first.seq, isDuplicate: true });
    expect((await store().count('bob')).total).toBe(1);
  });

  test('appends a new message under an id that was acked', async () => {
    const first = await store().append('bob', envelope('same', { body: 'first' }));
    await store().ack((await claimOne(store(), 'bob')).deliveryId);
    const again = await store().append('bob', envelope('same', { body: 'second' }));
    expect(again.isDuplicate).toBe(false);
    expect(again.seq).toBeGreaterThan(first.seq);
    expect((await claimOne(store(), 'bob')).envelope).toMatchObject({ body: 'second', attempt: 1 });
  });

  test('keeps two messages when one envelope id is appended to two mailboxes', async () => {
    const toBob = await store().append('bob', envelope('shared'));
    const toCarol = await store().append('carol', envelope('shared', { to: 'carol' }));
    expect(toBob.isDuplicate).toBe(false);
    expect(toCarol.isDuplicate).toBe(false);
    expect(toCarol.seq).not.toBe(toBob.seq);
    expect((await claimOne(store(), 'bob')).envelope.id).toBe('shared');
    expect((await claimOne(store(), 'carol')).envelope.id).toBe('shared');
  });

  test('stores attempt 0 and hands out attempt 1 on the first delivery', async () => {
    await store().append('bob', envelope('m', { attempt: 5 }));
    const [peeked] = await store().peek('bob');
    expect(peeked?.envelope.attempt).toBe(0);
    expect((await claimOne(store(), 'bob')).envelope.attempt).toBe(1);
  });

  test('returns the appended envelope unchanged apart from attempt', async () => {
    const sent = envelope('full', {
      priority: 'high',
      thread: 'thread-1',
      headers: { 'x-trace': 'abc', 'content-type': 'text/plain' },
      body: 'héllo\nwörld',
    });
    await store().append('bob', sent);
    expect((await claimOne(store(), 'bob')).envelope).toEqual({ ...sent, attempt: 1 });
  });

  test('resolves null when claiming from an empty or never-used mailbox', async () => {
    expect(await store().claim('nobody', { leaseMs: 1_000 })).toBeNull();
    await store().append('bob', envelope('m'));
    const delivery = await claimOne(store(), 'bob');
    await store().ack(delivery.deliveryId);
    expect(await store().claim('bob', { leaseMs: 1_000 })).toBeNull();
  });

  test('names each delivery <mailbox>:<envelope id>:<seq>:<attempt> and leases it for leaseMs', async () => {
    const { seq } = await store().append('bob', envelope('m-1'));
    const delivery = await claimOne(store(), 'bob', 2_500);
    expect(delivery.deliveryId).toBe(`bob:m-1:${seq}:1`);
    const [peeked] = await store().peek('bob');
    expect(peeked?.seq).toBe(seq);
    expect(delivery.mailbox).toBe('bob');
    expect(delivery.leaseUntil).toBe(clock().now() + 2_500);
  });
}
