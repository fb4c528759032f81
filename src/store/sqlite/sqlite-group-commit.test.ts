import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MusubiError } from '../../core/errors.js';
import { expectCode } from '../../../test/store-conformance/conformance-context.js';
import { MAX_BATCH, SqliteGroupCommit } from './sqlite-group-commit.js';

let dir = '';
const opened: Database.Database[] = [];

/** A WAL connection to the test file; a second one sees only what the first committed. */
function connect(): Database.Database {
  const db = new Database(join(dir, 'group.db'));
  db.pragma('journal_mode = WAL');
  opened.push(db);
  return db;
}

function setUp(): { db: Database.Database; other: Database.Database; group: SqliteGroupCommit } {
  const db = connect();
  db.exec('CREATE TABLE IF NOT EXISTS t (n INTEGER PRIMARY KEY)');
  return { db, other: connect(), group: new SqliteGroupCommit(db, { onCommitted: () => undefined }) };
}

function committed(other: Database.Database): number[] {
  return other
    .prepare('SELECT n FROM t ORDER BY n')
    .pluck()
    .all()
    .map((n) => Number(n));
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'musubi-group-commit-'));
});
afterEach(async () => {
  for (const db of opened.splice(0)) db.close();
  await rm(dir, { recursive: true, force: true });
});

describe('SqliteGroupCommit', () => {
  it('runs operations issued in one turn in one transaction, in call order', async () => {
    const { db, other, group } = setUp();
    const insert = db.prepare('INSERT INTO t (n) VALUES (?)');
    const seenByOther: number[][] = [];
    const order: number[] = [];
    const writes = [1, 2, 3].map((n) =>
      group.write('insert', () => {
        insert.run(n);
        order.push(n);
        // Still uncommitted for everyone else while the batch runs.
        seenByOther.push(committed(other));
        return n;
      }),
    );
    expect(committed(other)).toEqual([]);
    expect(await Promise.all(writes)).toEqual([1, 2, 3]);
    expect(order).toEqual([1, 2, 3]);
    expect(seenByOther).toEqual([[], [], []]);
    expect(committed(other)).toEqual([1, 2, 3]);
  });

  it('rolls back and rejects only the operation that threw, committing the others', async () => {
    const { db, other, group } = setUp();
    const insert = db.prepare('INSERT INTO t (n) VALUES (?)');
    const results = await Promise.allSettled([
      group.write('first', () => insert.run(1)),
      group.write('failing', () => {
        insert.run(2);
        throw new MusubiError('LEASE_EXPIRED', 'lease ended');
      }),
      group.write('duplicate', () => insert.run(1)),
      group.write('last', () => insert.run(3)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect(results[1]).toMatchObject({ reason: { code: 'LEASE_EXPIRED' } });
    // A SQLite error inside one operation is coded like any store failure.
    expect(results[2]).toMatchObject({ reason: { code: 'STORE_UNAVAILABLE' } });
    expect(committed(other)).toEqual([1, 3]);
  });

  it('runs a batch again with savepoints when one throws: each operation settles once, from the run that counted', async () => {
    const { db, other, group } = setUp();
    const insert = db.prepare('INSERT INTO t (n) VALUES (?)');
    const count = db.prepare('SELECT COUNT(*) FROM t').pluck();
    const runs: string[] = [];
    const results = await Promise.allSettled([
      group.write('first', () => {
        runs.push('first');
        insert.run(10);
        return Number(count.get());
      }),
      group.write('failing', () => {
        runs.push('failing');
        insert.run(11);
        throw new MusubiError('STORE_CONFLICT', 'revision moved');
      }),
      group.write('second', () => {
        runs.push('second');
        insert.run(12);
        return Number(count.get());
      }),
    ]);
    // The first run stopped at the throw and was rolled back; the second ran every operation.
    expect(runs).toEqual(['first', 'failing', 'first', 'failing', 'second']);
    expect(results).toMatchObject([
      { status: 'fulfilled', value: 1 },
      { status: 'rejected', reason: { code: 'STORE_CONFLICT' } },
      { status: 'fulfilled', value: 2 },
    ]);
    expect(committed(other)).toEqual([10, 12]);
  });

  it('undoes a lone failing operation by rolling its transaction back', async () => {
    const { db, other, group } = setUp();
    const insert = db.prepare('INSERT INTO t (n) VALUES (?)');
    const failing = (): Promise<unknown> =>
      group.write('failing', () => {
        insert.run(20);
        throw new MusubiError('NOT_FOUND', 'gone');
      });
    await expectCode(failing, 'NOT_FOUND');
    expect(db.inTransaction).toBe(false);
    expect(await group.write('next', () => insert.run(21).changes)).toBe(1);
    expect(committed(other)).toEqual([21]);
  });

  it(`commits at most ${MAX_BATCH} operations per transaction, the rest on the next turn`, async () => {
    const { db, other, group } = setUp();
    const insert = db.prepare('INSERT INTO t (n) VALUES (?)');
    const seen = await Promise.all(
      Array.from({ length: MAX_BATCH + 3 }, (_, n) =>
        group.write('insert', () => {
          insert.run(n);
          return committed(other).length;
        }),
      ),
    );
    expect(seen.slice(0, MAX_BATCH).every((c) => c === 0)).toBe(true);
    expect(seen.slice(MAX_BATCH)).toEqual([MAX_BATCH, MAX_BATCH, MAX_BATCH]);
    expect(committed(other)).toHaveLength(MAX_BATCH + 3);
  });

  it('rejects the whole batch STORE_UNAVAILABLE when another connection holds the write lock', async () => {
    const { db, other, group } = setUp();
    db.pragma('busy_timeout = 0');
    other.exec('BEGIN IMMEDIATE');
    const insert = db.prepare('INSERT INTO t (n) VALUES (?)');
    const results = await Promise.allSettled([1, 2].map((n) => group.write('insert', () => insert.run(n))));
    expect(results).toMatchObject([
      { status: 'rejected', reason: { code: 'STORE_UNAVAILABLE' } },
      { status: 'rejected', reason: { code: 'STORE_UNAVAILABLE' } },
    ]);
    other.exec('COMMIT');
    await group.write('insert', () => insert.run(3));
    expect(committed(other)).toEqual([3]);
  });

  it('fails what ran and requeues the rest when SQLite rolls the transaction back mid-batch', async () => {
    const { db, other, group } = setUp();
    const insert = db.prepare('INSERT INTO t (n) VALUES (?)');
    const results = await Promise.allSettled([
      group.write('before', () => insert.run(1)),
      group.write('rolled back', () => {
        // What SQLite does by itself on some I/O and full-disk errors.
        db.exec('ROLLBACK');
        throw new Error('disk I/O error');
      }),
      group.write('after', () => insert.run(3)),
    ]);
    expect(results).toMatchObject([
      { status: 'rejected', reason: { code: 'STORE_UNAVAILABLE' } },
      { status: 'rejected', reason: { message: 'disk I/O error' } },
      { status: 'fulfilled' },
    ]);
    expect(committed(other)).toEqual([3]);
  });

  it('runs pending operations on close and rejects later ones with STORE_CLOSED', async () => {
    const { db, other, group } = setUp();
    const insert = db.prepare('INSERT INTO t (n) VALUES (?)');
    const pending = [1, 2].map((n) => group.write('insert', () => insert.run(n)));
    group.close();
    expect(committed(other)).toEqual([1, 2]);
    await Promise.all(pending);
    await expectCode(() => group.write('late', () => insert.run(3)), 'STORE_CLOSED');
    group.close();
  });
});
