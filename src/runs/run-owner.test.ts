import { afterEach, describe, expect, it } from 'vitest';
import { isMusubiError } from '../core/errors.js';
import { MemoryStore } from '../store/memory/memory-store.js';
import { FakeClock } from '../../test/fakes/fake-clock.js';
import { RunOwners } from './run-owner.js';

const stores: MemoryStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

function setup(): {
  clock: FakeClock;
  store: MemoryStore;
  owners: (pid: number, alive?: Set<number>) => RunOwners;
} {
  const clock = new FakeClock();
  const store = new MemoryStore({ clock });
  stores.push(store);
  const owners = (pid: number, alive = new Set([1, 2, 3])): RunOwners =>
    new RunOwners({
      kv: store,
      clock,
      leaseMs: 30_000,
      self: { host: 'box', pid },
      isProcessAlive: (p) => alive.has(p),
    });
  return { clock, store, owners };
}

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    return isMusubiError(err) ? err.code : 'not a MusubiError';
  }
}

/** Lets the renewal's store write (started by a timer) finish. */
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 0));

describe('run owners', () => {
  it('refuses a second owner with RUN_ACTIVE while the first one holds and renews its claim', async () => {
    const { clock, owners } = setup();
    const first = await owners(1).claim('r1');
    const refused = owners(2)
      .claim('r1')
      .catch((e: unknown) => e);
    expect(await codeOf(refused.then((e) => Promise.reject(e)))).toBe('RUN_ACTIVE');
    expect(String((await refused) as Error)).toContain('process 1 on box');
    // Renewals every 10 s keep it held well past one lease.
    for (let i = 0; i < 9; i++) {
      clock.advance(10_000);
      await settle();
    }
    expect(await codeOf(owners(2).claim('r1'))).toBe('RUN_ACTIVE');
    expect(await owners(3).holderOf('r1')).toMatchObject({ host: 'box', pid: 1 });
    await first.release();
    expect(await owners(3).holderOf('r1')).toBeUndefined();
    const second = await owners(2).claim('r1');
    await second.release();
  });

  it('frees a run whose owner on another host stopped renewing, once its lease lapsed', async () => {
    const { clock, store, owners } = setup();
    const since = clock.now();
    // What a frozen or cut-off owner on another host left: a claim that is no longer renewed.
    await store.kvSet('run-owner/r1', {
      owner: 'far:7:x',
      host: 'far',
      pid: 7,
      since,
      expiresAt: since + 30_000,
    });
    expect(await codeOf(owners(2).claim('r1'))).toBe('RUN_ACTIVE');
    clock.advance(29_999);
    expect(await codeOf(owners(2).claim('r1'))).toBe('RUN_ACTIVE');
    clock.advance(1);
    const taken = await owners(2).claim('r1');
    expect(await owners(3).holderOf('r1')).toMatchObject({ host: 'box', pid: 2 });
    await taken.release();
  });

  it('tells an owner whose claim was taken over that it lost the run, and leaves the new claim alone', async () => {
    const { clock, store, owners } = setup();
    const claim = await owners(1).claim('r1');
    const now = clock.now();
    await store.kvSet('run-owner/r1', {
      owner: 'box:2:y',
      host: 'box',
      pid: 2,
      since: now,
      expiresAt: now + 30_000,
    });
    expect(claim.lost.aborted).toBe(false);
    clock.advance(10_000);
    await settle();
    expect(claim.lost.aborted).toBe(true);
    await claim.release();
    expect(await owners(3).holderOf('r1')).toMatchObject({ pid: 2 });
  });

  it('takes over at once from an owner of this host whose process died (kill -9)', async () => {
    const { owners } = setup();
    await owners(1).claim('r1');
    // pid 1 is gone: the claim it left is not a live one, long before its lease would lapse.
    const alive = new Set([2]);
    const next = await owners(2, alive).claim('r1');
    expect(await owners(3, alive).holderOf('r1')).toMatchObject({ pid: 2 });
    await next.release();
  });

  it('lets exactly one of two claims made in the same instant win', async () => {
    const { owners } = setup();
    const results = await Promise.allSettled([owners(1).claim('r1'), owners(2).claim('r1')]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const lost = results.find((r) => r.status === 'rejected');
    expect(lost?.status === 'rejected' && isMusubiError(lost.reason, 'RUN_ACTIVE')).toBe(true);
  });
});
