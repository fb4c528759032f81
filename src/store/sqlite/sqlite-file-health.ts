import { closeSync, openSync, readSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { MusubiError } from '../../core/errors.js';
import { shellQuote } from '../../core/shell-quote.js';

/** How long a check waits for another connection that is recovering the WAL. */
const CHECK_BUSY_TIMEOUT_MS = 5_000;

/** The rolling backup musubi keeps of a store file (see SqliteBackup). */
export interface StoreBackup {
  readonly path: string;
  /** When it was written: the file's modification time, ms since the epoch. */
  readonly takenAt: number;
}

/** What the file system says about a store file before SQLite opens it. */
export interface StoreFileFacts {
  readonly path: string;
  /** Size of the database file; null when there is none. */
  readonly bytes: number | null;
  /** Modification time of the database file or its WAL, whichever is later; 0 when neither exists. */
  readonly changedAt: number;
  /** Whether the file starts with SQLite's header ("SQLite format 3"). */
  readonly hasHeader: boolean;
  /** Size of its `-wal` file (0 when there is none). */
  readonly walBytes: number;
  readonly backup: StoreBackup | null;
}

/** Where the backup of the store file at `path` lives. */
export function backupPathOf(path: string): string {
  return `${path}.backup`;
}

function statOf(path: string): { readonly size: number; readonly mtimeMs: number } | null {
  try {
    return statSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new MusubiError('STORE_UNAVAILABLE', `cannot read SQLite store ${path}: ${String(err)}`, {
      details: { path },
      cause: err,
    });
  }
}

const HEADER = Buffer.from('SQLite format 3\0', 'latin1');

function hasHeader(path: string): boolean {
  const head = Buffer.alloc(HEADER.length);
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    return readSync(fd, head, 0, head.length, 0) === head.length && head.equals(HEADER);
  } catch (err) {
    throw new MusubiError('STORE_UNAVAILABLE', `cannot read SQLite store ${path}: ${String(err)}`, {
      details: { path },
      cause: err,
    });
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Looks at the store file, its WAL and its backup; throws STORE_UNAVAILABLE when they cannot be read. */
export function inspectStoreFile(path: string): StoreFileFacts {
  const file = statOf(path);
  const wal = statOf(`${path}-wal`);
  const backup = statOf(backupPathOf(path));
  return {
    path,
    bytes: file?.size ?? null,
    hasHeader: file !== null && file.size > 0 && hasHeader(path),
    changedAt: Math.floor(Math.max(file?.mtimeMs ?? 0, wal?.mtimeMs ?? 0)),
    walBytes: wal?.size ?? 0,
    backup: backup === null ? null : { path: backupPathOf(path), takenAt: Math.floor(backup.mtimeMs) },
  };
}

/**
 * Why the store file is damaged as far as the file system shows (before SQLite reads it), or undefined.
 * A file with content must start with SQLite's header. A missing or empty file must have lost its data
 * when something shows it held some: a file musubi opened is never left at 0 bytes (switching it to WAL
 * writes its first page at once), a backup exists only once a file held data, and a WAL with frames
 * belongs to pages the file no longer has. An empty file with neither (`touch bus.db`, or one another
 * process is creating this instant) is a new store.
 */
export function fileDamageReason(facts: StoreFileFacts): string | undefined {
  if (facts.bytes !== null && facts.bytes > 0) {
    return facts.hasHeader ? undefined : 'it does not start with the SQLite header (file is not a database)';
  }
  const evidence =
    facts.backup !== null
      ? `its backup ${facts.backup.path} shows it held data`
      : facts.walBytes > 0
        ? `its WAL ${facts.path}-wal holds ${facts.walBytes} bytes of changes to it`
        : undefined;
  if (evidence === undefined) return undefined;
  return facts.bytes === null ? `it is missing, yet ${evidence}` : `it is empty (0 bytes), yet ${evidence}`;
}

/** True when the file exists with content, so there is something to check. */
export function hasContent(facts: StoreFileFacts): boolean {
  return facts.bytes !== null && facts.bytes > 0;
}

/**
 * Runs `PRAGMA quick_check` (page and b-tree structure; about 1.2 ms per MB of file) or
 * `integrity_check` (also every index against its table; about 1.7 ms per MB) and returns at most
 * `limit` problems it reports, none when the file is sound. SQLite errors (a file that is not a
 * database) are thrown as they are.
 */
export function findProblems(
  db: Database.Database,
  check: 'quick_check' | 'integrity_check',
  limit = 20,
): string[] {
  const rows = z.array(z.unknown()).parse(db.pragma(`${check}(${limit})`));
  return rows
    .map((row) => (typeof row === 'object' && row !== null ? Object.values(row).join(' ') : String(row)))
    .filter((text) => text !== 'ok');
}

/**
 * STORE_CORRUPT for a damaged store file, saying what to do: restore the backup (with its path and time)
 * or start fresh by moving the file aside. `details` holds `path`, `reason`, `backup` (its path or null)
 * and `backupTakenAt`.
 */
export function damagedStoreError(facts: StoreFileFacts, reason: string, cause?: unknown): MusubiError {
  const { path, backup } = facts;
  const url = shellQuote(`sqlite:${path}`);
  const fresh = `move the file${backup === null ? '' : ' and its backup'} aside (mv ${shellQuote(path)} ${shellQuote(`${path}.corrupt`)}${backup === null ? '' : `; mv ${shellQuote(backup.path)} ${shellQuote(`${backup.path}.old`)}`})`;
  const whatToDo =
    backup === null
      ? `musubi has no backup of it. To start fresh, ${fresh}; \`musubi --store ${url} store check\` lists the damage.`
      : `Its backup ${backup.path} is from ${new Date(backup.takenAt).toISOString()}: stop every musubi using this store, then run \`musubi --store ${url} store restore\` (the damaged file is kept beside it). To start fresh instead, ${fresh}.`;
  return new MusubiError(
    'STORE_CORRUPT',
    `SQLite store ${path} is damaged: ${reason}. musubi will not use it. ${whatToDo}`,
    {
      details: { path, reason, backup: backup?.path ?? null, backupTakenAt: backup?.takenAt ?? null },
      ...(cause !== undefined && { cause }),
    },
  );
}

/** What {@link checkStoreFile} found. */
export interface StoreFileCheck {
  readonly path: string;
  readonly bytes: number | null;
  /** What `PRAGMA integrity_check` (or the file itself) reports; empty when the file is sound. */
  readonly problems: readonly string[];
  /** STORE_CORRUPT saying what to do, when there are problems. */
  readonly damage: MusubiError | null;
  readonly backup: StoreBackup | null;
}

const DAMAGE_CODES = /^SQLITE_(CORRUPT|NOTADB)/;

/**
 * Runs the full `PRAGMA integrity_check` on the store file at `path` (about 1.7 ms per MB), writing
 * nothing of its own (a WAL left by a crash is checkpointed into the file, as any open does); other
 * processes may keep using it meanwhile. A missing or empty file is damaged when
 * its backup or WAL shows it held data (see {@link fileDamageReason}). Throws NOT_FOUND when there is no
 * file and no backup, STORE_UNAVAILABLE when it cannot be read.
 */
export function checkStoreFile(path: string, limit = 100): StoreFileCheck {
  const facts = inspectStoreFile(path);
  const lost = fileDamageReason(facts);
  if (facts.bytes === null && lost === undefined) {
    throw new MusubiError('NOT_FOUND', `no SQLite store at ${path}`, { details: { path } });
  }
  const problems = lost !== undefined ? [lost] : hasContent(facts) ? problemsOfFile(path, limit) : [];
  const damage =
    problems.length === 0
      ? null
      : damagedStoreError(facts, lost ?? `PRAGMA integrity_check: ${problems.slice(0, 3).join('; ')}`);
  return { path, bytes: facts.bytes, problems, damage, backup: facts.backup };
}

/** The problems integrity_check reports for an existing file, or SQLite's error when it is no database. */
function problemsOfFile(path: string, limit: number): string[] {
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { fileMustExist: true });
    db.pragma(`busy_timeout = ${CHECK_BUSY_TIMEOUT_MS}`);
    return findProblems(db, 'integrity_check', limit);
  } catch (err) {
    if (err instanceof Database.SqliteError && DAMAGE_CODES.test(err.code)) return [err.message];
    throw new MusubiError('STORE_UNAVAILABLE', `cannot check SQLite store ${path}: ${String(err)}`, {
      details: { path },
      cause: err,
    });
  } finally {
    db?.close();
  }
}
