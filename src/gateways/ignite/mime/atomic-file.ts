import { link, open, rename, unlink } from 'node:fs/promises';
import { MESSAGE_FILE_MODE } from './atomic-file-mode.js';
import { tempPathFor } from './temp-name.js';

function errnoCode(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

/** Writes `content` to a fresh temp file beside `path` (mode 0600) and returns its path. */
async function writeTemp(path: string, content: string | Uint8Array): Promise<string> {
  for (;;) {
    const temp = tempPathFor(path);
    let handle;
    try {
      handle = await open(temp, 'wx', MESSAGE_FILE_MODE);
    } catch (err) {
      if (errnoCode(err) === 'EEXIST') continue;
      throw err;
    }
    try {
      // The umask can only remove bits; chmod makes the mode exactly 0600 whatever it is.
      await handle.chmod(MESSAGE_FILE_MODE);
      await handle.writeFile(content);
    } catch (err) {
      await handle.close().catch(() => undefined);
      await unlink(temp).catch(() => undefined);
      throw err;
    }
    await handle.close();
    return temp;
  }
}

/**
 * Replaces (or creates) `path` atomically: readers see the old file or the complete new one, never a
 * partial write. The temp name starts with `.` so queue readers ignore it, and the result has mode 0600.
 */
export async function writeFileAtomic(path: string, content: string | Uint8Array): Promise<void> {
  const temp = await writeTemp(path, content);
  try {
    await rename(temp, path);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw err;
  }
}

/**
 * Creates `path` atomically only if no file of that name exists (link(2) refuses to replace).
 * Resolves false when the name is taken; the caller picks another name.
 */
export async function createFileExclusive(path: string, content: string | Uint8Array): Promise<boolean> {
  const temp = await writeTemp(path, content);
  try {
    await link(temp, path);
    return true;
  } catch (err) {
    if (errnoCode(err) === 'EEXIST') return false;
    throw err;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}
