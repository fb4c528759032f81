import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bundledCliForFile, git, RUN_ENV } from '../fixtures/run-repo.js';

// `musubi run`'s turns as deliveries on the repository's bus (#34 item 1), through the CLI: a turn the
// bus gave up on answered with `musubi runs answer`, and a process killed mid-turn whose turn the bus
// delivers again to the resume. The engine's side of the same paths: src/runs/turn-deliveries.test.ts.

const musubi = bundledCliForFile();
const env = RUN_ENV;

const dirs: string[] = [];
const pids: number[] = [];
afterEach(async () => {
  for (const pid of pids.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A committed repository whose musubi.yaml (untracked) gives the bus `bus` (YAML flow mapping). */
async function repoWith(bus: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'musubi-run-deliveries-'));
  dirs.push(dir);
  git(dir, 'init', '-q');
  await writeFile(join(dir, 'README.md'), 'hello\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'init');
  await writeFile(join(dir, 'musubi.yaml'), `bus: ${bus}\n`);
  return dir;
}

/**
 * A program for a scripted `run` step: counts its starts in `<count file>`; until start number
 * `<succeed at>` it writes its pid to `<count file>.pid` and sleeps (silent: the turn stalls or is
 * killed), from then on it writes done.txt in its working directory and exits 0.
 */
async function stepProgram(): Promise<{ script: string; count: string }> {
  const tools = await mkdtemp(join(tmpdir(), 'musubi-step-'));
  dirs.push(tools);
  const script = join(tools, 'step.cjs');
  await writeFile(
    script,
    [
      'const fs = require("node:fs");',
      'const [count, succeedAt] = [process.argv[2], Number(process.argv[3])];',
      'const n = (fs.existsSync(count) ? Number(fs.readFileSync(count, "utf8")) : 0) + 1;',
      'fs.writeFileSync(count, String(n));',
      'if (n < succeedAt) { fs.writeFileSync(count + ".pid", String(process.pid)); setTimeout(() => {}, 60000); }',
      'else fs.writeFileSync("done.txt", "done\\n");',
    ].join('\n'),
  );
  return { script, count: join(tools, 'count') };
}

async function until(what: string, check: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface ClaimEvent {
  type: string;
  messageId: string;
  mailbox: string;
  attempt?: number;
}

/** The bus events of the repository's store about message `id` (musubi bus events --json). */
async function historyOf(dir: string, id: string): Promise<ClaimEvent[]> {
  const events = await musubi.run(['bus', 'events', '--json', '--limit', '100000'], { cwd: dir, env });
  expect(events.code).toBe(0);
  return events.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as ClaimEvent)
    .filter((e) => e.messageId === id);
}

describe('musubi run turns on the bus', { timeout: 180_000 }, () => {
  it('asks about a turn the bus gave up on and obeys musubi runs answer retry: done on attempt 4', async () => {
    const dir = await repoWith('{ leaseMs: 5000, retry: { baseMs: 20, capMs: 50, maxAttempts: 3 } }');
    const { script, count } = await stepProgram();
    const child = musubi.start(
      ['run', '--agent', 'scripted', '--repo', dir, '--json', '--stall-seconds', '0.5', '--'].concat(
        `- run node ${script} ${count} 4`,
      ),
      { cwd: dir, env },
    );
    let stderr = '';
    let stdout = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    await until('the escalation', () => /gave up after 3 attempt/.test(stderr));
    const runId = /musubi runs answer (\S+) <retry\|skip\|abort>/.exec(stderr)?.[1] ?? '';
    expect(stderr).toMatch(
      /↻ \S+-implement-sub1 failed \(stalled: no output for 0.5 s\); the bus runs it again/,
    );
    expect(stderr).toMatch(/⚠ \S+-implement-sub1 gave up after 3 attempt\(s\): stalled: no output for 0.5 s/);

    const wrong = await musubi.run(['runs', 'answer', runId, 'maybe'], { cwd: dir, env });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("answer retry, skip, abort, not 'maybe'");
    const answered = await musubi.run(['runs', 'answer', runId, 'retry'], { cwd: dir, env });
    expect(answered.stderr).toBe('');
    expect(answered.stdout).toBe(`sent retry for ${runId}-implement-sub1 to run ${runId}\n`);
    expect(await exited).toBe(0);
    expect(stderr).toMatch(/← retry \S+-implement-sub1 \(answered by human\)/);
    const out = JSON.parse(stdout) as { status: string; filesChanged: string[] };
    expect(out).toMatchObject({ status: 'succeeded', filesChanged: ['done.txt'] });
    expect(await readFile(count, 'utf8')).toBe('4');

    const claims = (await historyOf(dir, `${runId}-implement-sub1`)).filter(
      (e) => e.type === 'message.claimed',
    );
    // Three attempts, the dead letter moved back, a fourth (its count starts again).
    expect(claims.map((c) => c.attempt)).toEqual([1, 2, 3, 1]);
    const nothing = await musubi.run(['runs', 'answer', runId, 'skip'], { cwd: dir, env });
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toContain(`no turn of run ${runId} waits for an answer`);
  });

  it('takes the answer from the dashboard: a reply to the escalation in the inbox', async () => {
    const dir = await repoWith('{ leaseMs: 5000, retry: { baseMs: 20, capMs: 50, maxAttempts: 3 } }');
    const { script, count } = await stepProgram();
    const runtime = await mkdtemp(join(tmpdir(), 'musubi-run-deliveries-rt-'));
    dirs.push(runtime);
    const child = musubi.start(
      [
        ...['run', '--agent', 'scripted', '--repo', dir, '--json', '--dashboard', '--stall-seconds', '0.5'],
        ...['--', `- run node ${script} ${count} 4`],
      ],
      { cwd: dir, env: { ...env, XDG_RUNTIME_DIR: runtime } },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    await until('the escalation', () => /gave up after 3 attempt/.test(stderr));
    const url = new URL(/^dashboard: (\S+)$/m.exec(stderr)?.[1] ?? '');
    const runId = /musubi runs answer (\S+) </.exec(stderr)?.[1] ?? '';
    const headers = {
      authorization: `Bearer ${url.searchParams.get('token') ?? ''}`,
      'content-type': 'application/json',
    };
    const inbox = (await (await fetch(`${url.origin}/api/inbox`, { headers })).json()) as {
      items: { kind: string; title: string; from: string; thread?: string }[];
    };
    const item = inbox.items.find((i) => i.kind === 'escalation');
    expect(item?.title).toMatch(
      /gave up after 3 attempts: stalled: no output for 0.5 s — reply retry, skip, abort$/,
    );
    expect(item).toMatchObject({ from: `run.${runId}`, thread: `${runId}-implement-sub1` });
    // What the inbox's Reply sends.
    const said = await fetch(`${url.origin}/api/say`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ to: item?.from, thread: item?.thread, text: 'retry' }),
    });
    expect(said.status).toBe(202);
    expect(await exited).toBe(0);
    expect(stderr).toMatch(/← retry \S+-implement-sub1 \(answered by human\)/);
  });

  it('delivers the turn of a process killed mid-turn again to the resume, once, on the same message', async () => {
    const dir = await repoWith('{ leaseMs: 1500 }');
    const { script, count } = await stepProgram();
    const child = musubi.start(
      ['run', '--agent', 'scripted', '--repo', dir, '--json', '--'].concat(`- run node ${script} ${count} 2`),
      { cwd: dir, env },
    );
    if (child.pid !== undefined) pids.push(child.pid);
    const exited = new Promise<unknown>((resolve) => child.on('close', resolve));
    await until('the turn to start', () => {
      try {
        return readFileSync(`${count}.pid`, 'utf8') !== '';
      } catch {
        return false;
      }
    });
    child.kill('SIGKILL');
    await exited;
    pids.push(Number(readFileSync(`${count}.pid`, 'utf8')));
    const listed = await musubi.run(['runs', '--json'], { cwd: dir, env });
    const [run] = JSON.parse(listed.stdout) as { runId: string; status: string }[];
    expect(run?.status).toBe('running');
    const runId = run?.runId ?? '';

    const resumed = await musubi.run(
      ['run', '--resume', runId, '--agent', 'scripted', '--repo', dir, '--json'],
      {
        cwd: dir,
        env,
        timeoutMs: 120_000,
      },
    );
    expect(resumed.code).toBe(0);
    const out = JSON.parse(resumed.stdout) as { status: string; filesChanged: string[]; headCommit: string };
    expect(out).toMatchObject({ status: 'succeeded', filesChanged: ['done.txt'] });
    expect(await readFile(count, 'utf8')).toBe('2');
    const history = await historyOf(dir, `${runId}-implement-sub1`);
    // One message: sent by the first process, its lease left to lapse by the kill, claimed again by
    // the resume (attempt 2) and acked.
    expect(history.filter((e) => e.type === 'message.sent')).toHaveLength(1);
    expect(history.filter((e) => e.type === 'message.claimed').map((e) => e.attempt)).toEqual([1, 2]);
    expect(history.at(-1)?.type).toBe('message.acked');
    // The change is on the branch once.
    const commits = git(dir, 'log', '--no-merges', '--format=%s', `HEAD..${out.headCommit}`).trim();
    expect(commits.split('\n')).toEqual([`musubi ${runId}: ${runId}-implement-sub1`]);
  });
});
