import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSystemClock } from '../core/clock.js';
import { DEFAULT_STORE_URL } from '../core/config.schema.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { openStore, parseStoreUrl } from './open-store.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'musubi-repo-store-')));
  dirs.push(dir);
  return dir;
}

async function repo(): Promise<string> {
  const dir = await tempDir();
  execFileSync('git', ['init', '-q'], { cwd: dir });
  return dir;
}

const clock = createSystemClock();
const open = (cwd: string) => openStore({ url: DEFAULT_STORE_URL, cwd, clock, pollIntervalMs: 50 });

describe('open-store - the store of a repository', () => {
  it('resolves the default to <top>/.musubi/bus.db from any folder of the repository', async () => {
    const top = await repo();
    await mkdir(join(top, 'a', 'b'), { recursive: true });
    for (const cwd of [top, join(top, 'a'), join(top, 'a', 'b')]) {
      expect(parseStoreUrl(DEFAULT_STORE_URL, cwd)).toMatchObject({
        kind: 'sqlite',
        path: join(top, '.musubi', 'bus.db'),
      });
    }
  });

  it('keeps the default relative to the cwd outside a repository, and an explicit URL as it is', async () => {
    const plain = await tempDir();
    expect(parseStoreUrl(DEFAULT_STORE_URL, plain)).toEqual({
      kind: 'sqlite',
      path: join(plain, '.musubi', 'bus.db'),
      synchronous: 'normal',
    });
    const top = await repo();
    await mkdir(join(top, 'sub'));
    expect(parseStoreUrl('sqlite:x.db', join(top, 'sub'))).toEqual({
      kind: 'sqlite',
      path: join(top, 'sub', 'x.db'),
      synchronous: 'normal',
    });
  });

  it('adds /.musubi/ to .git/info/exclude once, and git status of the tree stays clean', async () => {
    const top = await repo();
    for (let n = 0; n < 2; n++) await (await open(top)).close();
    const exclude = await readFile(join(top, '.git', 'info', 'exclude'), 'utf8');
    expect(exclude.split('\n').filter((line) => line === '/.musubi/')).toHaveLength(1);
    expect(existsSync(join(top, '.musubi', 'bus.db'))).toBe(true);
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: top, encoding: 'utf8' })).toBe('');
  });

  it('moves the runs of an older musubi from .git/musubi/runs.db on the first open', async () => {
    const top = await repo();
    const old = join(top, '.git', 'musubi', 'runs.db');
    await mkdir(join(top, '.git', 'musubi'));
    const before = SqliteStore.open({ path: old, clock });
    await before.kvSet('run/r1', { id: 'r1' });
    await before.close();
    const notices: string[] = [];
    const store = await openStore({
      url: DEFAULT_STORE_URL,
      cwd: top,
      clock,
      pollIntervalMs: 50,
      onOpened: (what) => notices.push(what),
    });
    try {
      expect((await store.kvGet('run/r1'))?.value).toEqual({ id: 'r1' });
    } finally {
      await store.close();
    }
    expect(notices).toEqual([
      `moved the runs of an older musubi from ${old} to ${join(top, '.musubi', 'bus.db')}`,
    ]);
    for (const suffix of ['', '-wal', '-shm']) expect(existsSync(`${old}${suffix}`)).toBe(false);
  });

  it('leaves the old runs where they are, with a notice, while another connection has them open', async () => {
    const top = await repo();
    const old = join(top, '.git', 'musubi', 'runs.db');
    await mkdir(join(top, '.git', 'musubi'));
    const holder = SqliteStore.open({ path: old, clock });
    try {
      await holder.kvSet('run/r1', { id: 'r1' });
      const notices: string[] = [];
      const store = await openStore({
        url: DEFAULT_STORE_URL,
        cwd: top,
        clock,
        pollIntervalMs: 50,
        onOpened: (what) => notices.push(what),
      });
      await store.close();
      expect(notices).toHaveLength(1);
      expect(notices[0]).toMatch(
        /^runs of an older musubi are in .*runs\.db \(.*\); see them with --store sqlite:/,
      );
      expect((await holder.kvGet('run/r1'))?.value).toEqual({ id: 'r1' });
    } finally {
      await holder.close();
    }
    expect(existsSync(old)).toBe(true);
  });
});
