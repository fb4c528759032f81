import { copyFile, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../test/fakes/fake-clock.js';
import { fillStore, writeGarbage } from '../../../test/fixtures/sqlite-damage.js';
import { restoreStoreFile } from './sqlite-restore.js';
import { SqliteStore } from './sqlite-store.js';

let dir = '';
let path = '';
const now = Date.UTC(2026, 11, 7, 1, 2, 3, 456);

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'musubi-sqlite-restore-'));
  path = join(dir, 'bus.db');
  await fillStore(path, new FakeClock(), 30);
  await copyFile(path, `${path}.backup`);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('restoreStoreFile', () => {
  it('puts the backup in place and moves the file, its WAL and its index aside', async () => {
    await writeFile(path, 'not a database any more '.repeat(100));
    await writeFile(`${path}-wal`, 'wal');
    await writeFile(`${path}-shm`, 'shm');
    const result = restoreStoreFile(path, { now, force: true });
    const aside = `${path}.corrupt-2026-12-07T010203.456Z`;
    expect(result.movedAside).toEqual([
      { from: path, to: aside },
      { from: `${path}-wal`, to: `${aside}-wal` },
      { from: `${path}-shm`, to: `${aside}-shm` },
    ]);
    expect(await readFile(`${aside}-wal`, 'utf8')).toBe('wal');
    const store = SqliteStore.open({ path, clock: new FakeClock() });
    expect(await store.count('box-1')).toMatchObject({ total: 5 });
    await store.close();
  });

  it('refuses without --force to touch an unreadable file whose -shm may belong to a live process', async () => {
    await writeFile(path, 'not a database any more '.repeat(100));
    await writeFile(`${path}-shm`, '');
    expect(() => restoreStoreFile(path, { now })).toThrow(
      expect.objectContaining({ code: 'STORE_UNAVAILABLE', message: expect.stringContaining('--force') }),
    );
    expect((await readdir(dir)).sort()).toEqual(['bus.db', 'bus.db-shm', 'bus.db.backup']);
  });

  it('refuses STORE_CORRUPT and changes nothing when the backup is damaged too', async () => {
    await fillStore(join(dir, 'big.db'), new FakeClock(), 2_000);
    await rename(join(dir, 'big.db'), `${path}.backup`);
    writeGarbage(`${path}.backup`);
    const before = await readFile(path);
    expect(() => restoreStoreFile(path, { now })).toThrow(
      expect.objectContaining({ code: 'STORE_CORRUPT', message: expect.stringContaining('is damaged too') }),
    );
    expect((await readFile(path)).equals(before)).toBe(true);
    expect((await readdir(dir)).sort()).toEqual(['bus.db', 'bus.db.backup']);
  });

  it('restores a store whose file is gone', async () => {
    await rm(path);
    expect(restoreStoreFile(path, { now }).movedAside).toEqual([]);
    const store = SqliteStore.open({ path, clock: new FakeClock() });
    expect(await store.count('box-2')).toMatchObject({ total: 4 });
    await store.close();
  });
});
