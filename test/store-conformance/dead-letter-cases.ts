import { expect } from 'vitest';
import { claimOne, envelope, expectCode, type ConformanceContext } from './conformance-context.js';

/** Dead letters: moving, listing, requeueing. */
export function deadLetterCases({ test, store, clock, passTime }: ConformanceContext): void {
  test('moves a delivered message to the dead letters with its reason', async () => {
    await store().append('bob', envelope('m'));
    const delivery = await claimOne(store(), 'bob');
    const letter = await store().deadLetter(delivery.deliveryId, { reason: 'handler failed 3 times' });
    expect(letter).toEqual({
      mailbox: 'bob',
      envelope: { ...envelope('m'), attempt: 1 },
      reason: 'handler failed 3 times',
      deadAt: clock().now(),
    });
    expect(await store().count('bob')).toMatchObject({ total: 0, deadLetters: 1 });
    expect(await store().claim('bob', { leaseMs: 1_000 })).toBeNull();
    await expectCode(() => store().ack(delivery.deliveryId), 'NOT_FOUND');
    expect(await store().listDeadLetters()).toEqual([letter]);
  });

  test('lists dead letters oldest first, by mailbox and up to a limit', async () => {
    for (const [mailbox, id] of [
      ['bob', 'b-1'],
      ['carol', 'c-1'],
      ['bob', 'b-2'],
    ] as const) {
      await store().append(mailbox, envelope(id, { to: mailbox }));
      const delivery = await claimOne(store(), mailbox);
      await store().deadLetter(delivery.deliveryId, { reason: `reason ${id}` });
      await passTime(10);
    }
    expect((await store().listDeadLetters()).map((l) => l.envelope.id)).toEqual(['b-1', 'c-1', 'b-2']);
    expect((await store().listDeadLetters({ mailbox: 'bob' })).map((l) => l.envelope.id)).toEqual([
      'b-1',
      'b-2',
    ]);
    expect((await store().listDeadLetters({ limit: 2 })).map((l) => l.envelope.id)).toEqual(['b-1', 'c-1']);
    expect(await store().listDeadLetters({ mailbox: 'nobody' })).toEqual([]);
  });

  test('requeues every dead letter with an envelope id, with attempt 0', async () => {
    for (const mailbox of ['bob', 'carol']) {
      await store().append(mailbox, envelope('shared', { to: mailbox }));
      const delivery = await claimOne(store(), mailbox);
      await store().nack(delivery.deliveryId, { delayMs: 0 });
      await store().deadLetter((await claimOne(store(), mailbox)).deliveryId, { reason: 'gave up' });
    }
    const requeued = await store().requeueDeadLetter('shared');
    expect(requeued.map((l) => [l.mailbox, l.envelope.id, l.reason]).sort()).toEqual([
      ['bob', 'shared', 'gave up'],
      ['carol', 'shared', 'gave up'],
    ]);
    expect(await store().listDeadLetters()).toEqual([]);
    for (const mailbox of ['bob', 'carol']) {
      const [peeked] = await store().peek(mailbox);
      expect(peeked).toMatchObject({ state: 'ready', envelope: { id: 'shared', attempt: 0 } });
      expect((await claimOne(store(), mailbox)).envelope.attempt).toBe(1);
    }
  });

  test('rejects NOT_FOUND when requeueing an id that has no dead letter', async () => {
    await store().append('bob', envelope('live'));
    await expectCode(() => store().requeueDeadLetter('live'), 'NOT_FOUND');
    await expectCode(() => store().requeueDeadLetter('never-sent'), 'NOT_FOUND');
  });
}
