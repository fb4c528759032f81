import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSystemClock } from '../../src/core/clock.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { bundleCli, type BundledCli } from '../fixtures/bundled-cli.js';
import { fillStore, rawChecks, writeGarbage } from '../fixtures/sqlite-damage.js';

let root: string;
let dir: string;
let musubi: BundledCli;
beforeAll(async () => {
  [root, musubi] = await Promise.all([mkdtemp(join(tmpdir(), 'musubi-cli-store-')), bundleCli()]);
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
  await musubi.remove();
});
beforeEach(async () => {
  dir = await mkdtemp(join(root, 'case-'));
});

const env = { MUSUBI_STORE: 'sqlite:bus.db', MUSUBI_LOG_LEVEL: 'warn' };
const cli = (args: string[]) => musubi.run(args, { cwd: dir, env });

/** A store with one message, and its backup (taken by the second command, which opens it with data). */
async function storeWithBackup(): Promise<void> {
  const sent = await cli(['bus', 'send', '--to', 'w', '--type', 't', '--id', 'kept-1', '--body', 'hi']);
  expect(sent.code).toBe(0);
  expect((await cli(['bus', 'peek', 'w'])).code).toBe(0);
  expect(existsSync(join(dir, 'bus.db.backup'))).toBe(true);
}

describe('cli - musubi store check', () => {
  it('exits 0 for a sound store and names its backup', async () => {
    await storeWithBackup();
    const checked = await cli(['store', 'check']);
    expect(checked.stderr).toBe('');
    expect(checked.code).toBe(0);
    expect(checked.stdout).toContain(`${join(dir, 'bus.db')}: sound`);
    expect(checked.stdout).toContain(`backup: ${join(dir, 'bus.db.backup')} from `);
  });

  it('exits 1 with STORE_CORRUPT and the damage for a file with garbage in its pages', async () => {
    const path = join(dir, 'bus.db');
    await fillStore(path, createSystemClock());
    writeGarbage(path);
    const checked = await cli(['store', 'check', '--json']);
    expect(checked.code).toBe(1);
    expect(checked.stderr).toMatch(
      /^musubi: STORE_CORRUPT: SQLite store .*bus\.db is damaged: PRAGMA integrity_check/,
    );
    const result = JSON.parse(checked.stdout) as { isSound: boolean; problems: string[] };
    expect(result.isSound).toBe(false);
    expect(result.problems.length).toBeGreaterThan(0);
  });

  it('exits 1 with NOT_FOUND when there is no store, and 2 for a store that is not SQLite', async () => {
    const none = await cli(['store', 'check']);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/^musubi: NOT_FOUND: no SQLite store at /);
    const memory = await cli(['--store', 'memory:', 'store', 'check']);
    expect(memory.code).toBe(2);
    expect(memory.stderr).toMatch(/^musubi: USAGE_INVALID: /);
  });
});

describe('cli - musubi store restore', () => {
  it('brings back the data of a store truncated to 0 bytes, keeping the damaged file aside', async () => {
    await storeWithBackup();
    await truncate(join(dir, 'bus.db'), 0);
    const refused = await cli(['bus', 'peek', 'w']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('STORE_CORRUPT');
    expect(refused.stderr).toContain(`musubi --store sqlite:${join(dir, 'bus.db')} store restore`);

    const restored = await cli(['store', 'restore']);
    expect(restored.stderr).toBe('');
    expect(restored.code).toBe(0);
    expect(restored.stdout).toMatch(
      /^moved .*bus\.db aside to .*bus\.db\.corrupt-\d{4}-\d\d-\d\dT\d{6}\.\d{3}Z\n/,
    );
    expect(restored.stdout).toContain(`restored ${join(dir, 'bus.db')} from its backup`);
    const aside = (await readdir(dir)).filter((f) => f.startsWith('bus.db.corrupt-'));
    expect(aside).toHaveLength(1);

    const peek = await cli(['bus', 'peek', 'w', '--json']);
    expect(peek.code).toBe(0);
    expect(JSON.parse(peek.stdout)).toMatchObject({ messages: [{ envelope: { id: 'kept-1', body: 'hi' } }] });
  });

  it('refuses while another process has the store open, changing nothing', async () => {
    await storeWithBackup();
    const path = join(dir, 'bus.db');
    writeGarbage(path, 4_096);
    const holder = new Database(path);
    try {
      holder.pragma('journal_mode = WAL');
      const refused = await cli(['store', 'restore']);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^musubi: STORE_UNAVAILABLE: another process has .*bus\.db open/);
    } finally {
      holder.close();
    }
    expect((await readdir(dir)).filter((f) => f.includes('corrupt') || f.endsWith('.tmp'))).toEqual([]);
  });

  it('exits 1 with NOT_FOUND when there is no backup', async () => {
    await fillStore(join(dir, 'bus.db'), createSystemClock(), 5);
    const refused = await cli(['store', 'restore']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^musubi: NOT_FOUND: no backup of /);
  });
});

describe('cli - the run store', () => {
  it('refuses the repository’s store truncated to 0 bytes, and store restore brings it back', async () => {
    const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t' };
    const git = (...args: string[]) =>
      execFileSync('git', args, {
        cwd: dir,
        env: { ...gitEnv, GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' },
      });
    git('init', '-q');
    git('commit', '-q', '--allow-empty', '-m', 'init');
    await mkdir(join(dir, '.musubi'));
    const runs = join(dir, '.musubi', 'bus.db');
    // Two opens with data in between: the second takes the backup.
    for (let n = 0; n < 2; n++) {
      const store = SqliteStore.open({ path: runs, clock: createSystemClock() });
      await store.kvSet(`note/${n}`, n);
      await store.close();
    }
    expect(existsSync(`${runs}.backup`)).toBe(true);
    await truncate(runs, 0);
    const runEnv = { MUSUBI_STORE: '', MUSUBI_LOG_LEVEL: 'warn' };
    const listed = await musubi.run(['runs', '--repo', dir], { cwd: dir, env: runEnv });
    expect(listed.code).toBe(1);
    expect(listed.stderr).toContain(`musubi: STORE_CORRUPT: SQLite store ${runs} is damaged`);

    const restored = await musubi.run(['store', 'restore'], {
      cwd: dir,
      env: runEnv,
    });
    expect(restored.code).toBe(0);
    expect(rawChecks(runs)).toEqual({ quick: 'ok', integrity: 'ok' });
    const after = await musubi.run(['runs', '--repo', dir], { cwd: dir, env: runEnv });
    expect(after.code).toBe(0);
  });
});
