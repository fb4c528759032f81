import { expect } from 'vitest';
import { claimOne, envelope, waitFor, type ConformanceContext } from './conformance-context.js';

/** onAvailable: who hears about messages that may have become claimable. */
export function availableCases({ test, store }: ConformanceContext): void {
  test('notifies listeners with the mailbox after append, nack and requeue', async () => {
    const heard: (string | null)[] = [];
    const unsubscribe = store().onAvailable((mailbox) => heard.push(mailbox));
    await store().append('bob', envelope('m'));
    await waitFor(() => heard.includes('bob'));

    heard.length = 0;
    await store().nack((await claimOne(store(), 'bob')).deliveryId, { delayMs: 0 });
    await waitFor(() => heard.includes('bob'));

    await store().deadLetter((await claimOne(store(), 'bob')).deliveryId, { reason: 'x' });
    heard.length = 0;
    await store().requeueDeadLetter('m');
    await waitFor(() => heard.includes('bob'));
    unsubscribe();
  });

  test('stops notifying a listener after it unsubscribes', async () => {
    const kept: (string | null)[] = [];
    const dropped: (string | null)[] = [];
    const unsubscribeKept = store().onAvailable((mailbox) => kept.push(mailbox));
    const unsubscribe = store().onAvailable((mailbox) => dropped.push(mailbox));
    unsubscribe();
    unsubscribe();
    await store().append('bob', envelope('m'));
    await waitFor(() => kept.includes('bob'));
    expect(dropped).toEqual([]);
    unsubscribeKept();
  });
}
