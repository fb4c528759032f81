import { mkdirSync, readFileSync, renameSync } from 'node:fs';
import { link, open, readFile, rename, unlink } from 'node:fs/promises';
import { writeFileAtomicSync } from './mime/atomic-file-sync.js';
import { parseMime, splitMime, type ParsedMime } from './mime/mime-parse.js';
import { decodeUtf8Strict } from './mime/strict-utf8.js';

// The per-message path (read, claim, edit) uses synchronous calls on purpose: these are small local
// files, a call takes microseconds, and every asynchronous one is a hop through libuv's thread pool,
// which under CPU contention costs a scheduler slice each and dominates the file -> turn latency.

/** Bytes read to find a message's header block at start-up (larger blocks read the whole file). */
const HEADER_PROBE_BYTES = 8192;

/** errno code of a Node fs error, if any. */
export function errnoCode(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

/** A message file as the monitor sees it; `isReadable` false means it was not valid UTF-8. */
export interface MessageFile {
  readonly text: string;
  readonly message: ParsedMime;
  readonly isReadable: boolean;
}

const EMPTY: ParsedMime = { headers: new Map(), body: '' };

/**
 * Reads and parses a queue file. A file that is not valid UTF-8 is treated as having no headers (spec 5:
 * the monitor never crashes on a bad file; the agent decides). Rejects with the fs error (ENOENT …).
 */
export async function readMessageFile(path: string): Promise<MessageFile> {
  const bytes = readFileSync(path);
  try {
    const text = decodeUtf8Strict(bytes);
    return { text, message: parseMime(text), isReadable: true };
  } catch {
    // Not UTF-8: deliver it anyway with no headers (spec 5); the agent reads the raw file itself.
    return { text: '', message: EMPTY, isReadable: false };
  }
}

/** Reads only as much of a file as its header block needs (start-up reconciliation of processed/). */
export async function readHeaders(path: string): Promise<ReadonlyMap<string, string>> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(HEADER_PROBE_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, HEADER_PROBE_BYTES, 0);
    let text = buffer.toString('utf8', 0, bytesRead);
    if (bytesRead === HEADER_PROBE_BYTES && !text.replace(/\r\n?/g, '\n').includes('\n\n')) {
      text = (await readFile(path)).toString('utf8');
    }
    return parseMime(splitMime(text).headerBlock).headers;
  } finally {
    await handle.close();
  }
}

/** Rewrites a message file atomically through `edit` (read, transform, temp + rename, mode 0600). */
export async function editMessageFile(path: string, edit: (text: string) => string): Promise<string> {
  const text = decodeUtf8Strict(readFileSync(path));
  const next = edit(text);
  writeFileAtomicSync(path, next);
  return next;
}

/** Outcome of {@link moveNoReplace}. */
export type MoveOutcome = 'moved' | 'taken' | 'missing';

/** Moves `from` to `to` unless `to` exists (link + unlink, so nothing is ever replaced). */
export async function moveNoReplace(from: string, to: string): Promise<MoveOutcome> {
  try {
    await link(from, to);
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'EEXIST') return 'taken';
    if (code === 'ENOENT') return 'missing';
    if (code !== 'EPERM' && code !== 'EXDEV') throw err;
    // No hard links on this file system: fall back to rename, which may replace.
    await rename(from, to);
    return 'moved';
  }
  await unlink(from).catch(() => undefined);
  return 'moved';
}

/**
 * Claims `<root>/<name>` by renaming it into `processed/` (created on demand). Resolves false when the
 * rename fails because someone else took the file (spec 4.3: skip it).
 */
export async function claimByRename(root: string, processed: string, name: string): Promise<boolean> {
  mkdirSync(processed, { recursive: true });
  try {
    renameSync(`${root}/${name}`, `${processed}/${name}`);
    return true;
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return false;
    throw err;
  }
}
