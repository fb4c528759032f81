import { MusubiError } from '../core/errors.js';
import type { StoreFileCheck } from '../store/sqlite/sqlite-file-health.js';
import type { StoreRestore } from '../store/sqlite/sqlite-restore.js';
import { parseStoreUrl, redactStoreUrl } from './open-store.js';

/** Which store `musubi store check|restore` works on: a URL, relative paths from `cwd`. */
export interface StoreFileOptions {
  readonly url: string;
  readonly cwd: string;
}

/** The file of a `sqlite:` store URL; USAGE_INVALID for a store that is no file of ours. */
function sqlitePathOf(options: StoreFileOptions): string {
  const location = parseStoreUrl(options.url, options.cwd);
  if (location.kind === 'sqlite') return location.path;
  throw new MusubiError(
    'USAGE_INVALID',
    `store check and restore work on a SQLite store (sqlite:<path>); this one is ${redactStoreUrl(options.url)}`,
    { details: { kind: location.kind } },
  );
}

/**
 * Runs the full integrity check of a SQLite store's file (`checkStoreFile`), which other processes
 * may keep using meanwhile. Throws USAGE_INVALID for a store that is not SQLite, NOT_FOUND when there
 * is no file and no backup.
 */
export async function checkStore(options: StoreFileOptions): Promise<StoreFileCheck> {
  const path = sqlitePathOf(options);
  const { checkStoreFile } = await import('../store/sqlite/sqlite-file-health.js');
  return checkStoreFile(path);
}

/**
 * Brings back the backup of a SQLite store's file (`restoreStoreFile`), moving the files there aside.
 * `now` names the moved files. Throws USAGE_INVALID for a store that is not SQLite, and as
 * restoreStoreFile does (NOT_FOUND, STORE_CORRUPT, STORE_UNAVAILABLE while the file is in use).
 */
export async function restoreStore(
  options: StoreFileOptions & { readonly now: number; readonly force?: boolean },
): Promise<StoreRestore> {
  const path = sqlitePathOf(options);
  const { restoreStoreFile } = await import('../store/sqlite/sqlite-restore.js');
  return restoreStoreFile(path, { now: options.now, ...(options.force === true && { force: true }) });
}
