import { existsSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import { join } from 'node:path';

/** Where `musubi run` kept its store before the repository's store was `<top>/.musubi/bus.db` (#34). */
export function legacyRunStoreOf(gitDir: string): string {
  return join(gitDir, 'musubi', 'runs.db');
}

/**
 * Moves the runs of an older musubi (`<gitDir>/musubi/runs.db`) to `path`, the repository's new store,
 * when the old file is there and the new one is not. Safe against a process that still has the old
 * file open: the move happens only after SQLite gave this connection the file to itself (exclusive
 * locking, out of WAL into a rollback journal, which folds the -wal into the file and fails while any
 * other connection is open), and the rename happens while that lock is held. Its backup goes along.
 * Resolves to a one-line notice for the log, or undefined when there was nothing to move.
 */
export async function adoptLegacyRunStore(gitDir: string, path: string): Promise<string | undefined> {
  const old = legacyRunStoreOf(gitDir);
  if (!existsSync(old) || existsSync(path)) return undefined;
  const { default: Database } = await import('better-sqlite3');
  const keptNotice = (why: string): string =>
    `runs of an older musubi are in ${old} (${why}); see them with --store sqlite:${old}`;
  let db: InstanceType<typeof Database> | undefined;
  try {
    db = new Database(old, { fileMustExist: true, timeout: 0 });
    db.pragma('locking_mode = EXCLUSIVE');
    const mode: unknown = db.pragma('journal_mode = DELETE', { simple: true });
    if (mode !== 'delete') return keptNotice('another process has it open');
    db.exec('BEGIN EXCLUSIVE; COMMIT');
    await rename(old, path);
    if (existsSync(`${old}.backup`)) await rename(`${old}.backup`, `${path}.backup`);
    return `moved the runs of an older musubi from ${old} to ${path}`;
  } catch (err) {
    // Busy (another process has it), damaged or unreadable: it stays where it is, and the notice says so.
    return keptNotice(err instanceof Error ? err.message : String(err));
  } finally {
    db?.close();
  }
}
