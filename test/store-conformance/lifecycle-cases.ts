import { expect } from 'vitest';
import type { Store } from '../../src/store/store.js';
import {
  claimOne,
  envelope,
  expectCode,
  iteratorOf,
  nextWithin,
  type ConformanceContext,
} from './conformance-context.js';

/** Every async verb of the port, for checking behaviour after close. */
function asyncVerbs(store: Store, deliveryId: string): Record<string, () => Promise<unknown>> {
  return {
    append: () => store.append('bob', envelope('late')),
    claim: () => store.claim('bob', { leaseMs: 1_000 }),
    ack: () => store.ack(deliveryId),
    take: () => store.take('bob', 'm'),
    nack: () => store.nack(deliveryId, { delayMs: 0 }),
    extend: () => store.extend(deliveryId, { leaseMs: 1_000 }),
    deadLetter: () => store.deadLetter(deliveryId, { reason: 'x' }),
    peek: () => store.peek('bob'),
    count: () => store.count('bob'),
    listMailboxes: () => store.listMailboxes(),
    nextDueAt: () => store.nextDueAt('bob'),
    listDeadLetters: () => store.listDeadLetters(),
    requeueDeadLetter: () => store.requeueDeadLetter('m'),
    discardDeadLetter: () => store.discardDeadLetter('m'),
    kvGet: () => store.kvGet('k'),
    kvSet: () => store.kvSet('k', 1),
    kvDelete: () => store.kvDelete('k'),
    kvList: () => store.kvList(''),
    appendEvent: () => store.appendEvent({ type: 'agent.exited', data: {} }),
    readEvents: () => store.readEvents(),
    lastEventCursor: () => store.lastEventCursor(),
    kvWatch: () => iteratorOf(store.kvWatch('', { signal: new AbortController().signal })).next(),
    followEvents: () => iteratorOf(store.followEvents({ signal: new AbortController().signal })).next(),
  };
}

/** close(): idempotence, STORE_CLOSED afterwards, and what happens to running follows. */
export function lifecycleCases({ test, store }: ConformanceContext): void {
  test('resolves close twice and rejects every later call with STORE_CLOSED', async () => {
    await store().append('bob', envelope('m'));
    const delivery = await claimOne(store(), 'bob');
    await Promise.all([store().close(), store().close()]);
    await store().close();
    for (const [name, call] of Object.entries(asyncVerbs(store(), delivery.deliveryId))) {
      await expectCode(call, 'STORE_CLOSED').catch((err: unknown) => {
        throw new Error(`${name} after close: ${String(err)}`, { cause: err });
      });
    }
  });

  test('ends running watches and follows when closed', async () => {
    const signal = new AbortController().signal;
    const watch = iteratorOf(store().kvWatch('', { signal }));
    const follow = iteratorOf(store().followEvents({ signal }));
    const watching = nextWithin(watch);
    const following = nextWithin(follow);
    await store().close();
    expect((await watching).done).toBe(true);
    expect((await following).done).toBe(true);
  });

  test('closes through Symbol.asyncDispose', async () => {
    await store()[Symbol.asyncDispose]();
    await expectCode(() => store().count('bob'), 'STORE_CLOSED');
  });
}
