import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteReadSnapshot } from './sqlite-read-snapshot.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function open(): { a: Database.Database; b: Database.Database } {
  const dir = mkdtempSync(join(tmpdir(), 'musubi-snapshot-'));
  dirs.push(dir);
  const a = new Database(join(dir, 'x.db'));
  a.pragma('journal_mode = WAL');
  a.exec('CREATE TABLE t (v INTEGER)');
  return { a, b: new Database(join(dir, 'x.db')) };
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('SqliteReadSnapshot', () => {
  it('lets the reads of one turn share a transaction that ends with the turn', async () => {
    const { a, b } = open();
    const snapshot = new SqliteReadSnapshot(a);
    const count = (): unknown => snapshot.read(() => a.prepare('SELECT count(*) AS n FROM t').get());
    expect(count()).toEqual({ n: 0 });
    expect(a.inTransaction).toBe(true);
    b.prepare('INSERT INTO t VALUES (1)').run(); // another connection commits mid-turn
    expect(count()).toEqual({ n: 0 }); // same snapshot
    await nextTurn();
    expect(a.inTransaction).toBe(false);
    expect(count()).toEqual({ n: 1 }); // a new turn sees it
    a.close();
    b.close();
  });

  it('ends before a write transaction begins, so the write sees the latest state', () => {
    const { a, b } = open();
    const snapshot = new SqliteReadSnapshot(a);
    snapshot.read(() => a.prepare('SELECT 1 FROM t').get());
    b.prepare('INSERT INTO t VALUES (1)').run();
    snapshot.end();
    expect(a.inTransaction).toBe(false);
    a.prepare('BEGIN IMMEDIATE').run();
    expect(a.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 1 });
    a.prepare('COMMIT').run();
    snapshot.end(); // idempotent
    a.close();
    b.close();
  });

  it('reads inside an open write transaction without beginning another', () => {
    const { a, b } = open();
    const snapshot = new SqliteReadSnapshot(a);
    a.prepare('BEGIN IMMEDIATE').run();
    a.prepare('INSERT INTO t VALUES (2)').run();
    expect(snapshot.read(() => a.prepare('SELECT v FROM t').get())).toEqual({ v: 2 });
    snapshot.end(); // not its transaction: left alone
    expect(a.inTransaction).toBe(true);
    a.prepare('COMMIT').run();
    a.close();
    b.close();
  });
});
