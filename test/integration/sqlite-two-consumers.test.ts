import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSystemClock } from '../../src/core/clock.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { SqliteChild } from '../fixtures/sqlite-child.js';

let dir = '';
const children: SqliteChild[] = [];
let store: SqliteStore | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'musubi-sqlite-consumers-'));
});
afterEach(async () => {
  await Promise.all(children.map((c) => c.kill('SIGKILL')));
  expect(children.splice(0).filter((c) => c.isRunning)).toEqual([]);
  await store?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('SqliteStore shared by two processes', () => {
  it('has each of 2,000 messages acked exactly once across two consumer processes', async () => {
    const path = join(dir, 'shared.db');
    store = SqliteStore.open({ path, clock: createSystemClock() });
    const total = 2_000;
    for (let n = 0; n < total; n++) {
      await store.append('inbox', {
        id: `m-${n}`,
        from: 'test',
        to: 'inbox',
        type: 'test',
        priority: n % 5 === 0 ? 'high' : 'normal',
        headers: {},
        body: `message ${n}`,
        createdAt: Date.now(),
        attempt: 0,
      });
    }
    const consumers = ['a', 'b'].map(() =>
      SqliteChild.start('sqlite-child-consume', [path, 'inbox', '30000']),
    );
    children.push(...consumers);
    for (const consumer of consumers) {
      await consumer.waitFor((lines) => lines.includes('ready'), 30_000, 'a consumer to open the store');
    }
    for (const consumer of consumers) consumer.send('go');
    for (const consumer of consumers) await consumer.exited(60_000);

    for (const consumer of consumers) {
      expect(consumer.exitCode, consumer.stderr).toBe(0);
      expect(consumer.values('lost')).toEqual([]);
    }
    const [first, second] = consumers.map((c) => c.values('acked'));
    const acked = [...(first ?? []), ...(second ?? [])];
    expect(acked).toHaveLength(total);
    expect(new Set(acked).size).toBe(total);
    expect(first?.length).toBeGreaterThan(0);
    expect(second?.length).toBeGreaterThan(0);
    expect(await store.count('inbox')).toMatchObject({ total: 0, deadLetters: 0 });
    const ackEvents = (await store.readEvents()).filter((e) => e.type === 'message.acked');
    expect(ackEvents).toHaveLength(total);
  });
});
