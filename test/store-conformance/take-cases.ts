import { expect } from 'vitest';
import { claimOne, envelope, expectCode, type ConformanceContext } from './conformance-context.js';

/** take: removing a claimable message by envelope id without a lease, and every case where it must not. */
export function takeCases({ test, store, passTime }: ConformanceContext): void {
  const eventsOf = async (): Promise<unknown[]> =>
    (await store().readEvents()).map(({ cursor: _c, at: _a, ...event }) => event);

  test('takes a ready message: removed, its id gone, message.acked recorded', async () => {
    await store().append('bob', envelope('m'));
    expect(await store().take('bob', 'm')).toBe(true);
    expect(await store().count('bob')).toMatchObject({ total: 0, deadLetters: 0 });
    expect(await store().peek('bob')).toEqual([]);
    expect(await store().claim('bob', { leaseMs: 1_000 })).toBeNull();
    expect((await eventsOf()).at(-1)).toEqual({ type: 'message.acked', mailbox: 'bob', messageId: 'm' });
    expect(await store().take('bob', 'm')).toBe(false);
  });

  test('keeps the claim order of the other messages when one is taken', async () => {
    for (const id of ['a', 'b', 'c']) await store().append('bob', envelope(id));
    expect(await store().take('bob', 'b')).toBe(true);
    expect((await claimOne(store(), 'bob')).envelope.id).toBe('a');
    expect((await claimOne(store(), 'bob')).envelope.id).toBe('c');
    expect(await store().claim('bob', { leaseMs: 1_000 })).toBeNull();
  });

  test('resolves false and records nothing for an id never sent', async () => {
    await store().append('bob', envelope('m'));
    const before = await store().lastEventCursor();
    expect(await store().take('bob', 'never-sent')).toBe(false);
    expect(await store().take('nobody', 'm')).toBe(false);
    expect(await store().lastEventCursor()).toBe(before);
    expect((await store().count('bob')).total).toBe(1);
  });

  test('resolves false for a message in another mailbox and leaves it there', async () => {
    await store().append('bob', envelope('m'));
    await store().append('carol', envelope('other', { to: 'carol' }));
    expect(await store().take('carol', 'm')).toBe(false);
    expect((await claimOne(store(), 'bob')).envelope.id).toBe('m');
  });

  test('resolves false while a live lease holds the message, and the holder can still ack', async () => {
    await store().append('bob', envelope('m'));
    const delivery = await claimOne(store(), 'bob', 1_000);
    await passTime(999);
    const before = await store().lastEventCursor();
    expect(await store().take('bob', 'm')).toBe(false);
    expect(await store().lastEventCursor()).toBe(before);
    expect(await store().peek('bob')).toMatchObject([{ state: 'leased', envelope: { id: 'm' } }]);
    await store().ack(delivery.deliveryId);
    expect((await store().count('bob')).total).toBe(0);
  });

  test('takes a message whose lease expired; the old delivery then rejects NOT_FOUND', async () => {
    await store().append('bob', envelope('m'));
    const delivery = await claimOne(store(), 'bob', 1_000);
    await passTime(1_000);
    expect(await store().take('bob', 'm')).toBe(true);
    expect((await store().count('bob')).total).toBe(0);
    expect(await store().nextDueAt('bob')).toBeNull();
    await expectCode(() => store().ack(delivery.deliveryId), 'NOT_FOUND');
    await expectCode(() => store().nack(delivery.deliveryId, { delayMs: 0 }), 'NOT_FOUND');
  });

  test('resolves false for a nacked message until its delay passes, then takes it', async () => {
    await store().append('bob', envelope('m'));
    const delivery = await claimOne(store(), 'bob');
    await store().nack(delivery.deliveryId, { delayMs: 500 });
    expect(await store().take('bob', 'm')).toBe(false);
    await passTime(499);
    expect(await store().take('bob', 'm')).toBe(false);
    expect(await store().peek('bob')).toMatchObject([{ state: 'delayed', envelope: { id: 'm' } }]);
    await passTime(1);
    expect(await store().take('bob', 'm')).toBe(true);
    expect((await store().count('bob')).total).toBe(0);
    expect(await store().claim('bob', { leaseMs: 1_000 })).toBeNull();
  });

  test('resolves false for a dead-lettered id and keeps the dead letter', async () => {
    await store().append('bob', envelope('m'));
    const delivery = await claimOne(store(), 'bob');
    const letter = await store().deadLetter(delivery.deliveryId, { reason: 'broken' });
    expect(await store().take('bob', 'm')).toBe(false);
    expect(await store().listDeadLetters()).toEqual([letter]);
    expect(await store().count('bob')).toMatchObject({ total: 0, deadLetters: 1 });
    expect(await store().requeueDeadLetter('m')).toHaveLength(1);
  });

  test('appends a new message under an id that was taken', async () => {
    const first = await store().append('bob', envelope('m', { body: 'first' }));
    expect(await store().take('bob', 'm')).toBe(true);
    const again = await store().append('bob', envelope('m', { body: 'second' }));
    expect(again.isDuplicate).toBe(false);
    expect(again.seq).toBeGreaterThan(first.seq);
    const delivery = await claimOne(store(), 'bob');
    expect(delivery.envelope).toMatchObject({ id: 'm', body: 'second', attempt: 1 });
  });
}
