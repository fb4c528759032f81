import { describe, expect, it } from 'vitest';
import { memoryBus } from '../../test/fixtures/memory-bus.js';
import { MailWatchers } from './mail-watch.js';

/** Lets pending promise callbacks run. */
const settleMicrotasks = async (): Promise<void> => {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('bus.watchMail', () => {
  it('keeps a send that came before the wait, and wakes a wait on the next send to that mailbox only', async () => {
    const { bus } = memoryBus();
    using watch = bus.watchMail('w');
    await bus.send({ to: 'w', from: 'a', type: 't', body: 'early' });
    expect(await watch.next({ timeoutMs: 0 })).toBe(true);
    let woke: boolean | undefined;
    void watch.next().then((r) => (woke = r));
    await bus.send({ to: 'other', from: 'a', type: 't', body: 'not for w' });
    await settleMicrotasks();
    expect(woke).toBeUndefined();
    await bus.send({ to: 'w', from: 'a', type: 't', body: 'now' });
    await settleMicrotasks();
    expect(woke).toBe(true);
  });

  it('wakes when a delayed message becomes due, and at the lease end of a claimed one', async () => {
    const { bus, clock } = memoryBus({ leaseMs: 5_000 });
    await bus.send({ id: 'm', to: 'w', from: 'a', type: 't', body: 'x' });
    const delivery = await bus.receive('w', { timeoutMs: 0 });
    if (delivery === null) throw new Error('expected the message');
    using watch = bus.watchMail('w');
    let woke: boolean | undefined;
    void watch.next().then((r) => (woke = r));
    await settleMicrotasks();
    clock.advance(4_999);
    await settleMicrotasks();
    expect(woke).toBeUndefined();
    clock.advance(1);
    await settleMicrotasks();
    expect(woke).toBe(true);

    const again = await bus.receive('w', { timeoutMs: 0 });
    if (again === null) throw new Error('expected the redelivery');
    await bus.nack(again.deliveryId, { delayMs: 2_000 });
    expect(await watch.next({ timeoutMs: 0 })).toBe(true); // the nack itself notifies
    woke = undefined;
    void watch.next().then((r) => (woke = r));
    await settleMicrotasks();
    clock.advance(2_000);
    await settleMicrotasks();
    expect(woke).toBe(true);
  });

  it('resolves false at its timeout, on abort, and when the watch or the bus closes', async () => {
    const { bus, clock } = memoryBus();
    const watch = bus.watchMail('w');
    const timedOut = watch.next({ timeoutMs: 1_000 });
    await settleMicrotasks();
    clock.advance(1_000);
    expect(await timedOut).toBe(false);
    const stop = new AbortController();
    const aborted = watch.next({ signal: stop.signal });
    stop.abort();
    expect(await aborted).toBe(false);
    const closed = watch.next();
    await settleMicrotasks();
    watch.close();
    expect(await closed).toBe(false);
    const other = bus.watchMail('w');
    const ended = other.next();
    await settleMicrotasks();
    await bus.close();
    expect(await ended).toBe(false);
    expect(() => bus.watchMail('w')).toThrow(/closed/);
  });

  it('refuses a bad mailbox name', () => {
    const { bus } = memoryBus();
    expect(() => bus.watchMail('no spaces')).toThrow(
      expect.objectContaining({ code: 'MAILBOX_NAME_INVALID' }),
    );
  });
});

describe('MailWatchers', () => {
  it("calls only the named mailbox's watches, every watch for `null`, and unsubscribes idempotently", () => {
    const watchers = new MailWatchers();
    const calls: string[] = [];
    const offA = watchers.add('a', () => calls.push('a1'));
    watchers.add('a', () => calls.push('a2'));
    watchers.add('b', () => calls.push('b'));
    watchers.notify('a');
    watchers.notify('c');
    expect(calls).toEqual(['a1', 'a2']);
    calls.length = 0;
    watchers.notify(null);
    expect(calls.sort()).toEqual(['a1', 'a2', 'b']);
    offA();
    offA();
    calls.length = 0;
    watchers.notify('a');
    expect(calls).toEqual(['a2']);
  });

  it('lets a watch unsubscribe itself or another while being notified', () => {
    const watchers = new MailWatchers();
    const calls: string[] = [];
    const offs: (() => void)[] = [];
    offs.push(watchers.add('a', () => (calls.push('first'), offs.forEach((off) => off()))));
    offs.push(watchers.add('a', () => calls.push('second')));
    watchers.notify('a');
    watchers.notify('a');
    expect(calls).toEqual(['first', 'second']);
  });
});
