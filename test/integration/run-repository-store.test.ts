// One store per repository and worktrees outside .git/ (issue #34, items 3 and 5): a run started in any
// folder of a repository, `musubi runs` and `musubi up` at its top meet in `<top>/.musubi/bus.db`; the
// run's worktrees are under `<top>/.musubi/worktrees/`, which `.git/info/exclude` keeps out of the
// user's `git status`; the runs of an older musubi move over from `.git/musubi/runs.db`.
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bundledCliForFile, git, RUN_ENV } from '../fixtures/run-repo.js';

const musubi = bundledCliForFile();

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const env = RUN_ENV;

async function tempDir(prefix: string): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A repository with one commit and a subfolder `src/`. */
async function userRepo(): Promise<string> {
  const dir = await tempDir('musubi-repo-store-');
  git(dir, 'init', '-q');
  await mkdir(join(dir, 'src'));
  await writeFile(join(dir, 'README.md'), 'hello\n');
  await writeFile(join(dir, 'src', 'keep.txt'), 'k\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'init');
  return dir;
}

interface RunJson {
  runId: string;
  status: string;
  branch: string;
}

/** Starts `musubi up` on an OS-chosen port in `cwd` and resolves to its printed dashboard URL. */
async function up(cwd: string, runtime: string): Promise<URL> {
  const child: ChildProcessWithoutNullStreams = musubi.start(['up', '--http-port', '0'], {
    cwd,
    env: { ...env, XDG_RUNTIME_DIR: runtime },
  });
  let out = '';
  const exited = new Promise((resolve) => child.on('close', resolve));
  cleanups.push(async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
  return new Promise<URL>((resolve, reject) => {
    const deadline = setTimeout(() => reject(new Error(`hub did not start: ${out}`)), 20_000);
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const url = /dashboard: (http:\/\/\S+)/.exec(out)?.[1];
      if (url === undefined) return;
      clearTimeout(deadline);
      resolve(new URL(url));
    });
  });
}

describe('musubi run - one store per repository', { timeout: 180_000 }, () => {
  it('a run started in a subfolder is seen by musubi runs and musubi up at the top; its worktrees are under .musubi/', async () => {
    const top = await userRepo();
    const sub = join(top, 'src');
    const result = await musubi.run(
      ['run', '--agent', 'scripted', '--keep-worktrees', '--json', '--', '- write a.txt A\n- write b.txt B'],
      { cwd: sub, env, timeoutMs: 120_000 },
    );
    expect(result.code, result.stderr).toBe(0);
    const out = JSON.parse(result.stdout) as RunJson;
    expect(out.status).toBe('succeeded');

    expect(existsSync(join(top, '.musubi', 'bus.db'))).toBe(true);
    expect(existsSync(join(sub, '.musubi'))).toBe(false);
    expect(existsSync(join(top, '.git', 'musubi'))).toBe(false);
    // Every kept worktree is under <top>/.musubi/worktrees/<run-id>/, and git knows it there.
    const root = join(top, '.musubi', 'worktrees', out.runId);
    const listed = git(top, 'worktree', 'list', '--porcelain')
      .split('\n')
      .filter((line) => line.startsWith('worktree '))
      .map((line) => line.slice('worktree '.length));
    expect(listed[0]).toBe(top);
    expect(listed.length).toBeGreaterThan(1);
    for (const path of listed.slice(1)) expect(path.startsWith(`${root}/`), path).toBe(true);
    expect((await readdir(root)).sort()).toContain('integration');
    expect(git(join(root, 'integration'), 'branch', '--show-current').trim()).toBe(out.branch);

    // The user's tree: nothing to see, and the exclude names musubi's folder once.
    expect(git(top, 'status', '--porcelain')).toBe('');
    expect(git(top, 'status', '--porcelain', '--ignored')).toBe('!! .musubi/\n');
    const again = await musubi.run(['run', '--agent', 'scripted', '--json', '--', '- write c.txt C'], {
      cwd: top,
      env,
      timeoutMs: 120_000,
    });
    expect(again.code, again.stderr).toBe(0);
    const exclude = await readFile(join(top, '.git', 'info', 'exclude'), 'utf8');
    expect(exclude.split('\n').filter((line) => line === '/.musubi/')).toHaveLength(1);
    expect(git(top, 'status', '--porcelain')).toBe('');
    const second = (JSON.parse(again.stdout) as RunJson).runId;
    expect(existsSync(join(top, '.musubi', 'worktrees', second))).toBe(false);

    const runs = await musubi.run(['runs'], { cwd: top, env });
    expect(runs.stdout).toContain(`${out.runId}  succeeded`);
    expect(runs.stdout).toContain(`${second}  succeeded`);

    const page = await up(top, await tempDir('musubi-repo-store-rt-'));
    const reply = await fetch(`${page.origin}/api/runs`, {
      headers: { authorization: `Bearer ${page.searchParams.get('token') ?? ''}` },
    });
    expect(reply.status).toBe(200);
    const ids = ((await reply.json()) as { runs: { id: string }[] }).runs.map((r) => r.id).sort();
    expect(ids).toEqual([out.runId, second].sort());
    expect(existsSync(join(top, '.musubi', 'dashboard.json'))).toBe(true);
    expect(git(top, 'status', '--porcelain')).toBe('');
  });

  it('moves the runs an older musubi kept in .git/musubi/runs.db into the repository’s store', async () => {
    const top = await userRepo();
    const old = join(top, '.git', 'musubi', 'runs.db');
    const before = await musubi.run(
      ['--store', `sqlite:${old}`, 'run', '--agent', 'scripted', '--json', '--', '- write a.txt A'],
      { cwd: top, env, timeoutMs: 120_000 },
    );
    expect(before.code, before.stderr).toBe(0);
    const { runId } = JSON.parse(before.stdout) as RunJson;
    expect(existsSync(join(top, '.musubi', 'bus.db'))).toBe(false);

    const runs = await musubi.run(['runs'], { cwd: join(top, 'src'), env });
    expect(runs.code, runs.stderr).toBe(0);
    expect(runs.stdout).toContain(`${runId}  succeeded`);
    for (const suffix of ['', '-wal', '-shm']) expect(existsSync(`${old}${suffix}`)).toBe(false);
    expect(existsSync(join(top, '.musubi', 'bus.db'))).toBe(true);
    expect(git(top, 'status', '--porcelain')).toBe('');
  });
});
