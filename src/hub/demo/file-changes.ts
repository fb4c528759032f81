import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';

/** Content hash and size of every file below a folder, keyed by `/`-separated relative path. */
export type FileSnapshot = ReadonlyMap<string, { readonly sha256: string; readonly bytes: number }>;

/** One file that differs between two snapshots. */
export interface FileChange {
  readonly path: string;
  readonly kind: 'added' | 'modified' | 'deleted';
  /** Size after the change (0 for a deleted file). */
  readonly bytes: number;
}

/** Folders a snapshot never descends into: dependencies and version control are not the team's work. */
const SKIPPED_DIRS = new Set(['node_modules', '.git']);

/** Hashes every regular file below `root` (symbolic links are not followed). */
export async function snapshotFiles(root: string): Promise<FileSnapshot> {
  const files = new Map<string, { sha256: string; bytes: number }>();
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) await walk(path);
      } else if (entry.isFile()) {
        const content = await readFile(path);
        const key = relative(root, path).split(sep).join('/');
        files.set(key, { sha256: createHash('sha256').update(content).digest('hex'), bytes: content.length });
      }
    }
  };
  await walk(root);
  return files;
}

/** The files added, modified or deleted from `before` to `after`, sorted by path. */
export function diffSnapshots(before: FileSnapshot, after: FileSnapshot): FileChange[] {
  const changes: FileChange[] = [];
  for (const [path, now] of after) {
    const was = before.get(path);
    if (was === undefined) changes.push({ path, kind: 'added', bytes: now.bytes });
    else if (was.sha256 !== now.sha256) changes.push({ path, kind: 'modified', bytes: now.bytes });
  }
  for (const path of before.keys()) if (!after.has(path)) changes.push({ path, kind: 'deleted', bytes: 0 });
  return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
