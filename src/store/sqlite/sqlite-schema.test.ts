import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../test/fakes/fake-clock.js';
import { envelope } from '../../../test/store-conformance/conformance-context.js';
import { SCHEMA_VERSION } from './sqlite-schema.js';
import { SqliteStore } from './sqlite-store.js';

let dir = '';
let clock = new FakeClock();
const opened: SqliteStore[] = [];

function open(options: { eventRetention?: number } = {}): SqliteStore {
  const store = SqliteStore.open({ path: join(dir, 'bus.db'), clock, ...options });
  opened.push(store);
  return store;
}

function raw<T>(fn: (db: Database.Database) => T): T {
  const db = new Database(join(dir, 'bus.db'));
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

// Schema version 2 as musubi wrote it before version 3 (the messages table keyed by seq, every event
// as JSON), with rows as it wrote them: what a user's existing file holds when they upgrade.
const V2 = `
CREATE TABLE messages (seq INTEGER PRIMARY KEY, mailbox TEXT NOT NULL, id TEXT NOT NULL, priority INTEGER NOT NULL,
  envelope TEXT NOT NULL, attempt INTEGER NOT NULL DEFAULT 0, state INTEGER NOT NULL DEFAULT 0,
  is_leased INTEGER NOT NULL DEFAULT 0, available_at INTEGER NOT NULL, dead_reason TEXT, dead_at INTEGER, UNIQUE (mailbox, id));
CREATE INDEX messages_ready ON messages (mailbox, priority, seq) WHERE state = 0;
CREATE INDEX messages_waiting ON messages (mailbox, available_at) WHERE state = 1;
CREATE INDEX messages_dead ON messages (dead_at, seq) WHERE state = 2;
CREATE INDEX messages_dead_id ON messages (id) WHERE state = 2;
CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT NOT NULL, revision INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE kv_log (revision INTEGER PRIMARY KEY, key TEXT NOT NULL, op TEXT NOT NULL CHECK (op IN ('put', 'delete')), value TEXT);
CREATE TABLE events (cursor INTEGER PRIMARY KEY, at INTEGER NOT NULL, event TEXT NOT NULL);
CREATE INDEX messages_live ON messages (mailbox, priority, seq) WHERE state IN (0, 1);
PRAGMA user_version = 2;
`;

/** Writes a version-2 file: bob holds `ready` (sent second, high priority), `leased`, `dead`. */
function writeVersion2(now: number): void {
  raw((db) => {
    db.exec(V2);
    const rows: [number, string, number, number, number, number, number, string | null, number | null][] = [
      // seq, id, priority, attempt, state, is_leased, available_at, dead_reason, dead_at
      [1, 'leased', 2, 1, 1, 1, now + 60_000, null, null],
      [2, 'ready', 1, 0, 0, 0, now, null, null],
      [3, 'dead', 2, 3, 2, 0, now, 'gave up', now],
    ];
    for (const [seq, id, priority, attempt, state, isLeased, availableAt, reason, deadAt] of rows) {
      const stored = { ...envelope(id), priority: priority === 1 ? 'high' : 'normal', attempt: 0 };
      db.prepare('INSERT INTO events (cursor, at, event) VALUES (?, ?, ?)').run(
        seq,
        now,
        JSON.stringify({
          type: 'message.sent',
          mailbox: 'bob',
          messageId: id,
          from: 'alice',
          messageType: 'note',
          priority: stored.priority,
          body: stored.body,
        }),
      );
      db.prepare(
        'INSERT INTO messages (seq, mailbox, id, priority, envelope, attempt, state, is_leased, available_at, dead_reason, dead_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ).run(
        seq,
        'bob',
        id,
        priority,
        JSON.stringify(stored),
        attempt,
        state,
        isLeased,
        availableAt,
        reason,
        deadAt,
      );
    }
  });
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'musubi-sqlite-schema-'));
  clock = new FakeClock();
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
  await rm(dir, { recursive: true, force: true });
});

describe('SqliteStore schema version 3', () => {
  it('moves a version-2 file over: messages, leases, dead letters and events as they were', async () => {
    const now = clock.now();
    writeVersion2(now);
    const store = open();
    expect(raw((db) => db.pragma('user_version', { simple: true }))).toBe(SCHEMA_VERSION);
    expect((await store.peek('bob')).map((m) => [m.envelope.id, m.state, m.envelope.attempt])).toEqual([
      ['ready', 'ready', 0],
      ['leased', 'leased', 1],
    ]);
    expect(await store.count('bob')).toMatchObject({ ready: 1, leased: 1, total: 2, deadLetters: 1 });
    // The old delivery id still names the leased message's lease.
    await store.ack('bob:leased:1:1');
    expect((await store.append('bob', envelope('ready'))).isDuplicate).toBe(true);
    expect((await store.claim('bob', { leaseMs: 1_000 }))?.envelope).toMatchObject({
      id: 'ready',
      body: 'body of ready',
    });
    expect((await store.requeueDeadLetter('dead')).map((l) => l.reason)).toEqual(['gave up']);
    expect((await store.peek('bob')).map((m) => m.envelope.id)).toEqual(['ready', 'dead']);
    const events = await store.readEvents();
    expect(events.slice(0, 3).map((e) => [e.cursor, e.type])).toEqual([
      [1, 'message.sent'],
      [2, 'message.sent'],
      [3, 'message.sent'],
    ]);
    expect(events.slice(3).map((e) => e.type)).toEqual([
      'message.acked',
      'message.claimed',
      'message.requeued',
    ]);
  });

  it('keeps a queued message’s envelope past the event retention, and lets it go with the message', async () => {
    const first = open({ eventRetention: 5 });
    const { seq } = await first.append('bob', envelope('kept'));
    for (let n = 0; n < 2_500; n++) await first.appendEvent({ type: 'agent.beat', data: { n } });
    await first.close();
    // A new connection knows nothing of it: it reads the envelope from the event the prune kept.
    const second = open({ eventRetention: 5 });
    expect((await second.peek('bob')).map((m) => m.envelope.body)).toEqual(['body of kept']);
    const delivery = await second.claim('bob', { leaseMs: 1_000 });
    expect(delivery?.envelope).toMatchObject({ id: 'kept', body: 'body of kept', attempt: 1 });
    await second.ack(delivery?.deliveryId ?? '');
    expect(raw((db) => db.prepare('SELECT COUNT(*) FROM events WHERE cursor = ?').pluck().get(seq))).toBe(0);
    expect((await second.readEvents()).map((e) => e.type).slice(-2)).toEqual([
      'message.claimed',
      'message.acked',
    ]);
  });

  it('keeps the envelope of a message whose body is longer than its sent event keeps in the row', async () => {
    const store = open();
    const body = 'x'.repeat(10_000);
    await store.append('bob', { ...envelope('long'), body });
    const [sent] = await store.readEvents();
    expect(sent).toMatchObject({ type: 'message.sent', isBodyCut: true });
    expect(sent?.type === 'message.sent' && sent.body?.length).toBe(4_096);
    const other = open();
    expect((await other.claim('bob', { leaseMs: 1_000 }))?.envelope.body).toBe(body);
  });
});
