import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../test/fakes/fake-clock.js';
import {
  deleteNamespace,
  natsUnavailableReason,
  SHARED_NATS,
  uniquePrefix,
} from '../../../test/fixtures/nats-server.js';
import { envelope } from '../../../test/store-conformance/conformance-context.js';
import { describeStoreConformance } from '../../../test/store-conformance/store-conformance.js';
import { parseNatsUrl } from './nats-location.js';
import { NatsStore } from './nats-store.js';

// Every store gets its own prefix on the shared server; its streams are deleted after the case.
const unavailable = await natsUnavailableReason();
const created: string[] = [];

function openStore(clock: FakeClock, options: { prefix?: string; retain?: number } = {}): Promise<NatsStore> {
  const prefix = options.prefix ?? uniquePrefix('store');
  if (!created.includes(prefix)) created.push(prefix);
  const retain = options.retain === undefined ? '' : `&retain=${options.retain}`;
  return NatsStore.open({
    location: parseNatsUrl(`nats://${SHARED_NATS}?prefix=${prefix}${retain}`),
    clock,
    isClockTrusted: true,
  });
}

afterEach(async () => {
  for (const prefix of created.splice(0)) await deleteNamespace(SHARED_NATS, prefix);
});
afterAll(async () => {
  for (const prefix of created.splice(0)) await deleteNamespace(SHARED_NATS, prefix);
});

describe.skipIf(unavailable !== null)(`NatsStore on ${SHARED_NATS}`, () => {
  describeStoreConformance('nats', (clock) => openStore(clock));

  describe('NatsStore - journal retention', () => {
    it('trims old records but keeps every live and dead message, also for a hub opened afterwards', async () => {
      const clock = new FakeClock();
      const prefix = uniquePrefix('trim');
      await using store = await openStore(clock, { prefix, retain: 10 });
      for (let i = 0; i < 8; i++) await store.append('bob', envelope(`done-${i}`));
      await store.append('bob', envelope('leased'));
      await store.append('bob', envelope('dead'));
      for (let i = 0; i < 8; i++) {
        const delivery = await store.claim('bob', { leaseMs: 60_000 });
        if (delivery !== null) await store.ack(delivery.deliveryId);
      }
      const leased = await store.claim('bob', { leaseMs: 60_000 });
      const dying = await store.claim('bob', { leaseMs: 60_000 });
      if (leased === null || dying === null) return expect.fail('expected two claimable messages');
      await store.deadLetter(dying.deliveryId, { reason: 'broken' });
      await store.append('bob', envelope('fresh'));
      for (let i = 0; i < 12; i++) await store.appendEvent({ type: 'task.changed', data: { n: i } });

      const last = await store.lastEventCursor();
      expect(await store.trim()).toBeGreaterThan(0);
      const events = await store.readEvents();
      expect(events.every((e) => e.cursor > last - 10 || e.type !== 'task.changed')).toBe(true);
      expect(events.filter((e) => e.type === 'message.acked')).toEqual([]);

      await using other = await openStore(clock, { prefix });
      for (const hub of [store, other]) {
        expect((await hub.peek('bob')).map((m) => [m.envelope.id, m.state])).toEqual([
          ['leased', 'leased'],
          ['fresh', 'ready'],
        ]);
        expect((await hub.listDeadLetters()).map((l) => l.envelope.id)).toEqual(['dead']);
        expect(await hub.append('bob', envelope('leased'))).toMatchObject({ isDuplicate: true });
      }
      await other.ack(leased.deliveryId);
      expect(await other.requeueDeadLetter('dead')).toHaveLength(1);
      expect((await other.count('bob')).total).toBe(2);
    });
  });

  describe('NatsStore - discard across hubs', () => {
    it('a letter one hub discards is gone for the other, which may send the id again', async () => {
      const clock = new FakeClock();
      const prefix = uniquePrefix('discard');
      await using store = await openStore(clock, { prefix });
      await using other = await openStore(clock, { prefix });
      await store.append('bob', envelope('m', { body: 'first' }));
      const delivery = await store.claim('bob', { leaseMs: 60_000 });
      if (delivery === null) return expect.fail('expected a claimable message');
      await store.deadLetter(delivery.deliveryId, { reason: 'broken' });
      expect((await other.listDeadLetters()).map((l) => l.envelope.id)).toEqual(['m']);

      expect((await store.discardDeadLetter('m')).map((l) => l.envelope.body)).toEqual(['first']);
      expect(await other.listDeadLetters()).toEqual([]);
      expect(await other.listMailboxes()).toEqual([]);
      expect(await other.append('bob', envelope('m', { body: 'second' }))).toMatchObject({
        isDuplicate: false,
      });
      expect((await store.peek('bob')).map((m) => m.envelope.body)).toEqual(['second']);
      const events = await other.readEvents();
      expect(events.filter((e) => e.type === 'message.discarded')).toHaveLength(1);
    });
  });
});
