import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../test/fakes/fake-clock.js';
import { isMusubiError } from '../../core/errors.js';
import { envelope, expectCode } from '../../../test/store-conformance/conformance-context.js';
import { SCHEMA_VERSION } from './sqlite-schema.js';
import { SqliteStore } from './sqlite-store.js';

let dir = '';
let clock = new FakeClock();
const opened: SqliteStore[] = [];

function open(name = 'bus.db', options: { eventRetention?: number } = {}): SqliteStore {
  const store = SqliteStore.open({ path: join(dir, name), clock, ...options });
  opened.push(store);
  return store;
}

/** Runs `fn` on a raw connection to the file, as a person repairing (or damaging) it would. */
function raw(fn: (db: Database.Database) => void, name = 'bus.db'): void {
  const db = new Database(join(dir, name));
  try {
    fn(db);
  } finally {
    db.close();
  }
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'musubi-sqlite-'));
  clock = new FakeClock();
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
  await rm(dir, { recursive: true, force: true });
});

describe('SqliteStore files', () => {
  it('rejects STORE_UNAVAILABLE naming the folder when it does not exist', () => {
    const path = join(dir, 'missing', 'bus.db');
    let caught: unknown;
    try {
      SqliteStore.open({ path, clock });
    } catch (err) {
      caught = err;
    }
    expect(isMusubiError(caught, 'STORE_UNAVAILABLE')).toBe(true);
    expect(String(caught)).toContain(join(dir, 'missing'));
  });

  it('rejects STORE_CORRUPT when the file is not a SQLite database', async () => {
    await writeFile(join(dir, 'bus.db'), 'this is not a database, just text '.repeat(200));
    expect(() => open()).toThrow(expect.objectContaining({ code: 'STORE_CORRUPT' }));
  });

  it('rejects STORE_UNAVAILABLE for a file written by a newer schema, leaving it untouched', () => {
    raw((db) => db.pragma(`user_version = ${SCHEMA_VERSION + 1}`));
    expect(() => open()).toThrow(expect.objectContaining({ code: 'STORE_UNAVAILABLE' }));
    raw((db) => expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION + 1));
  });

  it('rejects CONFIG_INVALID for a non-positive poll interval or retention', () => {
    const path = join(dir, 'bus.db');
    expect(() => SqliteStore.open({ path, clock, pollIntervalMs: 0 })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID' }),
    );
    expect(() => SqliteStore.open({ path, clock, eventRetention: -1 })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID' }),
    );
  });

  it('keeps messages, leases, dead letters, kv and events across close and reopen', async () => {
    const first = open();
    await first.append('bob', envelope('leased'));
    await first.append('bob', envelope('dead'));
    await first.append('bob', envelope('ready'));
    const leased = await first.claim('bob', { leaseMs: 60_000 });
    const dead = await first.claim('bob', { leaseMs: 60_000 });
    await first.deadLetter(dead?.deliveryId ?? '', { reason: 'r' });
    const entry = await first.kvSet('phase', { round: 2 });
    const cursor = await first.lastEventCursor();
    await first.close();

    const second = open();
    expect(await second.count('bob')).toMatchObject({ ready: 1, leased: 1, total: 2, deadLetters: 1 });
    expect((await second.claim('bob', { leaseMs: 1_000 }))?.envelope.id).toBe('ready');
    await second.ack(leased?.deliveryId ?? '');
    expect(await second.kvGet('phase')).toEqual(entry);
    expect(await second.lastEventCursor()).toBeGreaterThan(cursor);
    expect((await second.listDeadLetters()).map((l) => l.envelope.id)).toEqual(['dead']);
  });

  it('works with synchronous=full', async () => {
    const store = SqliteStore.open({ path: join(dir, 'full.db'), clock, synchronous: 'full' });
    opened.push(store);
    await store.append('bob', envelope('m'));
    expect((await store.claim('bob', { leaseMs: 1_000 }))?.envelope.id).toBe('m');
  });
});

describe('SqliteStore damaged rows', () => {
  it('quarantines a message whose stored envelope is invalid and hands out the next one', async () => {
    const store = open();
    await store.append('bob', envelope('bad'));
    await store.append('bob', envelope('good'));
    raw((db) => db.prepare("UPDATE messages SET envelope = '{\"id\": 42' WHERE id = 'bad'").run());
    await expectCode(() => store.claim('bob', { leaseMs: 1_000 }), 'STORE_CORRUPT');
    expect((await store.claim('bob', { leaseMs: 1_000 }))?.envelope.id).toBe('good');
    expect(await store.count('bob')).toMatchObject({ total: 1 });
  });

  it('rejects STORE_CORRUPT instead of returning a damaged envelope, event or value', async () => {
    const store = open();
    await store.append('bob', envelope('m'));
    await store.kvSet('k', 1);
    raw((db) => {
      db.prepare(`UPDATE messages SET envelope = '{"id":"m","from":"../etc"}'`).run();
      db.prepare(`UPDATE events SET event = '{"type":"message.sent"}'`).run();
      db.prepare(`UPDATE kv SET value = 'not json'`).run();
    });
    await expectCode(() => store.peek('bob'), 'STORE_CORRUPT');
    await expectCode(() => store.readEvents(), 'STORE_CORRUPT');
    await expectCode(() => store.kvGet('k'), 'STORE_CORRUPT');
    await expectCode(() => store.kvList(''), 'STORE_CORRUPT');
  });
});

describe('SqliteStore event retention', () => {
  it('prunes the event log to the newest events without reusing cursors', async () => {
    const store = open('bus.db', { eventRetention: 10 });
    for (let n = 0; n < 1_000; n++) await store.appendEvent({ type: 'agent.beat', data: { n } });
    const kept = await store.readEvents();
    expect(kept.map((e) => e.cursor)).toEqual(Array.from({ length: 10 }, (_, i) => 991 + i));
    const next = await store.appendEvent({ type: 'agent.beat', data: { n: 1_000 } });
    expect(next.cursor).toBe(1_001);
    expect(await store.lastEventCursor()).toBe(1_001);
  });

  it('keeps message seqs increasing after the events recording them were pruned', async () => {
    const store = open('bus.db', { eventRetention: 5 });
    let last = 0;
    for (let n = 0; n < 1_200; n++) {
      const { seq } = await store.append('bob', envelope(`m-${n}`));
      expect(seq).toBeGreaterThan(last);
      last = seq;
      const delivery = await store.claim('bob', { leaseMs: 1_000 });
      await store.ack(delivery?.deliveryId ?? '');
    }
  });
});

describe('SqliteStore with many messages waiting', () => {
  it('hands out the next ready message while thousands are leased or delayed', async () => {
    const store = open();
    for (let n = 0; n < 6_001; n++) await store.append('bob', envelope(`m-${n}`));
    for (let n = 0; n < 3_000; n++) await store.claim('bob', { leaseMs: 60_000 });
    for (let n = 0; n < 3_000; n++) {
      const delivery = await store.claim('bob', { leaseMs: 60_000 });
      await store.nack(delivery?.deliveryId ?? '', { delayMs: 30_000 });
    }
    expect((await store.claim('bob', { leaseMs: 60_000 }))?.envelope.id).toBe('m-6000');
    expect(await store.claim('bob', { leaseMs: 60_000 })).toBeNull();
    clock.advance(30_000);
    expect((await store.claim('bob', { leaseMs: 60_000 }))?.envelope.id).toBe('m-3000');
    clock.advance(30_000);
    expect((await store.claim('bob', { leaseMs: 60_000 }))?.envelope.attempt).toBe(2);
  });
});
