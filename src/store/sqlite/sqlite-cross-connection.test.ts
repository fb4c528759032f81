import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../test/fakes/fake-clock.js';
import { envelope, iteratorOf, take, waitFor } from '../../../test/store-conformance/conformance-context.js';
import { SqliteStore } from './sqlite-store.js';

// Two stores on one file are two connections, which is what two processes are to SQLite.
let dir = '';
const clock = new FakeClock();
const opened: SqliteStore[] = [];

function open(): SqliteStore {
  const store = SqliteStore.open({ path: join(dir, 'shared.db'), clock, pollIntervalMs: 5 });
  opened.push(store);
  return store;
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'musubi-sqlite-shared-'));
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
  await rm(dir, { recursive: true, force: true });
});

describe('SqliteStore across connections', () => {
  it('tells onAvailable listeners (with null) about appends made through another connection', async () => {
    const writer = open();
    const reader = open();
    const heard: (string | null)[] = [];
    const unsubscribe = reader.onAvailable((mailbox) => heard.push(mailbox));
    await writer.append('bob', envelope('m'));
    await waitFor(() => heard.includes(null));
    expect((await reader.claim('bob', { leaseMs: 1_000 }))?.envelope.id).toBe('m');
    unsubscribe();
  });

  it('delivers kv changes and events written through another connection to watches and follows', async () => {
    const writer = open();
    const reader = open();
    const controller = new AbortController();
    const watch = iteratorOf(reader.kvWatch('team/', { signal: controller.signal }));
    const follow = iteratorOf(reader.followEvents({ signal: controller.signal }));
    const changes = take(watch, 2);
    const events = take(follow, 2);
    await writer.kvSet('team/phase', 'docs');
    await writer.kvDelete('team/phase');
    await writer.append('bob', envelope('m'));
    await writer.appendEvent({ type: 'agent.started', data: { agent: 'bob' } });
    expect((await changes).map((c) => c.op)).toEqual(['put', 'delete']);
    expect((await events).map((e) => e.type)).toEqual(['message.sent', 'agent.started']);
    controller.abort();
  });

  it('hands each message to exactly one of two connections claiming in turn', async () => {
    const a = open();
    const b = open();
    for (let n = 0; n < 200; n++) await a.append('bob', envelope(`m-${n}`));
    const seen: string[] = [];
    for (;;) {
      const fromA = await a.claim('bob', { leaseMs: 60_000 });
      const fromB = await b.claim('bob', { leaseMs: 60_000 });
      if (fromA !== null) await b.ack(fromA.deliveryId).then(() => seen.push(fromA.envelope.id));
      if (fromB !== null) await a.ack(fromB.deliveryId).then(() => seen.push(fromB.envelope.id));
      if (fromA === null && fromB === null) break;
    }
    expect(seen).toHaveLength(200);
    expect(new Set(seen).size).toBe(200);
    expect((await a.count('bob')).total).toBe(0);
  });
});
