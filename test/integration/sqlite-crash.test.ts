import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSystemClock } from '../../src/core/clock.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { SqliteChild } from '../fixtures/sqlite-child.js';

let dir = '';
const children: SqliteChild[] = [];
const stores: SqliteStore[] = [];

function start(fixture: string, args: readonly string[]): SqliteChild {
  const child = SqliteChild.start(fixture, args);
  children.push(child);
  return child;
}

function open(path: string): SqliteStore {
  const store = SqliteStore.open({ path, clock: createSystemClock() });
  stores.push(store);
  return store;
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'musubi-sqlite-crash-'));
});
afterEach(async () => {
  await Promise.all(children.map((c) => c.kill('SIGKILL')));
  expect(children.splice(0).filter((c) => c.isRunning)).toEqual([]);
  await Promise.all(stores.splice(0).map((s) => s.close()));
  await rm(dir, { recursive: true, force: true });
});

describe('SqliteStore after kill -9', () => {
  it('keeps every append that returned, exactly once, when the writer is killed mid-stream', async () => {
    const path = join(dir, 'crash.db');
    const writer = start('sqlite-child-append', [path, 'inbox', '10000']);
    await writer.waitFor((lines) => lines.length > 1_000, 30_000, '1,000 appends to return');
    await writer.kill('SIGKILL');
    expect(writer.signalCode).toBe('SIGKILL');
    const returned = writer.values('appended');

    const db = new Database(path);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();
    const store = open(path);
    const stored = (await store.peek('inbox')).map((m) => m.envelope.id);
    const storedIds = new Set(stored);
    expect(storedIds.size).toBe(stored.length);
    expect(returned.filter((id) => !storedIds.has(id))).toEqual([]);
    // Killed mid-stream: some appends never happened, and those that did are a prefix of c-0, c-1, ...
    expect(stored.length).toBeLessThan(10_000);
    expect(storedIds).toEqual(new Set(Array.from({ length: stored.length }, (_, n) => `c-${n}`)));
    const sent = (await store.readEvents()).filter((e) => e.type === 'message.sent');
    expect(sent).toHaveLength(stored.length);
  });

  it('hands out messages a killed consumer held once their leases expire, losing none', async () => {
    const path = join(dir, 'leases.db');
    const store = open(path);
    const total = 300;
    for (let n = 0; n < total; n++) {
      await store.append('inbox', {
        id: `m-${n}`,
        from: 'test',
        to: 'inbox',
        type: 'test',
        priority: 'normal',
        headers: {},
        body: '',
        createdAt: Date.now(),
        attempt: 0,
      });
    }
    const claimer = start('sqlite-child-claim', [path, 'inbox', '100', '300']);
    await claimer.waitFor((lines) => lines.includes('holding'), 30_000, 'the claimer to hold its leases');
    await claimer.kill('SIGKILL');
    const held = new Map(
      claimer.values('claimed').map((line) => {
        const [id = '', , leaseUntil = ''] = line.split(' ');
        return [id, Number(leaseUntil)] as const;
      }),
    );
    expect(held.size).toBe(100);

    const delivered = new Map<string, number>();
    const deadline = Date.now() + 15_000;
    while (delivered.size < total) {
      if (Date.now() > deadline) throw new Error(`only ${delivered.size} of ${total} delivered`);
      const delivery = await store.claim('inbox', { leaseMs: 30_000 });
      if (delivery === null) {
        // Wait for the earliest lease to end, polling at most every 50 ms.
        const dueAt = (await store.nextDueAt('inbox')) ?? Date.now() + 50;
        await new Promise((resolve) => setTimeout(resolve, Math.min(50, Math.max(1, dueAt - Date.now()))));
        continue;
      }
      const { id, attempt } = delivery.envelope;
      const leaseUntil = held.get(id);
      if (leaseUntil !== undefined) expect(Date.now()).toBeGreaterThanOrEqual(leaseUntil);
      expect(delivered.has(id)).toBe(false);
      delivered.set(id, attempt);
      await store.ack(delivery.deliveryId);
    }
    for (const [id, attempt] of delivered) expect(attempt).toBe(held.has(id) ? 2 : 1);
    expect(await store.count('inbox')).toMatchObject({ total: 0 });
  });
});
