import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bundledCliForFile, git, RUN_ENV } from '../fixtures/run-repo.js';

const musubi = bundledCliForFile();

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const env = RUN_ENV;

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/** A repository with one commit, plus an uncommitted change and an untracked file the run must not touch. */
async function userRepo(): Promise<string> {
  const dir = await tempDir('musubi-run-');
  git(dir, 'init', '-q');
  await writeFile(join(dir, 'README.md'), 'hello\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'init');
  await writeFile(join(dir, 'README.md'), 'hello, edited but not committed\n');
  await writeFile(join(dir, 'scratch.txt'), 'untracked\n');
  return dir;
}

/**
 * Everything a user sees of their repository: branch, index, HEAD and every file outside .git and
 * musubi's own folder (.musubi/: the store and the run worktrees, kept out of git by info/exclude).
 */
async function snapshot(dir: string): Promise<string> {
  const files: string[] = [];
  for (const name of (await readdir(dir, { recursive: true })).sort()) {
    if (['.git', '.musubi'].some((own) => name === own || name.startsWith(`${own}/`))) continue;
    const path = join(dir, name);
    files.push(`${name}:${await readFile(path, 'utf8').catch(() => '<dir>')}`);
  }
  return [
    git(dir, 'rev-parse', 'HEAD'),
    git(dir, 'branch', '--show-current'),
    git(dir, 'status', '--porcelain'),
    ...files,
  ].join('\n');
}

function run(dir: string, args: readonly string[]) {
  return musubi.run(['run', '--agent', 'scripted', '--repo', dir, ...args], {
    cwd: dir,
    env,
    timeoutMs: 120_000,
  });
}

interface RunJson {
  runId: string;
  status: string;
  branch: string;
  baseCommit: string;
  headCommit: string;
  filesChanged: string[];
  tests: { command: string; exitCode: number; passed: boolean } | null;
  conflicts: number;
  turns: number;
  usage: { inputTokens: number; outputTokens: number; costUsd: number };
}

// Each test starts several CLI processes: generous on a loaded 2-core machine.
describe('musubi run', { timeout: 180_000 }, () => {
  it('runs two workers in their own worktrees, merges both onto musubi/<id> and never touches the user’s tree', async () => {
    const dir = await userRepo();
    const before = await snapshot(dir);
    const result = await run(dir, ['--json', '--', '- write a.txt A\n- write b.txt B']);
    expect(result.stderr).toContain('phase 1/3: implement');
    expect(result.code).toBe(0);
    const out = JSON.parse(result.stdout) as RunJson;
    expect(out).toEqual({
      runId: expect.stringMatching(/^\d{14}-[0-9a-f]{6}$/),
      status: 'succeeded',
      branch: `musubi/${out.runId}`,
      baseCommit: git(dir, 'rev-parse', 'HEAD').trim(),
      headCommit: git(dir, 'rev-parse', out.branch).trim(),
      filesChanged: ['a.txt', 'b.txt'],
      tests: null,
      conflicts: 0,
      turns: 5,
      usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
      reason: null,
    });
    expect(git(dir, 'show', `${out.branch}:a.txt`)).toBe('A\n');
    expect(git(dir, 'show', `${out.branch}:b.txt`)).toBe('B\n');
    expect(await snapshot(dir)).toBe(before);
    expect(git(dir, 'worktree', 'list').trim().split('\n')).toHaveLength(1);

    const list = await musubi.run(['runs', '--repo', dir], { cwd: dir, env });
    expect(list.stdout).toContain(`${out.runId}  succeeded`);
    const shown = await musubi.run(['runs', 'show', out.runId, '--repo', dir, '--json'], { cwd: dir, env });
    expect(JSON.parse(shown.stdout)).toEqual(out);
    const text = await musubi.run(['runs', 'show', out.runId, '--repo', dir], { cwd: dir, env });
    expect(text.stdout).toMatch(/run \S+: succeeded[\s\S]*a\.txt \| 1 \+[\s\S]*2 files changed/);
  });

  it('records a conflict, hands it to a resolver turn and fails naming the file when it stays', async () => {
    const dir = await userRepo();
    const before = await snapshot(dir);
    const result = await run(dir, ['--json', '--', '- write same.txt A\n- write same.txt B']);
    expect(result.code).toBe(1);
    const out = JSON.parse(result.stdout) as RunJson & { reason: string };
    expect(out).toMatchObject({ status: 'failed', conflicts: 1, turns: 4 });
    expect(out.reason).toMatch(/conflicted in same\.txt/);
    expect(result.stderr).toContain('conflicts in same.txt; asking a resolver');
    expect(await snapshot(dir)).toBe(before);
  });

  it('gives the agents one more implement round with the failing test output, then reports the verdict', async () => {
    const dir = await userRepo();
    // The test prints an instruction line when c.txt is missing; the scripted agent follows it in the fix round.
    const check = "process.exit(require('fs').existsSync('c.txt') ? 0 : (console.log('write c.txt C'), 1))";
    const result = await run(dir, ['--json', '--test', `node -e "${check}"`, '--', '- write a.txt A']);
    const out = JSON.parse(result.stdout) as RunJson;
    expect(result.stderr).toMatch(/tests failed \(exit 1\)[\s\S]*phase 1\/1: fix1[\s\S]*tests passed/);
    expect(out.status).toBe('succeeded');
    expect(out.tests).toEqual({ command: `node -e "${check}"`, exitCode: 0, passed: true });
    expect(out.filesChanged).toEqual(['a.txt', 'c.txt']);
    expect(result.code).toBe(0);
  });

  it('ends no-change with exit 1 when every edit was refused and nothing changed, and says so (#34 item 6)', async () => {
    const dir = await userRepo();
    const before = await snapshot(dir);
    const result = await run(dir, ['--json', '--', '- try write ../outside.txt hi']);
    expect(result.code).toBe(1);
    const out = JSON.parse(result.stdout) as RunJson & { reason: string };
    expect(out).toMatchObject({ status: 'no-change', filesChanged: [], turns: 5 });
    expect(out.reason).toMatch(
      /^no subtask changed a file \(\S+-implement-sub1: write \.\.\/outside\.txt: PATH_OUTSIDE_CWD/,
    );
    expect(result.stderr).toMatch(/↻ worker 1 \S+-implement-sub1 changed nothing, an edit failed: write/);
    expect(result.stderr).toMatch(/✘ worker 1 \S+-implement-sub1: changed nothing; an edit failed: write/);
    expect(await snapshot(dir)).toBe(before);
    const text = await musubi.run(['runs', 'show', out.runId, '--repo', dir], { cwd: dir, env });
    expect(text.stdout).toMatch(/run \S+: no-change — no subtask changed a file \(/);
    expect(text.stdout).toContain('changes    none');
    expect(text.stdout).not.toContain('merge it');
    const list = await musubi.run(['runs', '--repo', dir], { cwd: dir, env });
    expect(list.stdout).toContain(`${out.runId}  no-change`);
    // It ended for good: a resume hands it back as it is, running no turn again.
    const resumed = await run(dir, ['--resume', out.runId, '--json']);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ status: 'no-change', turns: 5 });
  });

  it('says how to start a repository when the folder is not one', async () => {
    const dir = await tempDir('musubi-run-plain-');
    const result = await run(dir, ['write a.txt A']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/RUN_NOT_A_REPOSITORY: .* is not in a git repository.*git init/);
    expect(existsSync(join(dir, '.musubi'))).toBe(false);
    const usage = await run(dir, []);
    expect(usage.code).toBe(2);
  });

  it('resumes after kill -9: a finished subtask does not run again and the run completes', async () => {
    const dir = await userRepo();
    const side = await tempDir('musubi-run-side-');
    const count = join(side, 'count.js');
    const block = join(side, 'block.js');
    const log = join(side, 'log.txt');
    const release = join(side, 'release');
    await writeFile(count, `require('fs').appendFileSync(${JSON.stringify(log)}, 'one\\n');`);
    await writeFile(
      block,
      `require('fs').appendFileSync(${JSON.stringify(log)}, 'two\\n');` +
        `const t = setInterval(() => { if (require('fs').existsSync(${JSON.stringify(release)})) { clearInterval(t); require('fs').writeFileSync('late.txt', 'L\\n'); } }, 50);`,
    );
    const goal = `- run node ${count}\n- run node ${block}`;
    // A short turn lease: the killed process's turn comes back to the resume within 2 s.
    await writeFile(join(dir, 'musubi.yaml'), 'bus: { leaseMs: 2000 }\n');
    const child = spawn(
      process.execPath,
      [musubi.entry, 'run', '--agent', 'scripted', '--repo', dir, '--json', '--', goal],
      {
        cwd: dir,
        env: { ...process.env, NO_COLOR: '1', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise((resolve) => child.on('close', resolve));
    const deadline = Date.now() + 90_000;
    while (!(/✔ worker 1 \S+-implement-sub1/.test(stderr) && /▶ worker 2/.test(stderr))) {
      if (Date.now() > deadline) throw new Error(`the run never got to both subtasks:\n${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill('SIGKILL');
    await exited;
    const runId = /▶ worker \d (\S+)-implement-sub\d/.exec(stderr)?.[1] ?? '';
    expect(runId).not.toBe('');
    await writeFile(release, '');
    const listed = await musubi.run(['runs', '--repo', dir], { cwd: dir, env });
    expect(listed.stdout).toContain(`${runId}  running`);

    const resumed = await musubi.run(
      ['run', '--resume', runId, '--agent', 'scripted', '--repo', dir, '--json'],
      {
        cwd: dir,
        env,
        timeoutMs: 120_000,
      },
    );
    expect(resumed.stderr).toContain(`${runId}-implement-sub1: done in an earlier attempt, not run again`);
    const out = JSON.parse(resumed.stdout) as RunJson;
    expect(out.status).toBe('succeeded');
    expect(out.filesChanged).toEqual(['late.txt']);
    expect((await readFile(log, 'utf8')).split('\n').filter((l) => l === 'one')).toHaveLength(1);
    expect(git(dir, 'worktree', 'list').trim().split('\n')).toHaveLength(1);
    expect(resumed.code).toBe(0);
  });

  it('stops a silent turn, has the bus run it again, and skips it after the last attempt as told', async () => {
    const dir = await userRepo();
    await writeFile(join(dir, 'musubi.yaml'), 'bus: { retry: { baseMs: 20, capMs: 50, maxAttempts: 3 } }\n');
    const result = await run(dir, [
      '--json',
      '--stall-seconds',
      '0.5',
      '--on-dead-letter',
      'skip',
      '--',
      '- sleep 60000\n- write q.txt Q',
    ]);
    const out = JSON.parse(result.stdout) as RunJson & { reason: string };
    expect(result.stderr.match(/\S+-implement-sub1 went silent for 0.5 s \(attempt \d\)/g)).toHaveLength(3);
    expect(result.stderr.match(/the bus runs it again in/g)).toHaveLength(2);
    expect(result.stderr).toMatch(
      /⚠ \S+-implement-sub1 gave up after 3 attempt\(s\): stalled: no output for 0.5 s/,
    );
    expect(result.stderr).toMatch(/← skip \S+-implement-sub1 \(answered by --on-dead-letter skip\)/);
    expect(result.stderr).toMatch(
      /✘ worker 1 \S+-implement-sub1: skipped by --on-dead-letter skip after 3 attempt\(s\): stalled: no output for 0.5 s/,
    );
    expect(out).toMatchObject({ status: 'failed', filesChanged: ['q.txt'] });
    expect(out.reason).toMatch(/1 subtask\(s\) failed: \S+-implement-sub1/);
    expect(result.code).toBe(1);
  });

  it('takes its team and agents from musubi.yaml, and refuses a pattern it cannot drive', async () => {
    const dir = await userRepo();
    const yaml = [
      'agents:',
      '  planner: { backend: scripted }',
      '  builder: { backend: scripted }',
      'teams:',
      '  pair: { pattern: three-phase, agents: [planner, builder] }',
      '  office: { pattern: org, agents: [planner] }',
      '',
    ].join('\n');
    const config = join(await tempDir('musubi-run-config-'), 'musubi.yaml');
    await writeFile(config, yaml);
    const ok = await musubi.run(
      ['--config', config, 'run', '--team', 'pair', '--repo', dir, '--json', '--', '- write a.txt A'],
      { cwd: dir, env, timeoutMs: 120_000 },
    );
    expect(ok.code).toBe(0);
    expect((JSON.parse(ok.stdout) as RunJson).filesChanged).toEqual(['a.txt']);
    const refused = await musubi.run(['--config', config, 'run', '--team', 'office', '--repo', dir, 'x'], {
      cwd: dir,
      env,
    });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      "USAGE_INVALID: musubi run cannot drive team 'office' (pattern org) yet",
    );
  });

  it('on a terminal keeps a status block with the phase bar, tokens and cost below the milestone lines', async () => {
    const dir = await userRepo();
    const result = await musubi.runOnTty(
      ['run', '--agent', 'scripted', '--repo', dir, '--', '- write a.txt A\n- write b.txt B'],
      {
        cwd: dir,
        env: { ...env, COLUMNS: '100' },
        timeoutMs: 120_000,
      },
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/implement 1\/3 \[█{10}░{10}\] 1\/2 · 0 tokens, \$0\.0000/);
    expect(result.stdout).toMatch(/review 3\/3 \[█{20}\] 1\/1/);
    expect(result.stdout).toContain('\x1b[');
    expect(result.stdout).toMatch(/run \S+: succeeded/);
  });

  it('with --dashboard serves the dashboard on the run’s store while it runs, run events included', async () => {
    const dir = await userRepo();
    const side = await tempDir('musubi-run-probe-');
    const probe = join(side, 'probe.js');
    // A worker turn reads the dashboard's URL file and the hub's token file (in the token folder of the
    // user who started the run), and waits on its event stream for the run's own events.
    const runtime = join(side, 'runtime');
    await writeFile(
      probe,
      [
        "const fs = require('fs');",
        'const { url } = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));',
        'const tokenFile = process.argv[3] + "/musubi/hub-" + new URL(url).port + ".json";',
        'const { token } = JSON.parse(fs.readFileSync(tokenFile, "utf8"));',
        'const ac = new AbortController();',
        "const headers = { authorization: 'Bearer ' + token };",
        "fetch(url + 'api/events?after=0', { signal: ac.signal, headers }).then(async (r) => {",
        "  if (r.status !== 200) { console.error('events answered ' + r.status); process.exit(1); }",
        "  let text = '';",
        '  for await (const chunk of r.body) {',
        '    text += Buffer.from(chunk).toString();',
        "    if (text.includes('run.turn-started')) { fs.writeFileSync('seen.txt', 'run.turn-started\\n'); ac.abort(); return; }",
        '  }',
        "}).catch((e) => { if (e.name !== 'AbortError') { console.error(e); process.exit(1); } });",
      ].join('\n'),
    );
    const urlFile = join(dir, '.musubi', 'dashboard.json');
    const result = await musubi.run(
      ['run', '--agent', 'scripted', '--repo', dir, '--dashboard', '--json', '--'].concat(
        `- run node ${probe} ${urlFile} ${runtime}`,
      ),
      { cwd: dir, env: { ...env, XDG_RUNTIME_DIR: runtime }, timeoutMs: 120_000 },
    );
    expect(result.stderr).toMatch(/^dashboard: http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{43}$/m);
    const out = JSON.parse(result.stdout) as RunJson;
    expect(out.status).toBe('succeeded');
    expect(git(dir, 'show', `${out.branch}:seen.txt`)).toBe('run.turn-started\n');
  });

  it('stops on Ctrl-C with exit 3 and a resume line, and the resumed run finishes', async () => {
    const dir = await userRepo();
    const child = spawn(
      process.execPath,
      [musubi.entry, 'run', '--agent', 'scripted', '--repo', dir, '--', '- write a.txt A\n- sleep 60000'],
      { cwd: dir, env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const deadline = Date.now() + 90_000;
    while (!/✔ worker 1 \S+-implement-sub1/.test(stdout)) {
      if (Date.now() > deadline) throw new Error(`the run never finished its first subtask:\n${stdout}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill('SIGINT');
    expect(await exited).toBe(3);
    expect(stdout).toMatch(/run (\S+): stopped — interrupted/);
    const runId = /run (\S+): stopped/.exec(stdout)?.[1] ?? '';
    expect(stdout).toContain(`resume     musubi run --resume ${runId}`);
    await writeFile(join(dir, 'musubi.yaml'), 'bus: { retry: { baseMs: 20, capMs: 50, maxAttempts: 2 } }\n');
    const resumed = await musubi.run(
      [
        ...['run', '--resume', runId, '--agent', 'scripted', '--repo', dir, '--json'],
        ...['--stall-seconds', '0.5', '--on-dead-letter', 'skip'],
      ],
      {
        cwd: dir,
        env,
        timeoutMs: 120_000,
      },
    );
    expect(resumed.stderr).toContain(`${runId}-implement-sub1: done in an earlier attempt, not run again`);
    // The sleeping subtask runs again, stalls out and is skipped; the finished one's file is on the branch.
    const out = JSON.parse(resumed.stdout) as RunJson;
    expect(out.filesChanged).toEqual(['a.txt']);
    expect(resumed.code).toBe(1);
  });

  it('--apply merges the result into the current branch only when the tree is clean', async () => {
    const dirty = await userRepo();
    const before = await snapshot(dirty);
    const refused = await run(dirty, ['--apply', '--', '- write a.txt A']);
    expect(refused.stdout).toContain('not applied: your working tree has changes');
    expect(refused.code).toBe(0);
    expect(await snapshot(dirty)).toBe(before);

    const clean = await tempDir('musubi-run-clean-');
    git(clean, 'init', '-q');
    await writeFile(join(clean, 'README.md'), 'hello\n');
    git(clean, 'add', '-A');
    git(clean, 'commit', '-q', '-m', 'init');
    const applied = await run(clean, ['--apply', '--', '- write a.txt A']);
    expect(applied.stdout).toMatch(/applied: merged musubi\/\S+ into your current branch/);
    expect(await readFile(join(clean, 'a.txt'), 'utf8')).toBe('A\n');
    expect(git(clean, 'status', '--porcelain')).toBe('');
  });
});
