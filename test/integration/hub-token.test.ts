// The hub's token: `musubi up` makes one per start, leaves it only where its user can read it, and no
// other local user drives the hub without it (issue #35, item 1); a hub that cannot serve exits (item 3).
import { execFile, execFileSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bundleCli, type BundledCli } from '../fixtures/bundled-cli.js';
import { freePorts } from '../fixtures/free-ports.js';

/** The unprivileged user the attack runs as (Debian's `nobody`). */
const NOBODY = { uid: 65534, gid: 65534 };
const isRoot = process.getuid?.() === 0;

let musubi: BundledCli;
beforeAll(async () => {
  musubi = await bundleCli();
});
afterAll(async () => {
  await musubi.remove();
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A git repository the hub runs in (so `POST /api/runs` could really start a run there). */
async function repository(): Promise<string> {
  const repo = await tempDir('musubi-token-repo-');
  // World-readable like a real checkout, so the attacker's failure is the token's doing, not the folder's.
  await chmod(repo, 0o755);
  const git = (...args: string[]): string => execFileSync('git', args, { cwd: repo, encoding: 'utf8' });
  git('init', '-q');
  git('config', 'user.email', 't@example.invalid');
  git('config', 'user.name', 't');
  await writeFile(join(repo, 'README.md'), 'hello\n');
  git('add', '-A');
  git('commit', '-qm', 'initial');
  return repo;
}

interface RunningHub {
  readonly child: ChildProcessWithoutNullStreams;
  /** The `dashboard:` URL `musubi up` printed. */
  readonly printed: string;
  readonly stdout: () => string;
  readonly stderr: () => string;
  readonly exited: Promise<number | null>;
}

/** Starts `musubi up` on an OS-chosen port and waits for its dashboard line. */
async function up(cwd: string, env: NodeJS.ProcessEnv, extra: readonly string[] = []): Promise<RunningHub> {
  const child = musubi.start(['up', '--log-level', 'info', '--http-port', '0', ...extra], { cwd, env });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  cleanups.push(async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  });
  const printed = await new Promise<string>((resolve, reject) => {
    const deadline = setTimeout(() => reject(new Error(`hub did not start: ${stdout}${stderr}`)), 15_000);
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      const url = /dashboard: (http:\/\/\S+)/.exec(stdout)?.[1];
      if (url !== undefined) {
        clearTimeout(deadline);
        resolve(url);
      }
    });
  });
  return { child, printed, stdout: () => stdout, stderr: () => stderr, exited };
}

/** What the attacker's script saw, run as another Unix user against the hub. */
interface AttackReport {
  readonly tokenFile: string;
  readonly page: number;
  readonly health: number;
  readonly turns: number;
  readonly runs: number;
  readonly runsBody: { code?: string };
}

/**
 * As `user`, with only what any local user has (the port; the token file's path): read the token
 * file, fetch the page and the API, and try the reported attack (`POST /api/runs` with a test command).
 */
function attackAs(user: { uid: number; gid: number }, base: string, tokenFile: string, marker: string) {
  const script = `
    const [base, tokenFile, marker] = process.argv.slice(1);
    const fs = require('node:fs');
    let tokenRead = 'read';
    try { fs.readFileSync(tokenFile, 'utf8'); } catch (e) { tokenRead = e.code; }
    (async () => {
      const page = (await fetch(base + '/')).status;
      const health = (await fetch(base + '/api/health')).status;
      const turns = (await fetch(base + '/api/turns')).status;
      const res = await fetch(base + '/api/runs', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ goal: 'x', agent: 'scripted', test: 'sh -c "id >' + marker + '"' }),
      });
      const runsBody = await res.json();
      process.stdout.write(JSON.stringify({ tokenFile: tokenRead, page, health, turns, runs: res.status, runsBody }));
    })();`;
  return new Promise<AttackReport>((resolve, reject) => {
    execFile(
      process.execPath,
      ['-e', script, base, tokenFile, marker],
      { uid: user.uid, gid: user.gid, cwd: '/', env: { PATH: process.env['PATH'] ?? '' }, timeout: 15_000 },
      (err, stdout, stderr) => {
        if (err !== null) reject(new Error(`attack script failed: ${err.message} ${stderr}`));
        else resolve(JSON.parse(stdout) as AttackReport);
      },
    );
  });
}

describe('hub token', () => {
  it('makes a token per start, prints it once, keeps it 0600 in a 0700 folder and removes it on stop', async () => {
    const repo = await repository();
    const runtime = await tempDir('musubi-token-rt-');
    const env = { MUSUBI_STORE: 'sqlite:state/bus.db', XDG_RUNTIME_DIR: runtime };
    const hub = await up(repo, env);
    const url = new URL(hub.printed);
    const token = url.searchParams.get('token') ?? '';
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const base = `${url.origin}`;
    // Printed once, and never into the log.
    expect(hub.stdout().split(token).length - 1).toBe(1);
    expect(hub.stderr()).not.toContain(token);

    const dir = join(runtime, 'musubi');
    const file = join(dir, `hub-${url.port}.json`);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ url: `${base}/`, token, pid: hub.child.pid });
    // Nothing of it lands in the repository's files.
    expect(await readFile(join(repo, 'state', 'dashboard.json'), 'utf8')).not.toContain(token);

    // The page's files and the health check are public; everything else needs the token.
    expect((await fetch(`${base}/`)).status).toBe(200);
    expect((await fetch(`${base}/app.js`)).status).toBe(200);
    expect((await fetch(`${base}/api/health`)).status).toBe(200);
    const denied = await fetch(`${base}/api/turns`);
    expect(denied.status).toBe(401);
    expect(await denied.json()).toMatchObject({ code: 'GATEWAY_UNAUTHORIZED' });
    const bearer = { authorization: `Bearer ${token}` };
    expect((await fetch(`${base}/api/turns`, { headers: bearer })).status).toBe(200);
    const login = await fetch(hub.printed, { redirect: 'manual' });
    expect(login.status).toBe(303);
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    expect(cookie).toBe(`musubi_token_${url.port}=${token}`);
    expect((await fetch(`${base}/api/agents`, { headers: { cookie } })).status).toBe(200);

    // `musubi dashboard` of the same user finds the hub and its token.
    const dashboard = await musubi.run(['dashboard'], { cwd: repo, env });
    expect(dashboard.stdout).toBe(`${base}/?token=${token}\n`);
    // `--open` hands that URL to the desktop's opener (argv, no shell).
    const bin = await tempDir('musubi-token-bin-');
    const opened = join(bin, 'opened.txt');
    await writeFile(join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s\\n' "$@" > '${opened}'\n`, { mode: 0o755 });
    const open = await musubi.run(['dashboard', '--open'], {
      cwd: repo,
      env: { ...env, PATH: `${bin}:${process.env['PATH'] ?? ''}` },
    });
    expect(open.code).toBe(0);
    await expect
      .poll(() => readFile(opened, 'utf8').catch(() => ''), { timeout: 5_000 })
      .toBe(`${base}/?token=${token}\n`);

    hub.child.kill('SIGTERM');
    expect(await hub.exited).toBe(0);
    await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });

    // The next start has a token of its own.
    const next = await up(repo, env);
    expect(new URL(next.printed).searchParams.get('token')).not.toBe(token);
  });

  it('keeps another local user out: no token file to read, 401 on the API, no run started', async (ctx) => {
    if (!isRoot) {
      if (process.env['CI'] === 'true')
        throw new Error('this test switches to user nobody: CI must run as root');
      console.warn('SKIP hub token across users: the test process is not root, so it cannot switch users');
      ctx.skip();
    }
    const repo = await repository();
    const runtime = await tempDir('musubi-token-rt-');
    const env = { MUSUBI_STORE: 'sqlite:state/bus.db', XDG_RUNTIME_DIR: runtime };
    const hub = await up(repo, env);
    const url = new URL(hub.printed);
    const marker = join(await tempDir('musubi-token-marker-'), 'p');
    await chmod(join(marker, '..'), 0o777);
    const tokenFile = join(runtime, 'musubi', `hub-${url.port}.json`);
    // Even a token folder a careless umask left open does not give the token away: the file is 0600.
    await chmod(runtime, 0o755);
    const report = await attackAs(NOBODY, url.origin, tokenFile, marker);
    expect(report).toEqual({
      tokenFile: 'EACCES',
      page: 200,
      health: 200,
      turns: 401,
      runs: 401,
      runsBody: expect.objectContaining({ code: 'GATEWAY_UNAUTHORIZED' }),
    });
    const token = url.searchParams.get('token') ?? '';
    const runs = await fetch(`${url.origin}/api/runs`, { headers: { authorization: `Bearer ${token}` } });
    expect(((await runs.json()) as { runs: unknown[] }).runs).toEqual([]);
    await expect(stat(marker)).rejects.toMatchObject({ code: 'ENOENT' });

    // The control: the same script against a hub started with --no-token reads the API.
    const open = await up(repo, { ...env, MUSUBI_STORE: 'sqlite:state/open.db' }, ['--no-token']);
    expect(open.stderr()).toContain('warning: --no-token');
    expect(new URL(open.printed).search).toBe('');
    const openReport = await attackAs(NOBODY, new URL(open.printed).origin, tokenFile, marker);
    expect(openReport.turns).toBe(200);
  });

  it('a dashboard that fails after it listened closes its port and `musubi up` exits non-zero', async () => {
    const dir = await tempDir('musubi-token-half-');
    const runtime = await tempDir('musubi-token-rt-');
    // dashboard.json, where the URL file goes beside the store, is a folder: writing it fails (EISDIR).
    await mkdir(join(dir, 'state', 'dashboard.json'), { recursive: true });
    const [port] = await freePorts(1);
    const child = musubi.start(['up', '--http-port', String(port)], {
      cwd: dir,
      env: { MUSUBI_STORE: 'sqlite:state/bus.db', XDG_RUNTIME_DIR: runtime },
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdout.resume();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(1);
    expect(stderr).toMatch(/GATEWAY_UNAVAILABLE: the dashboard could not start: .*EISDIR/);
    const refused = await new Promise<string>((resolve) => {
      const socket = connect(port ?? 0, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
  });
});
