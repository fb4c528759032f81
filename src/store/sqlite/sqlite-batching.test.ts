import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../test/fakes/fake-clock.js';
import { claimOne, envelope, expectCode } from '../../../test/store-conformance/conformance-context.js';
import { SqliteStore } from './sqlite-store.js';

// Calls made without awaiting in between land in one group-commit batch (one transaction).
let dir = '';
let clock = new FakeClock();
const opened: SqliteStore[] = [];

function open(): SqliteStore {
  const store = SqliteStore.open({ path: join(dir, 'batch.db'), clock });
  opened.push(store);
  return store;
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'musubi-sqlite-batch-'));
  clock = new FakeClock();
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
  await rm(dir, { recursive: true, force: true });
});

describe('SqliteStore group commit', () => {
  it('commits the operations of one batch that succeed and rejects only those that fail', async () => {
    const store = open();
    await store.append('bob', envelope('expired'));
    await store.append('bob', envelope('live'));
    const expired = await claimOne(store, 'bob', 1_000);
    clock.advance(500);
    const live = await claimOne(store, 'bob', 60_000);
    clock.advance(600);
    const entry = await store.kvSet('k', 'old');

    const results = await Promise.allSettled([
      store.append('bob', envelope('new')),
      store.ack(expired.deliveryId),
      store.kvSet('k', 'lost', { expectedRevision: entry.revision + 7 }),
      store.ack(live.deliveryId),
      store.ack('bob:nobody:1'),
      store.kvSet('j', 'kept'),
    ]);

    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'rejected',
      'rejected',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    expect(results[1]).toMatchObject({ reason: { code: 'LEASE_EXPIRED' } });
    expect(results[2]).toMatchObject({ reason: { code: 'STORE_CONFLICT' } });
    expect(results[4]).toMatchObject({ reason: { code: 'NOT_FOUND' } });
    expect((await store.peek('bob')).map((m) => m.envelope.id)).toEqual(['expired', 'new']);
    expect((await store.kvGet('k'))?.value).toBe('old');
    expect((await store.kvGet('j'))?.value).toBe('kept');
    const types = (await store.readEvents()).map((e) => e.type);
    expect(types.filter((t) => t === 'message.acked')).toHaveLength(1);
  });

  it('runs writes in call order, and reads see only what has committed', async () => {
    const store = open();
    const appends = ['a', 'b', 'c'].map((id) => store.append('bob', envelope(id)));
    const set = store.kvSet('k', 1);
    const entries = await Promise.all([store.kvGet('k'), store.count('bob')]);
    // Still queued: not committed, so not seen.
    expect(entries).toEqual([null, expect.objectContaining({ total: 0 })]);
    const seqs = (await Promise.all(appends)).map((r) => r.seq);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect((await store.kvGet('k'))?.revision).toBe((await set).revision);
    // Each append's message.sent event, in call order.
    expect((await store.readEvents()).map((e) => e.cursor)).toEqual(seqs);
  });

  it('resolves operations still queued at close, keeps them, and rejects later calls', async () => {
    const first = open();
    const appends = ['a', 'b', 'c'].map((id) => first.append('bob', envelope(id)));
    const closed = first.close();
    await expectCode(() => first.append('bob', envelope('late')), 'STORE_CLOSED');
    expect((await Promise.all(appends)).map((r) => r.isDuplicate)).toEqual([false, false, false]);
    await closed;

    const second = open();
    expect((await second.peek('bob')).map((m) => m.envelope.id)).toEqual(['a', 'b', 'c']);
  });

  it('answers a claim at once, without queueing, when nothing claimable has committed', async () => {
    const store = open();
    let isAppended = false;
    const append = store.append('bob', envelope('m')).then(() => (isAppended = true));
    expect(await store.claim('bob', { leaseMs: 1_000 })).toBeNull();
    expect(isAppended).toBe(false);
    await append;
    expect((await store.claim('bob', { leaseMs: 1_000 }))?.envelope.id).toBe('m');
  });
});
