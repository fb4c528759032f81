import type Database from 'better-sqlite3';

/** Runs `fn` inside one `BEGIN IMMEDIATE` transaction and returns its result. */
export type ImmediateRunner = <T>(fn: () => T) => T;

/**
 * Creates the write-transaction runner of one connection. IMMEDIATE takes the write lock up front, so
 * two processes never both read and then fail to upgrade (SQLITE_BUSY mid-transaction); a busy lock is
 * waited for up to busy_timeout. `fn` throwing rolls everything back. Not reentrant.
 */
export function createImmediateRunner(db: Database.Database): ImmediateRunner {
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');
  return <T>(fn: () => T): T => {
    begin.run();
    try {
      const result = fn();
      commit.run();
      return result;
    } catch (err) {
      // SQLite may already have rolled back on its own (some I/O and full-disk errors do).
      if (db.inTransaction) rollback.run();
      throw err;
    }
  };
}
