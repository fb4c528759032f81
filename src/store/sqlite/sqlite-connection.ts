import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { MusubiError } from '../../core/errors.js';
import { storeFailure } from './sqlite-errors.js';

/** How long a write waits for another connection's write lock before failing STORE_UNAVAILABLE. */
const BUSY_TIMEOUT_MS = 5_000;

/** Returns `value` when it is a positive integer, else throws CONFIG_INVALID naming the option. */
export function positiveOption(name: string, value: number): number {
  if (Number.isSafeInteger(value) && value > 0) return value;
  throw new MusubiError('CONFIG_INVALID', `SqliteStore ${name} must be a positive integer, got ${value}`);
}

/**
 * Opens a connection and sets the pragmas every connection needs (they are per connection): a busy
 * timeout (so writers from several processes queue instead of failing), WAL, and the fsync policy.
 * Throws STORE_UNAVAILABLE when the file cannot be opened (naming a missing folder), STORE_CORRUPT when
 * it is not a SQLite database.
 */
export function openDatabase(path: string, synchronous: 'normal' | 'full'): Database.Database {
  let db: Database.Database;
  try {
    db = new Database(path);
  } catch (err) {
    const dir = dirname(path);
    const reason = existsSync(dir)
      ? err instanceof Error
        ? err.message
        : String(err)
      : `folder ${dir} does not exist (create it first)`;
    throw new MusubiError('STORE_UNAVAILABLE', `cannot open SQLite store ${path}: ${reason}`, {
      details: { path },
      cause: err,
    });
  }
  try {
    // busy_timeout first, so that switching to WAL waits for another process instead of failing.
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    return db;
  } catch (err) {
    db.close();
    throw storeFailure(err, `open ${path}`);
  }
}
