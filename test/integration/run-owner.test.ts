// One owner per run (issue #34, item 4): a second `musubi run --resume` of a live run is refused at
// once with RUN_ACTIVE, and a run whose owner was killed resumes at once on the same host.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { BundledCli } from '../fixtures/bundled-cli.js';
import { bundledCliForFile, git, RUN_ENV } from '../fixtures/run-repo.js';

const musubi = bundledCliForFile();
const env = RUN_ENV;

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function repo(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'musubi-run-owner-'));
  dirs.push(dir);
  git(dir, 'init', '-q');
  await writeFile(join(dir, 'README.md'), 'hello\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'init');
  return dir;
}

describe('musubi run - one owner per run', () => {
  it('refuses the second of two resumes started at once, before any work; the branch has each change once', async () => {
    const dir = await repo();
    // One subtask: write, a pause long enough to overlap two resumes, then an append a double run would double.
    const goal = '- write a.txt A\n- sleep 3000\n- append b.txt B';
    // A short turn lease: the killed process's turn comes back to the resume within 2 s.
    await writeFile(join(dir, 'musubi.yaml'), 'bus: { leaseMs: 2000 }\n');
    const args = ['run', '--agent', 'scripted', '--workers', '1', '--repo', dir];
    const child = spawn(process.execPath, [musubi.entry, ...args, '--', goal], {
      cwd: dir,
      env: { ...process.env, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_c, s) => resolve(s)));
    const deadline = Date.now() + 60_000;
    let runId: string | undefined;
    while ((runId = /▶ worker 1 (\S+)-implement-sub1/.exec(stdout)?.[1]) === undefined) {
      if (Date.now() > deadline) throw new Error(`the run never started its subtask:\n${stdout}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    // Killed mid-turn: its claim stays in the store, but its process is gone, so a resume may take over.
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    const resume = (): Promise<Awaited<ReturnType<BundledCli['run']>> & { endedAt: number }> =>
      musubi
        .run([...args, '--resume', runId, '--json'], { cwd: dir, env, timeoutMs: 120_000 })
        .then((r) => ({ ...r, endedAt: Date.now() }));
    const [one, two] = await Promise.all([resume(), resume()]);
    const refused = one.code === 0 ? two : one;
    const finished = one.code === 0 ? one : two;
    expect(finished.code, finished.stderr).toBe(0);
    expect((JSON.parse(finished.stdout) as { status: string }).status).toBe('succeeded');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/RUN_ACTIVE: run \S+ is running \(process \d+ on /);
    // Refused at once: it ended while the other was still in its 3 s turn.
    expect(refused.endedAt).toBeLessThan(finished.endedAt);
    expect(git(dir, 'show', `musubi/${runId}:a.txt`)).toBe('A\n');
    expect(git(dir, 'show', `musubi/${runId}:b.txt`)).toBe('B\n');
    // The run is free again: a third resume finds it finished.
    const again = await musubi.run([...args, '--resume', runId, '--json'], { cwd: dir, env });
    expect(again.code).toBe(0);
  });
});
