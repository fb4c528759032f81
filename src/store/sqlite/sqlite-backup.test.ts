import { existsSync, readFileSync, statSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../../../test/fakes/fake-clock.js';
import { fillStore, writeGarbage } from '../../../test/fixtures/sqlite-damage.js';
import { envelope, expectCode } from '../../../test/store-conformance/conformance-context.js';
import { BACKUP_INTERVAL_MS } from './sqlite-backup.js';
import { SqliteStore } from './sqlite-store.js';

let dir = '';
let path = '';
let backup = '';
// Backups are timed by their files' modification times, so the store's clock starts at the real time.
let clock = new FakeClock(Date.now());
const opened: SqliteStore[] = [];

function open(): SqliteStore {
  const store = SqliteStore.open({ path, clock });
  opened.push(store);
  return store;
}

/** The messages of `mailbox` in a copy of the backup, opened as a store of its own. */
async function idsInBackup(mailbox: string): Promise<string[]> {
  await mkdir(join(dir, 'copies'), { recursive: true });
  const copy = join(dir, 'copies', `${randomUUID()}.db`);
  await copyFile(backup, copy);
  const store = SqliteStore.open({ path: copy, clock: new FakeClock() });
  try {
    return (await store.peek(mailbox)).map((m) => m.envelope.id);
  } finally {
    await store.close();
  }
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'musubi-sqlite-backup-'));
  path = join(dir, 'bus.db');
  backup = `${path}.backup`;
  clock = new FakeClock(Date.now());
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
  await rm(dir, { recursive: true, force: true });
});

describe('SqliteStore backups', () => {
  it('takes a backup (mode 0600) when a file with data and none is opened', async () => {
    await fillStore(path, clock, 20);
    expect(existsSync(backup)).toBe(false);
    await open().close();
    expect(statSync(backup).mode & 0o777).toBe(0o600);
    // The copy was written beside it and renamed: nothing else is left in the folder.
    expect((await readdir(dir)).sort()).toEqual(['bus.db', 'bus.db.backup']);
    expect(await idsInBackup('box-0')).toEqual(['m-0', 'm-7', 'm-14']);
  });

  it('takes no backup of a new store closed within a minute, and one when it lives longer', async () => {
    const short = open();
    await short.append('bob', envelope('a'));
    await short.close();
    expect(existsSync(backup)).toBe(false);
    await rm(path);
    const long = open();
    await long.append('bob', envelope('b'));
    clock.advance(60_000);
    await vi.waitFor(() => expect(existsSync(backup)).toBe(true), { timeout: 10_000 });
    await long.close();
    expect(await idsInBackup('bob')).toEqual(['b']);
  });

  it('refreshes the backup an interval later once something was committed', async () => {
    await fillStore(path, clock, 20);
    const store = open();
    await vi.waitFor(() => expect(existsSync(backup)).toBe(true), { timeout: 10_000 });
    await store.append('bob', envelope('later'));
    clock.advance(BACKUP_INTERVAL_MS - 1);
    expect(await idsInBackup('bob')).toEqual([]);
    clock.advance(1);
    await vi.waitFor(async () => expect(await idsInBackup('bob')).toEqual(['later']), { timeout: 10_000 });
  });

  it('takes the backup that is due at close', async () => {
    await fillStore(path, clock, 20);
    await open().close();
    expect(await idsInBackup('bob')).toEqual([]);
    // An interval later; the file has not changed since its backup, so none is taken at open.
    clock = new FakeClock(Date.now() + BACKUP_INTERVAL_MS);
    const store = open();
    await store.append('bob', envelope('at-close'));
    await store.close();
    expect(await idsInBackup('bob')).toEqual(['at-close']);
  });

  it('never replaces a good backup with a copy of a damaged file, and stops using the file', async () => {
    await fillStore(path, clock);
    const store = open();
    await vi.waitFor(() => expect(existsSync(backup)).toBe(true), { timeout: 10_000 });
    const good = readFileSync(backup);
    writeGarbage(path);
    await store.append('bob', envelope('after-damage'));
    clock.advance(BACKUP_INTERVAL_MS);
    await vi.waitFor(() => expectCode(() => store.count('bob'), 'STORE_CORRUPT'), { timeout: 10_000 });
    await expectCode(() => store.append('bob', envelope('refused')), 'STORE_CORRUPT');
    expect(readFileSync(backup).equals(good)).toBe(true);
    expect((await readdir(dir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('keeps the backup as it was when the file it would copy is refused at open', async () => {
    await fillStore(path, clock);
    await open().close();
    const good = readFileSync(backup);
    writeGarbage(path);
    clock.advance(BACKUP_INTERVAL_MS * 2);
    expect(() => open()).toThrow(expect.objectContaining({ code: 'STORE_CORRUPT' }));
    expect(readFileSync(backup).equals(good)).toBe(true);
  });
});
