import { closeSync, fchmodSync, linkSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { MESSAGE_FILE_MODE } from './atomic-file-mode.js';
import { tempPathFor } from './temp-name.js';

const errnoCode = (err: unknown): string | undefined =>
  err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;

const removeQuietly = (path: string): void => {
  try {
    unlinkSync(path);
  } catch {
    // Already gone, or never created: nothing to clean up.
  }
};

function writeTempSync(path: string, content: string): string {
  for (;;) {
    const temp = tempPathFor(path);
    let fd: number;
    try {
      fd = openSync(temp, 'wx', MESSAGE_FILE_MODE);
    } catch (err) {
      if (errnoCode(err) === 'EEXIST') continue;
      throw err;
    }
    try {
      fchmodSync(fd, MESSAGE_FILE_MODE);
      const bytes = Buffer.from(content, 'utf8');
      for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at);
    } catch (err) {
      closeSync(fd);
      removeQuietly(temp);
      throw err;
    }
    closeSync(fd);
    return temp;
  }
}

/**
 * The synchronous twin of `writeFileAtomic` for the one-shot tools (mime, send): node:fs only, so the
 * tools never load node:fs/promises at start-up. Temp file + rename, mode 0600.
 */
export function writeFileAtomicSync(path: string, content: string): void {
  const temp = writeTempSync(path, content);
  try {
    renameSync(temp, path);
  } catch (err) {
    removeQuietly(temp);
    throw err;
  }
}

/** The synchronous twin of `createFileExclusive`: false when `path` already exists. */
export function createFileExclusiveSync(path: string, content: string): boolean {
  const temp = writeTempSync(path, content);
  try {
    linkSync(temp, path);
    return true;
  } catch (err) {
    if (errnoCode(err) === 'EEXIST') return false;
    throw err;
  } finally {
    removeQuietly(temp);
  }
}
