import { expect } from 'vitest';
import { formatDeliveryId, parseDeliveryId } from '../../src/store/delivery-id.js';
import type { Store } from '../../src/store/store.js';
import { claimOne, envelope, expectCode, type ConformanceContext } from './conformance-context.js';

const MALFORMED_DELIVERY_IDS = [
  '',
  'nope',
  'bob:missing:1',
  'bob:m:0',
  'bob:m:-1',
  'bob:m:1',
  'bob:m:1:1.5',
  'bob:m:1:x',
  'bob:m:0:1',
  'bob:m:x:1',
  'bob:m:1:2:3',
  ':::',
  'bob/../x:m:1:1',
  'x'.repeat(10_000),
];

/** Every verb that takes a delivery id, so each error case is checked against all of them. */
export function deliveryVerbs(store: Store): Record<string, (deliveryId: string) => Promise<unknown>> {
  return {
    ack: (id) => store.ack(id),
    nack: (id) => store.nack(id, { delayMs: 0 }),
    extend: (id) => store.extend(id, { leaseMs: 1_000 }),
    deadLetter: (id) => store.deadLetter(id, { reason: 'test' }),
  };
}

/** Leases: exclusivity, expiry, redelivery, ack/nack/extend and their errors. */
export function leaseCases({ test, store, clock, passTime }: ConformanceContext): void {
  test('does not hand out a leased message again while its lease runs', async () => {
    await store().append('bob', envelope('first'));
    await claimOne(store(), 'bob', 1_000);
    await store().append('bob', envelope('second'));
    expect((await claimOne(store(), 'bob', 1_000)).envelope.id).toBe('second');
    await passTime(999);
    expect(await store().claim('bob', { leaseMs: 1_000 })).toBeNull();
  });

  test('redelivers a message with the next attempt when its lease expires', async () => {
    await store().append('bob', envelope('m'));
    const first = await claimOne(store(), 'bob', 1_000);
    await passTime(1_000);
    const second = await claimOne(store(), 'bob', 1_000);
    expect(second.envelope.id).toBe('m');
    expect(second.envelope.attempt).toBe(2);
    expect(second.deliveryId).not.toBe(first.deliveryId);
  });

  test('counts attempts across nack, lease expiry and claim', async () => {
    await store().append('bob', envelope('m'));
    const first = await claimOne(store(), 'bob');
    expect(first.envelope.attempt).toBe(1);
    await store().nack(first.deliveryId, { delayMs: 0 });
    expect((await claimOne(store(), 'bob')).envelope.attempt).toBe(2);
    await passTime(1_000);
    expect((await claimOne(store(), 'bob')).envelope.attempt).toBe(3);
    const [peeked] = await store().peek('bob');
    expect(peeked?.envelope.attempt).toBe(3);
  });

  test('removes a message acked within its lease', async () => {
    await store().append('bob', envelope('m'));
    const delivery = await claimOne(store(), 'bob', 1_000);
    await passTime(999);
    await store().ack(delivery.deliveryId);
    expect((await store().count('bob')).total).toBe(0);
    expect(await store().peek('bob')).toEqual([]);
    await passTime(10_000);
    expect(await store().claim('bob', { leaseMs: 1_000 })).toBeNull();
  });

  test('rejects LEASE_EXPIRED when acking after the lease passed, and keeps the message', async () => {
    await store().append('bob', envelope('m'));
    const delivery = await claimOne(store(), 'bob', 1_000);
    await passTime(1_000);
    await expectCode(() => store().ack(delivery.deliveryId), 'LEASE_EXPIRED');
    expect((await store().count('bob')).total).toBe(1);
    expect((await claimOne(store(), 'bob')).envelope.attempt).toBe(2);
  });

  test('rejects LEASE_EXPIRED on nack, extend and dead-letter after the lease passed', async () => {
    await store().append('bob', envelope('m'));
    const delivery = await claimOne(store(), 'bob', 1_000);
    await passTime(1_500);
    for (const verb of Object.values(deliveryVerbs(store()))) {
      await expectCode(() => verb(delivery.deliveryId), 'LEASE_EXPIRED');
    }
  });

  test('rejects LEASE_EXPIRED for a stale delivery id after the message was claimed again', async () => {
    await store().append('bob', envelope('m'));
    const stale = await claimOne(store(), 'bob', 1_000);
    await passTime(1_000);
    const fresh = await claimOne(store(), 'bob', 1_000);
    for (const verb of Object.values(deliveryVerbs(store()))) {
      await expectCode(() => verb(stale.deliveryId), 'LEASE_EXPIRED');
    }
    await store().ack(fresh.deliveryId);
    expect((await store().count('bob')).total).toBe(0);
  });

  test('rejects LEASE_EXPIRED when a nacked delivery is used again', async () => {
    await store().append('bob', envelope('m'));
    const delivery = await claimOne(store(), 'bob');
    await store().nack(delivery.deliveryId, { delayMs: 5_000 });
    await expectCode(() => store().ack(delivery.deliveryId), 'LEASE_EXPIRED');
    await expectCode(() => store().extend(delivery.deliveryId, { leaseMs: 1_000 }), 'LEASE_EXPIRED');
  });

  test('rejects NOT_FOUND when the same delivery is acked twice', async () => {
    await store().append('bob', envelope('m'));
    const delivery = await claimOne(store(), 'bob');
    await store().ack(delivery.deliveryId);
    await expectCode(() => store().ack(delivery.deliveryId), 'NOT_FOUND');
  });

  test('rejects NOT_FOUND for unknown, malformed and never-issued delivery ids', async () => {
    await store().append('bob', envelope('m'));
    const delivery = await claimOne(store(), 'bob');
    const ref = parseDeliveryId(delivery.deliveryId);
    const neverIssued = [
      formatDeliveryId({ ...ref, attempt: ref.attempt + 1 }),
      formatDeliveryId({ ...ref, seq: ref.seq + 1_000 }),
      formatDeliveryId({ ...ref, envelopeId: 'other' }),
    ];
    for (const [name, verb] of Object.entries(deliveryVerbs(store()))) {
      for (const id of [...MALFORMED_DELIVERY_IDS, ...neverIssued]) {
        await expectCode(() => verb(id), 'NOT_FOUND').catch((err: unknown) => {
          throw new Error(`${name}(${JSON.stringify(id.slice(0, 40))}): ${String(err)}`, { cause: err });
        });
      }
    }
    await store().ack(delivery.deliveryId);
  });

  test('keeps a nacked message unclaimable until its delay passes', async () => {
    await store().append('bob', envelope('m'));
    const delivery = await claimOne(store(), 'bob');
    await store().nack(delivery.deliveryId, { delayMs: 500 });
    expect(await store().claim('bob', { leaseMs: 1_000 })).toBeNull();
    await passTime(499);
    expect(await store().claim('bob', { leaseMs: 1_000 })).toBeNull();
    await passTime(1);
    expect((await claimOne(store(), 'bob')).envelope.attempt).toBe(2);
  });

  test('makes a message claimable at once when nacked without delay', async () => {
    await store().append('bob', envelope('m'));
    const delivery = await claimOne(store(), 'bob');
    await store().nack(delivery.deliveryId, { delayMs: 0 });
    expect((await claimOne(store(), 'bob')).envelope.id).toBe('m');
  });

  test('hands out a nacked message in its original priority-then-send place', async () => {
    await store().append('bob', envelope('first'));
    await store().append('bob', envelope('second'));
    const first = await claimOne(store(), 'bob');
    await store().nack(first.deliveryId, { delayMs: 0 });
    expect((await claimOne(store(), 'bob')).envelope.id).toBe('first');
  });

  test('pushes the lease end when extended', async () => {
    await store().append('bob', envelope('m'));
    const delivery = await claimOne(store(), 'bob', 1_000);
    await passTime(800);
    const extended = await store().extend(delivery.deliveryId, { leaseMs: 1_000 });
    expect(extended.deliveryId).toBe(delivery.deliveryId);
    expect(extended.envelope.attempt).toBe(1);
    expect(extended.leaseUntil).toBe(clock().now() + 1_000);
    await passTime(900);
    expect(await store().claim('bob', { leaseMs: 1_000 })).toBeNull();
    await store().ack(delivery.deliveryId);
    expect((await store().count('bob')).total).toBe(0);
  });

  test('lets an extended lease expire at its new end', async () => {
    await store().append('bob', envelope('m'));
    const delivery = await claimOne(store(), 'bob', 1_000);
    await store().extend(delivery.deliveryId, { leaseMs: 3_000 });
    await passTime(3_000);
    expect((await claimOne(store(), 'bob')).envelope.attempt).toBe(2);
  });
}
