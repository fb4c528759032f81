import Database from 'better-sqlite3';
import { isMusubiError, MusubiError } from '../../core/errors.js';

const CORRUPTION_CODES = new Set(['SQLITE_CORRUPT', 'SQLITE_NOTADB']);

/**
 * Turns a failure inside a SQLite operation into a MusubiError: our own errors pass through, a damaged
 * file becomes STORE_CORRUPT, anything else from SQLite (busy past busy_timeout, I/O, full disk) becomes
 * STORE_UNAVAILABLE with the original as `cause`. Other errors are programming errors and pass through.
 */
export function storeFailure(err: unknown, operation: string): unknown {
  if (isMusubiError(err) || !(err instanceof Database.SqliteError)) return err;
  const code = CORRUPTION_CODES.has(err.code) ? 'STORE_CORRUPT' : 'STORE_UNAVAILABLE';
  return new MusubiError(code, `SQLite ${operation} failed: ${err.message}`, {
    details: { sqliteCode: err.code },
    cause: err,
  });
}
