import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../test/fakes/fake-clock.js';
import { envelope, waitFor } from '../../../test/store-conformance/conformance-context.js';
import { SqliteStore } from './sqlite-store.js';

let dir = '';
const opened: SqliteStore[] = [];

/** Ref'd message ports: each one would keep the process alive. */
function refdPorts(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'MessagePort').length;
}

function open(path: string): SqliteStore {
  const store = SqliteStore.open({ path, clock: new FakeClock() });
  opened.push(store);
  return store;
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'musubi-sqlite-checkpoint-'));
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
  await rm(dir, { recursive: true, force: true });
});

describe('SqliteStore checkpoints', () => {
  it('copies the WAL into the database file from its checkpoint thread, not on commit', async () => {
    const path = join(dir, 'bus.db');
    const store = open(path);
    const before = statSync(path).size;
    const portsBefore = refdPorts();
    // Far fewer WAL pages than any auto-checkpoint threshold, but enough writes to ask the thread.
    await Promise.all(Array.from({ length: 2_000 }, (_, n) => store.append('bob', envelope(`m-${n}`))));
    await waitFor(() => statSync(path).size > before);
    expect((await store.count('bob')).total).toBe(2_000);
    // The thread never keeps a process alive that forgot to close its store.
    expect(refdPorts()).toBe(portsBefore);
  });

  it('closes the thread before the connection, which then removes the WAL', async () => {
    const path = join(dir, 'bus.db');
    const store = open(path);
    await Promise.all(Array.from({ length: 2_000 }, (_, n) => store.append('bob', envelope(`m-${n}`))));
    await store.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
    const db = new Database(path);
    expect(db.prepare('SELECT COUNT(*) FROM messages').pluck().get()).toBe(2_000);
    db.close();
  });
});
