import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  fsyncSync,
  linkSync,
  openSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { MusubiError } from '../../core/errors.js';
import { findProblems, inspectStoreFile, type StoreBackup } from './sqlite-file-health.js';

/** The files SQLite keeps for one database: the file, its WAL and its shared-memory index. */
const SIDE_SUFFIXES = ['', '-wal', '-shm'] as const;

/** What {@link restoreStoreFile} did. */
export interface StoreRestore {
  readonly path: string;
  /** The backup now at `path` (the backup file itself stays where it is). */
  readonly backup: StoreBackup;
  /** The files found at `path` (and its `-wal`, `-shm`), moved aside rather than deleted. */
  readonly movedAside: readonly { readonly from: string; readonly to: string }[];
}

/**
 * Whether another connection has the file open: a connection in WAL mode holds a shared lock on the
 * file as long as it is open, so an exclusive lock (no waiting) is refused exactly then. The lock is
 * tried through a hard link: locks belong to the file, not its name, while SQLite looks for a WAL by
 * name, so the probe never sees, replays or deletes the file's own `-wal` (SQLite deletes the WAL of an
 * empty database it opens). `unknown` when SQLite cannot read the header to take the lock (the file is
 * no database any more) or no hard link can be made there.
 */
function probeUse(path: string): 'free' | 'busy' | 'unknown' {
  const link = `${path}.probe-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    linkSync(path, link);
  } catch {
    return 'unknown';
  }
  let db: Database.Database | undefined;
  try {
    db = new Database(link, { fileMustExist: true });
    db.pragma('busy_timeout = 0');
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    // Not COMMIT: that would give an empty file its first page; the file is left as found.
    db.exec('ROLLBACK');
    return 'free';
  } catch (err) {
    if (err instanceof Database.SqliteError && err.code.startsWith('SQLITE_BUSY')) return 'busy';
    if (err instanceof Database.SqliteError && /^SQLITE_(CORRUPT|NOTADB)/.test(err.code)) return 'unknown';
    throw new MusubiError('STORE_UNAVAILABLE', `cannot open SQLite store ${path}: ${String(err)}`, {
      details: { path },
      cause: err,
    });
  } finally {
    db?.close();
    for (const suffix of [...SIDE_SUFFIXES, '-journal']) rmSync(link + suffix, { force: true });
  }
}

/** Refuses (STORE_UNAVAILABLE) when another process has the file open or that cannot be ruled out. */
function assertNotInUse(path: string, isForced: boolean): void {
  if (!existsSync(path)) return;
  const use = probeUse(path);
  if (use === 'busy') {
    throw new MusubiError(
      'STORE_UNAVAILABLE',
      `another process has ${path} open (musubi up, musubi run, a musubi mcp server, …); stop it, then restore again. Nothing was changed.`,
      { details: { path } },
    );
  }
  const side = [`${path}-wal`, `${path}-shm`].filter((file) => existsSync(file));
  if (use === 'unknown' && side.length > 0 && !isForced) {
    throw new MusubiError(
      'STORE_UNAVAILABLE',
      `cannot tell whether another process has ${path} open: SQLite cannot lock it (it is no database any more) and ${side.join(' and ')} exist (kept by a process using it, or left by one that crashed). Stop every musubi using this store, then restore again with --force. Nothing was changed.`,
      { details: { path, side } },
    );
  }
}

/** Copies `from` to a new file beside `path` (mode 0600), fsynced; returns its name. */
function copyBeside(from: string, path: string): string {
  const temp = `${path}.restore-${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  copyFileSync(from, temp);
  chmodSync(temp, 0o600);
  const fd = openSync(temp, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return temp;
}

/** Throws STORE_CORRUPT (after removing it) when the copy of the backup fails its integrity check. */
function assertSound(temp: string, backup: StoreBackup): void {
  let problems: string[];
  const db = new Database(temp, { fileMustExist: true });
  try {
    problems = findProblems(db, 'integrity_check', 3);
  } catch (err) {
    problems = [err instanceof Error ? err.message : String(err)];
  } finally {
    db.close();
  }
  if (problems.length === 0) return;
  for (const suffix of SIDE_SUFFIXES) rmSync(temp + suffix, { force: true });
  throw new MusubiError(
    'STORE_CORRUPT',
    `the backup ${backup.path} is damaged too (PRAGMA integrity_check: ${problems.join('; ')}); nothing was changed`,
    { details: { backup: backup.path, problems } },
  );
}

/**
 * Brings back `<path>.backup` as the store file at `path`. The backup is copied and its copy checked
 * with `PRAGMA integrity_check` first; then the files at `path` (the database, its `-wal` and `-shm`)
 * are moved aside to `<path>.corrupt-<time>[-wal|-shm]`, never deleted, and the copy is renamed into
 * place (mode 0600). The backup itself is left as it is.
 *
 * Throws NOT_FOUND when there is no backup, STORE_CORRUPT when the backup fails its check, and
 * STORE_UNAVAILABLE when another process has the file open, or when that cannot be told (SQLite cannot
 * lock a file that is no database any more) while its `-wal` or `-shm` exist and `force` is not set;
 * nothing is changed then. Another process opening the file during the restore is not detected.
 */
export function restoreStoreFile(
  path: string,
  options: { readonly now: number; readonly force?: boolean },
): StoreRestore {
  const { backup } = inspectStoreFile(path);
  if (backup === null) {
    throw new MusubiError('NOT_FOUND', `no backup of ${path} to restore (${path}.backup does not exist)`, {
      details: { path },
    });
  }
  const temp = copyBeside(backup.path, path);
  assertSound(temp, backup);
  try {
    assertNotInUse(path, options.force === true);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
  const stamp = new Date(options.now).toISOString().replaceAll(':', '');
  const movedAside: { from: string; to: string }[] = [];
  for (const suffix of SIDE_SUFFIXES) {
    const from = path + suffix;
    if (!existsSync(from)) continue;
    const to = `${path}.corrupt-${stamp}${suffix}`;
    renameSync(from, to);
    movedAside.push({ from, to });
  }
  renameSync(temp, path);
  syncFolder(dirname(path));
  return { path, backup, movedAside };
}

function syncFolder(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // A folder cannot be fsynced everywhere (Windows); the renames themselves are still atomic.
  }
}
