import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { diffSnapshots, snapshotFiles } from './file-changes.js';

let dir = '';
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('file snapshots', () => {
  it('lists added, modified and deleted files by relative path, skipping node_modules', async () => {
    dir = await mkdtemp(join(tmpdir(), 'musubi-demo-files-'));
    await mkdir(join(dir, 'src'));
    await mkdir(join(dir, 'node_modules'));
    await writeFile(join(dir, 'keep.txt'), 'same');
    await writeFile(join(dir, 'edit.txt'), 'before');
    await writeFile(join(dir, 'gone.txt'), 'x');
    const before = await snapshotFiles(dir);
    await writeFile(join(dir, 'edit.txt'), 'after!');
    await rm(join(dir, 'gone.txt'));
    await writeFile(join(dir, 'src', 'new.js'), 'export {};\n');
    await writeFile(join(dir, 'node_modules', 'dep.js'), 'ignored');
    expect(diffSnapshots(before, await snapshotFiles(dir))).toEqual([
      { path: 'edit.txt', kind: 'modified', bytes: 6 },
      { path: 'gone.txt', kind: 'deleted', bytes: 0 },
      { path: 'src/new.js', kind: 'added', bytes: 11 },
    ]);
  });
});
