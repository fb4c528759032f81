import { expect } from 'vitest';
import type { BusEvent } from '../../src/core/events.js';
import {
  claimOne,
  envelope,
  nextWithin,
  take,
  iteratorOf,
  type ConformanceContext,
} from './conformance-context.js';

const taskEvent = (n: number): BusEvent => ({
  type: 'task.changed',
  data: { taskId: `t-${n}`, state: 'running' },
});

/** The event log: message events, appended events, reads, follows, cursors. */
export function eventCases({ test, store, clock, passTime }: ConformanceContext): void {
  test('records message events in the order they happen', async () => {
    await store().append(
      'bob',
      envelope('m', { priority: 'high', thread: 'th', headers: { source: 'x' }, body: 'b'.repeat(5000) }),
    );
    const first = await claimOne(store(), 'bob', 1_000);
    await store().extend(first.deliveryId, { leaseMs: 2_000 });
    await store().nack(first.deliveryId, { delayMs: 0 });
    const second = await claimOne(store(), 'bob', 1_000);
    await store().deadLetter(second.deliveryId, { reason: 'broken' });
    await store().requeueDeadLetter('m');
    await store().ack((await claimOne(store(), 'bob', 1_000)).deliveryId);
    const now = clock().now();
    const events = (await store().readEvents()).map(({ cursor: _c, at: _a, ...event }) => event);
    expect(events).toEqual([
      {
        type: 'message.sent',
        mailbox: 'bob',
        messageId: 'm',
        from: 'alice',
        messageType: 'note',
        priority: 'high',
        // What was sent stays readable after the message is acked: thread, headers, 4 KiB of body.
        thread: 'th',
        headers: { source: 'x' },
        body: 'b'.repeat(4096),
        isBodyCut: true,
      },
      { type: 'message.claimed', mailbox: 'bob', messageId: 'm', attempt: 1, leaseUntil: now + 1_000 },
      { type: 'message.lease_extended', mailbox: 'bob', messageId: 'm', leaseUntil: now + 2_000 },
      { type: 'message.nacked', mailbox: 'bob', messageId: 'm', delayMs: 0 },
      { type: 'message.claimed', mailbox: 'bob', messageId: 'm', attempt: 2, leaseUntil: now + 1_000 },
      { type: 'message.dead_lettered', mailbox: 'bob', messageId: 'm', reason: 'broken' },
      { type: 'message.requeued', mailbox: 'bob', messageId: 'm' },
      { type: 'message.claimed', mailbox: 'bob', messageId: 'm', attempt: 1, leaseUntil: now + 1_000 },
      { type: 'message.acked', mailbox: 'bob', messageId: 'm' },
    ]);
  });

  test('records nothing for a duplicate append', async () => {
    await store().append('bob', envelope('m'));
    await store().append('bob', envelope('m'));
    expect((await store().readEvents()).map((e) => e.type)).toEqual(['message.sent']);
  });

  test('appends events with strictly increasing cursors and the clock time', async () => {
    const first = await store().appendEvent(taskEvent(1));
    await passTime(250);
    const second = await store().appendEvent({
      type: 'escalation',
      mailbox: 'bob',
      messageId: 'm',
      attempts: 3,
      reason: 'max attempts',
    });
    expect(first).toMatchObject({ ...taskEvent(1), at: clock().now() - 250 });
    expect(second).toMatchObject({ type: 'escalation', attempts: 3, at: clock().now() });
    expect(first.cursor).toBeGreaterThan(0);
    expect(second.cursor).toBeGreaterThan(first.cursor);
    expect(await store().readEvents()).toEqual([first, second]);
  });

  test('reads events after a cursor, oldest first, at most limit', async () => {
    const stored = [];
    for (let n = 1; n <= 5; n++) stored.push(await store().appendEvent(taskEvent(n)));
    const [, second, third, fourth] = stored;
    expect(await store().readEvents({ after: second?.cursor ?? 0, limit: 2 })).toEqual([third, fourth]);
    expect(await store().readEvents({ limit: 1 })).toEqual(stored.slice(0, 1));
    expect(await store().readEvents({ after: stored.at(-1)?.cursor ?? 0 })).toEqual([]);
  });

  test('reports the newest cursor, 0 for an empty log', async () => {
    expect(await store().lastEventCursor()).toBe(0);
    await store().appendEvent(taskEvent(1));
    const last = await store().appendEvent(taskEvent(2));
    expect(await store().lastEventCursor()).toBe(last.cursor);
  });

  test('follows stored events, then live ones, and ends when aborted', async () => {
    const before = await store().appendEvent(taskEvent(1));
    const replayed = await store().appendEvent(taskEvent(2));
    const controller = new AbortController();
    const iterator = iteratorOf(store().followEvents({ after: before.cursor, signal: controller.signal }));
    expect(await take(iterator, 1)).toEqual([replayed]);
    const pending = take(iterator, 2);
    const live = await store().appendEvent(taskEvent(3));
    await store().append('bob', envelope('m'));
    const [third, fourth] = await pending;
    expect(third).toEqual(live);
    expect(fourth).toMatchObject({ type: 'message.sent', messageId: 'm' });
    const ending = nextWithin(iterator);
    controller.abort();
    expect((await ending).done).toBe(true);
  });

  test('follows from the start when no cursor is given', async () => {
    const first = await store().appendEvent(taskEvent(1));
    const controller = new AbortController();
    const iterator = iteratorOf(store().followEvents({ signal: controller.signal }));
    expect(await take(iterator, 1)).toEqual([first]);
    controller.abort();
    expect((await nextWithin(iterator)).done).toBe(true);
  });
}
