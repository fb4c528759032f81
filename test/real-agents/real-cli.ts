import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, chown, copyFile, link, mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';
import type { AgentBackend } from '../../src/agents/agent-runner.js';
import type { ConversationView } from '../../src/agents/model-endpoint/conversation.js';
import type { Dialect } from '../../src/agents/model-endpoint/dialect.js';
import { ALL_DIALECTS } from '../../src/agents/model-endpoint/dialects/index.js';
import type { ModelEndpoint } from '../../src/agents/model-endpoint/model-endpoint.js';
import type { LoggedRequest } from '../../src/agents/model-endpoint/request-log.js';
import { isProcessAlive } from '../../src/agents/process/process-group.js';

type CliName = Exclude<AgentBackend, 'scripted'>;

interface Pin {
  readonly package: string;
  readonly version: string;
  readonly bin: string;
}

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The pinned versions (scripts/agent-clis.json), which scripts/install-agent-clis.mjs installs. */
export const PINS: Readonly<Record<CliName, Pin>> = JSON.parse(
  readFileSync(join(repoRoot, 'scripts', 'agent-clis.json'), 'utf8'),
) as Record<CliName, Pin>;

/** Where the install script puts the CLIs (outside the clone, reused across clones). */
export function agentClisDir(env: NodeJS.ProcessEnv = process.env): string {
  return (
    env['MUSUBI_AGENT_CLIS_DIR'] ||
    join(env['XDG_CACHE_HOME'] || join(homedir(), '.cache'), 'musubi', 'agent-clis')
  );
}

/** The installed binary of a pinned CLI, or undefined when the cache lacks it. */
export function realCliPath(cli: CliName): string | undefined {
  const pin = PINS[cli];
  const folder = join(agentClisDir(), `${cli}-${pin.version}`);
  const bin = join(folder, 'node_modules', '.bin', pin.bin);
  return existsSync(join(folder, '.installed')) && existsSync(bin) ? bin : undefined;
}

/**
 * Whether the real-CLI suite of `cli` can run. Without the cached CLI it skips with a printed reason,
 * except in CI (`CI=true`), where it registers a failing test instead: CI must never pass without it.
 */
export function realCliGuard(cli: CliName): string | undefined {
  const bin = realCliPath(cli);
  if (bin !== undefined) return bin;
  const how = `node scripts/install-agent-clis.mjs ${cli}`;
  const reason = `${PINS[cli].package}@${PINS[cli].version} is not in ${agentClisDir()} (install it with: ${how})`;
  if (process.env['CI'] !== 'true') {
    console.warn(`SKIP real ${cli} tests: ${reason}`);
    // A file whose tests all sit behind the guard must still register one, or vitest fails it.
    it.skip(`real ${cli} tests: ${reason}`, () => undefined);
    return undefined;
  }
  describe(`real ${cli} (CI)`, () => {
    it(`needs the real ${cli} CLI`, () => {
      throw new Error(
        `real ${cli} CLI missing on CI: ${reason}; .ci/run must run scripts/install-agent-clis.mjs`,
      );
    });
  });
  return undefined;
}

/**
 * The environment a real CLI runs with in these tests: the machine's PATH and locale, a private HOME,
 * and every route off this machine closed (a proxy on a closed loopback port for anything that is not
 * loopback), so a CLI that tries a remote host fails fast instead of waiting for a timeout.
 */
export function isolatedEnv(home: string): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: home,
    USER: process.env['USER'] ?? 'root',
    LANG: 'C.UTF-8',
    // Inside the sandbox: some CLIs leave files in their temp folder (gemini's error reports).
    TMPDIR: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    HTTP_PROXY: 'http://127.0.0.1:9',
    HTTPS_PROXY: 'http://127.0.0.1:9',
    http_proxy: 'http://127.0.0.1:9',
    https_proxy: 'http://127.0.0.1:9',
    NO_PROXY: '127.0.0.1,localhost,::1',
    no_proxy: '127.0.0.1,localhost,::1',
    NO_COLOR: '1',
  };
  return env;
}

/** A fresh HOME and work folder for one test; `owner` chowns both (for the unprivileged-user runs). */
export async function makeSandbox(owner?: { uid: number; gid: number }): Promise<{
  home: string;
  cwd: string;
  [Symbol.asyncDispose](): Promise<void>;
}> {
  const root = await mkdtemp(join(tmpdir(), 'musubi-real-cli-'));
  const home = join(root, 'home');
  const cwd = join(root, 'work');
  await mkdir(home, { recursive: true });
  await mkdir(cwd, { recursive: true });
  if (owner !== undefined) {
    await chown(root, owner.uid, owner.gid);
    await chown(home, owner.uid, owner.gid);
    await chown(cwd, owner.uid, owner.gid);
  }
  return {
    home,
    cwd,
    [Symbol.asyncDispose]: () => rm(root, { recursive: true, force: true }),
  };
}

/** Writes the files of an endpoint wiring (creating their folders). */
export async function writeWiringFiles(
  files: readonly { readonly path: string; readonly content: string }[],
  owner?: { uid: number; gid: number },
): Promise<void> {
  for (const f of files) {
    // mkdir returns the first folder it created: chown that one and everything under it for `owner`.
    const created = await mkdir(dirname(f.path), { recursive: true });
    await writeFile(f.path, f.content, { mode: 0o600 });
    if (owner === undefined) continue;
    await chown(f.path, owner.uid, owner.gid);
    if (created === undefined) continue;
    for (let d = dirname(f.path); d.startsWith(created); d = dirname(d)) await chown(d, owner.uid, owner.gid);
  }
}

/** A user a turn can run as (`runAs`). */
export interface Owner {
  readonly uid: number;
  readonly gid: number;
}

/** uid/gid of `nobody` for the unprivileged runs, or undefined when this process cannot switch users (not root). */
export function nobody(): Owner | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('nobody:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  return uid === undefined || gid === undefined ? undefined : { uid: Number(uid), gid: Number(gid) };
}

/** ALL_DIALECTS, each recording the views it reads into `views` (to see what a request carried). */
export function recordingDialects(views: ConversationView[]): Dialect[] {
  return ALL_DIALECTS.map((d) => ({
    ...d,
    read: (request) => {
      const view = d.read(request);
      views.push(view);
      return view;
    },
  }));
}

/** The tokens the endpoint reported for the answers the CLI received in full (errors and cut streams excluded). */
export function endpointUsage(requests: readonly LoggedRequest[]): {
  inputTokens: number;
  outputTokens: number;
} {
  const answered = requests.filter((r) => r.status === 200 && r.isCut !== true && r.usage !== undefined);
  return {
    inputTokens: answered.reduce((n, r) => n + (r.usage?.inputTokens ?? 0), 0),
    outputTokens: answered.reduce((n, r) => n + (r.usage?.outputTokens ?? 0), 0),
  };
}

/** Resolves once the endpoint holds a request it answers with `hang` (the CLI is then waiting on it). */
export async function untilHanging(endpoint: ModelEndpoint, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!endpoint.requests().some((r) => r.answer === 'hang')) {
    if (Date.now() > deadline) throw new Error('the CLI never sent the hanging request');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** True when `pid` is a live (non-zombie) process. */
export function isAlive(pid: number | null): boolean {
  return pid !== null && pid > 0 && isProcessAlive(pid);
}

/** Live (non-zombie) processes whose command line or environment contains `marker`, as `<pid> <cmdline>`. */
export function liveWith(marker: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8');
      const isLive = stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
      if (isLive && (cmd.includes(marker) || environ.includes(marker))) out.push(`${entry} ${cmd}`);
    } catch {
      // Gone between readdir and read (or not ours to read).
    }
  }
  return out;
}

/** Polls `check` until it returns nothing or `timeoutMs` passes; resolves what is still left. */
export async function gone(check: () => string[], timeoutMs = 10_000): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = check();
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The directive line that makes the endpoint answer with `behaviour`. */
export const directive = (behaviour: unknown): string => `MUSUBI-MODEL: ${JSON.stringify(behaviour)}`;

/**
 * The binary `owner` can run. The cache sits under root's home, which other users cannot enter, so an
 * unprivileged run gets a hard link (or a copy) of the self-contained executable `file` (symlinks resolved)
 * in a temp folder; without an owner it is `launcher` as installed.
 */
export async function binaryFor(
  owner: Owner | undefined,
  launcher: string,
  file: string = launcher,
): Promise<{ path: string; [Symbol.asyncDispose](): Promise<void> }> {
  if (owner === undefined) return { path: launcher, [Symbol.asyncDispose]: async () => undefined };
  const dir = await mkdtemp(join(tmpdir(), 'musubi-cli-bin-'));
  await chmod(dir, 0o755);
  const path = join(dir, basename(launcher));
  const target = await realpath(file);
  await link(target, path).catch(() => copyFile(target, path));
  await chmod(path, 0o755);
  return { path, [Symbol.asyncDispose]: () => rm(dir, { recursive: true, force: true }) };
}
