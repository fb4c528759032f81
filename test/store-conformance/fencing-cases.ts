import { expect } from 'vitest';
import type { Delivery } from '../../src/store/store.js';
import { claimOne, envelope, expectCode, type ConformanceContext } from './conformance-context.js';
import { deliveryVerbs } from './lease-cases.js';

/**
 * Fencing: a delivery id names one delivery forever. A holder of an older delivery of a message —
 * before it was dead-lettered and retried, or before it was acked and its id sent again — gets
 * LEASE_EXPIRED from every verb, and the newer delivery is untouched by the attempt.
 */
export function fencingCases({ test, store, passTime }: ConformanceContext): void {
  /** Checks that every verb refuses `stale` and that `fresh` still holds its lease, then acks it. */
  const expectFenced = async (stale: Delivery, fresh: Delivery): Promise<void> => {
    expect(fresh.deliveryId).not.toBe(stale.deliveryId);
    for (const [name, verb] of Object.entries(deliveryVerbs(store()))) {
      await expectCode(() => verb(stale.deliveryId), 'LEASE_EXPIRED').catch((err: unknown) => {
        throw new Error(`${name}(stale): ${String(err)}`, { cause: err });
      });
    }
    const [peeked] = await store().peek(fresh.mailbox);
    expect(peeked).toMatchObject({ state: 'leased', availableAt: fresh.leaseUntil });
    expect(peeked?.envelope.attempt).toBe(fresh.envelope.attempt);
    await store().ack(fresh.deliveryId);
    expect((await store().count(fresh.mailbox)).total).toBe(0);
  };

  test('fences a holder from before a dead-letter retry out of the retried delivery', async () => {
    await store().append('bob', envelope('m'));
    const first = await claimOne(store(), 'bob', 1_000);
    // The first holder stalls; its lease runs out and the next delivery is dead-lettered.
    await passTime(1_000);
    await store().deadLetter((await claimOne(store(), 'bob', 60_000)).deliveryId, { reason: 'gave up' });
    await store().requeueDeadLetter('m');
    const retried = await claimOne(store(), 'bob', 60_000);
    expect(retried.envelope.attempt).toBe(1);
    await expectFenced(first, retried);
  });

  test('fences every delivery of every earlier round after repeated dead-letter retries', async () => {
    await store().append('bob', envelope('m'));
    const earlier: Delivery[] = [];
    for (let round = 0; round < 3; round++) {
      const delivery = await claimOne(store(), 'bob', 60_000);
      earlier.push(delivery);
      await store().deadLetter(delivery.deliveryId, { reason: `round ${round}` });
      await store().requeueDeadLetter('m');
    }
    const current = await claimOne(store(), 'bob', 60_000);
    expect(new Set([...earlier, current].map((d) => d.deliveryId)).size).toBe(4);
    for (const stale of earlier) {
      await expectCode(() => store().ack(stale.deliveryId), 'LEASE_EXPIRED');
    }
    await expectFenced(earlier[0] ?? current, current);
  });

  test('fences a holder of an acked message out of a new message sent with the same id', async () => {
    await store().append('bob', envelope('m'));
    const first = await claimOne(store(), 'bob', 1_000);
    await store().ack(first.deliveryId);
    await store().append('bob', envelope('m'));
    const second = await claimOne(store(), 'bob', 60_000);
    expect(second.envelope.attempt).toBe(first.envelope.attempt);
    await expectFenced(first, second);
  });
}
