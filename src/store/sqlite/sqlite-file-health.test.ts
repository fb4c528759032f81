import { copyFile, mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../test/fakes/fake-clock.js';
import { fillStore, rawChecks, writeGarbage } from '../../../test/fixtures/sqlite-damage.js';
import { envelope } from '../../../test/store-conformance/conformance-context.js';
import { isMusubiError, type MusubiError } from '../../core/errors.js';
import { checkStoreFile } from './sqlite-file-health.js';
import { SqliteStore } from './sqlite-store.js';

let dir = '';
let path = '';
let clock = new FakeClock();

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'musubi-sqlite-health-'));
  path = join(dir, 'bus.db');
  clock = new FakeClock();
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The error SqliteStore.open throws for the file at `path` (failing the test when it opens). */
async function refusal(): Promise<MusubiError> {
  let caught: unknown;
  try {
    const store = SqliteStore.open({ path, clock });
    await store.close();
  } catch (err) {
    caught = err;
  }
  expect(isMusubiError(caught, 'STORE_CORRUPT'), String(caught)).toBe(true);
  return caught as MusubiError;
}

/** A store file with data and, beside it, a backup of it (as musubi leaves one). */
async function storeWithBackup(): Promise<void> {
  await fillStore(path, clock, 50);
  await copyFile(path, `${path}.backup`);
}

describe('SqliteStore open checks', () => {
  it('refuses STORE_CORRUPT when the file was truncated to 0 bytes and a backup exists', async () => {
    await storeWithBackup();
    await truncate(path, 0);
    const err = await refusal();
    expect(err.message).toContain(path);
    expect(err.message).toContain('empty (0 bytes)');
    expect(err.details).toMatchObject({ path, backup: `${path}.backup` });
  });

  it('says where the backup is, how old, how to restore it and how to start fresh', async () => {
    await storeWithBackup();
    await truncate(path, 0);
    const { message, details } = await refusal();
    const takenAt = new Date(Number(details?.['backupTakenAt'])).toISOString();
    expect(message).toContain(`Its backup ${path}.backup is from ${takenAt}`);
    expect(message).toContain(`musubi --store sqlite:${path} store restore`);
    expect(message).toContain(`mv ${path} ${path}.corrupt`);
  });

  it('refuses STORE_CORRUPT when the file is gone but its backup is there', async () => {
    await storeWithBackup();
    await rm(path);
    expect((await refusal()).message).toContain('it is missing, yet its backup');
  });

  it('refuses STORE_CORRUPT for an empty file whose WAL holds changes, even with no backup', async () => {
    await writeFile(path, '');
    await writeFile(`${path}-wal`, Buffer.alloc(4_096, 1));
    expect((await refusal()).message).toContain(`its WAL ${path}-wal holds 4096 bytes`);
  });

  it('opens an empty file with no backup and no WAL as a new store (touch bus.db)', async () => {
    await writeFile(path, '');
    const store = SqliteStore.open({ path, clock });
    await store.append('bob', envelope('first'));
    expect(await store.count('bob')).toMatchObject({ total: 1 });
    await store.close();
  });

  it('refuses STORE_CORRUPT when 8 KiB of garbage landed in the middle of the b-trees', async () => {
    await fillStore(path, clock);
    writeGarbage(path);
    const checks = rawChecks(path);
    expect(checks.integrity).not.toBe('ok');
    expect(checks.quick).not.toBe('ok');
    const err = await refusal();
    expect(err.message).toContain('PRAGMA quick_check');
    expect(err.message).toContain('musubi has no backup of it');
    // Refused before writing a thing: the damage is as it was, not built upon.
    expect(rawChecks(path)).toEqual(checks);
  });

  it('refuses STORE_CORRUPT with the same advice for a file that is not a database', async () => {
    await storeWithBackup();
    await writeFile(path, 'this is not a database, just text '.repeat(200));
    const err = await refusal();
    expect(err.message).toContain('file is not a database');
    expect(err.message).toContain('store restore');
  });

  it('opens a sound file with data and a backup as before', async () => {
    await storeWithBackup();
    const store = SqliteStore.open({ path, clock });
    expect(await store.count('box-0')).toMatchObject({ total: 8 });
    await store.close();
  });
});

describe('checkStoreFile', () => {
  it('finds a sound file sound, with its backup', async () => {
    await storeWithBackup();
    const result = checkStoreFile(path);
    expect(result).toMatchObject({ path, problems: [], damage: null, backup: { path: `${path}.backup` } });
  });

  it('lists what integrity_check finds in a damaged file, without changing it', async () => {
    await fillStore(path, clock);
    writeGarbage(path);
    const before = rawChecks(path);
    const result = checkStoreFile(path);
    expect(result.problems.length).toBeGreaterThan(0);
    expect(result.damage?.code).toBe('STORE_CORRUPT');
    expect(rawChecks(path)).toEqual(before);
  });

  it('reports lost data for an empty file with a backup, and NOT_FOUND when there is nothing', async () => {
    await storeWithBackup();
    await truncate(path, 0);
    expect(checkStoreFile(path).problems).toEqual([expect.stringContaining('empty (0 bytes)')]);
    expect(() => checkStoreFile(join(dir, 'none.db'))).toThrow(
      expect.objectContaining({ code: 'NOT_FOUND' }),
    );
  });
});
