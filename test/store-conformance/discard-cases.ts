import { expect } from 'vitest';
import type { DeadLetter, Store } from '../../src/store/store.js';
import { claimOne, envelope, expectCode, type ConformanceContext } from './conformance-context.js';

/** Appends `id` to `mailbox`, claims it and dead-letters it; resolves the letter. */
async function killed(store: Store, mailbox: string, id: string, body?: string): Promise<DeadLetter> {
  await store.append(mailbox, envelope(id, { to: mailbox, ...(body === undefined ? {} : { body }) }));
  const delivery = await claimOne(store, mailbox);
  return store.deadLetter(delivery.deliveryId, { reason: 'gave up' });
}

/** Discarding dead letters: removal, the event, NOT_FOUND, and the id freed for a new message. */
export function discardCases({ test, store }: ConformanceContext): void {
  test('discards a dead letter and resolves it', async () => {
    const letter = await killed(store(), 'bob', 'm');
    expect(await store().discardDeadLetter('m')).toEqual([letter]);
    expect(await store().listDeadLetters()).toEqual([]);
    expect(await store().count('bob')).toMatchObject({ total: 0, deadLetters: 0 });
    expect(await store().listMailboxes()).toEqual([]);
    expect(await store().claim('bob', { leaseMs: 1_000 })).toBeNull();
  });

  test('records message.discarded for a discarded letter', async () => {
    await killed(store(), 'bob', 'm');
    const before = await store().lastEventCursor();
    await store().discardDeadLetter('m');
    const events = (await store().readEvents({ after: before })).map(({ cursor: _c, at: _a, ...e }) => e);
    expect(events).toEqual([{ type: 'message.discarded', mailbox: 'bob', messageId: 'm' }]);
  });

  test('discards every dead letter with the envelope id, in every mailbox', async () => {
    await killed(store(), 'bob', 'shared');
    await killed(store(), 'carol', 'shared');
    const other = await killed(store(), 'bob', 'other');
    await store().append('dave', envelope('shared', { to: 'dave' }));
    const discarded = await store().discardDeadLetter('shared');
    expect(discarded.map((l) => [l.mailbox, l.envelope.id]).sort()).toEqual([
      ['bob', 'shared'],
      ['carol', 'shared'],
    ]);
    expect(await store().listDeadLetters()).toEqual([other]);
    expect(await store().count('carol')).toMatchObject({ total: 0, deadLetters: 0 });
    // A live message with the same id is not a dead letter: it stays.
    expect((await store().peek('dave')).map((m) => [m.envelope.id, m.state])).toEqual([['shared', 'ready']]);
    const types = (await store().readEvents()).filter((e) => e.type === 'message.discarded');
    expect(types.map((e) => ('mailbox' in e ? e.mailbox : '')).sort()).toEqual(['bob', 'carol']);
  });

  test('rejects NOT_FOUND for an unknown id, a live message and a letter already gone', async () => {
    await expectCode(() => store().discardDeadLetter('never-sent'), 'NOT_FOUND');
    await store().append('bob', envelope('leased'));
    expect((await claimOne(store(), 'bob')).envelope.id).toBe('leased');
    await expectCode(() => store().discardDeadLetter('leased'), 'NOT_FOUND');
    await store().append('bob', envelope('ready'));
    await expectCode(() => store().discardDeadLetter('ready'), 'NOT_FOUND');
    expect((await store().peek('bob')).map((m) => [m.envelope.id, m.state])).toEqual([
      ['leased', 'leased'],
      ['ready', 'ready'],
    ]);

    await killed(store(), 'carol', 'once');
    await store().discardDeadLetter('once');
    await expectCode(() => store().discardDeadLetter('once'), 'NOT_FOUND');
    await expectCode(() => store().requeueDeadLetter('once'), 'NOT_FOUND');
    await killed(store(), 'carol', 'requeued');
    await store().requeueDeadLetter('requeued');
    await expectCode(() => store().discardDeadLetter('requeued'), 'NOT_FOUND');
  });

  test('appends a new message under an id that was discarded', async () => {
    await killed(store(), 'bob', 'm', 'first');
    await store().discardDeadLetter('m');
    const again = await store().append('bob', envelope('m', { body: 'second' }));
    expect(again.isDuplicate).toBe(false);
    expect(await store().count('bob')).toMatchObject({ ready: 1, total: 1, deadLetters: 0 });
    const delivery = await claimOne(store(), 'bob');
    expect(delivery.envelope).toMatchObject({ id: 'm', body: 'second', attempt: 1 });
  });
}
