import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, writeFile } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_WIRINGS } from '../../src/agents/model-endpoint/cli-wirings.js';
import { createModelEndpoint } from '../../src/agents/model-endpoint/create-model-endpoint.js';
import { CLI_ENTRY, TSX_LOADER, type CliRun } from '../fixtures/run-cli.js';
import {
  agentClisDir,
  binaryFor,
  isolatedEnv,
  makeSandbox,
  nobody,
  type Owner,
  PINS,
  realCliGuard,
  writeWiringFiles,
} from './real-cli.js';

// `musubi run` on real claude and codex turns in the run's worktrees (<repo>/.musubi/worktrees/…, outside
// .git/, where claude in acceptEdits refused every write as "a sensitive file"): one subtask writes a new
// file and edits a tracked one, as root (claude without IS_SANDBOX, so in acceptEdits) and as `nobody`;
// and a run whose only edit claude refuses ends `no-change` naming the refusal (#34 items 5 and 6).

const claude = realCliGuard('claude');
const codex = realCliGuard('codex');
const RUN_MS = 120_000;
const TEST_MS = RUN_MS + 30_000;
const isRoot = process.getuid?.() === 0;
const owner = isRoot ? nobody() : undefined;
const IDENTITY = {
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@t',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@t',
};
/** One implement subtask (no bullet lines): a new file, then an edit of the tracked README.md. */
const TASK = 'write new.txt new file\nwrite README.md hello, edited';

interface RunJson {
  readonly runId: string;
  readonly status: string;
  readonly branch: string;
  readonly filesChanged: readonly string[];
  readonly reason: string | null;
}

interface Outcome {
  readonly run: CliRun;
  readonly json: RunJson;
  readonly answers: readonly (string | undefined)[];
  /** new.txt and README.md as the run's branch has them ('' when absent); read before the sandbox goes. */
  readonly onBranch: ReadonlyMap<string, string>;
  /** Whether `outside.txt` appeared at the repository's top, outside every worktree. */
  readonly outside: boolean;
}

/** The folder holding `cli`'s launcher that `user` can run (a linked copy outside root's cache for `nobody`). */
async function cliBinDir(
  cli: 'claude' | 'codex',
  user: Owner | undefined,
  sandboxRoot: string,
): Promise<{ dir: string; [Symbol.asyncDispose](): Promise<void> }> {
  const bin = (cli === 'claude' ? claude : codex) ?? cli;
  if (cli === 'claude') {
    const binary = await binaryFor(user, bin);
    return { dir: dirname(binary.path), [Symbol.asyncDispose]: () => binary[Symbol.asyncDispose]() };
  }
  if (user === undefined) return { dir: dirname(bin), [Symbol.asyncDispose]: async () => undefined };
  // codex's launcher finds its native binary beside it: hard-link the whole install (as codex.test.ts does).
  const install = join(sandboxRoot, 'codex-install');
  execFileSync('cp', ['-al', join(agentClisDir(), `codex-${PINS.codex.version}`), install]);
  return { dir: join(install, 'node_modules', '.bin'), [Symbol.asyncDispose]: async () => undefined };
}

/** Runs `musubi <args>` from source as `user` (this process's user when undefined) with exactly `env`. */
function musubi(args: readonly string[], cwd: string, env: Record<string, string>, user?: Owner) {
  return new Promise<CliRun>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, ...args], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: RUN_MS,
      ...(user !== undefined && { uid: user.uid, gid: user.gid }),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/**
 * A temp repository (README.md committed) owned by `user`, `musubi run --json <task>` on it with the real
 * `cli` wired to a fresh model endpoint, and what came of it. `config` is written as musubi.yaml outside
 * the repository and passed with --config.
 */
async function runOn(
  cli: 'claude' | 'codex',
  task: string,
  options: { user?: Owner | undefined; agent?: string; config?: string } = {},
): Promise<Outcome> {
  const { user } = options;
  await using sandbox = await makeSandbox(user);
  await using endpoint = createModelEndpoint();
  const url = await endpoint.start();
  const wiring = CLI_WIRINGS[cli]({ url, configDir: join(sandbox.home, `.${cli}`) });
  await writeWiringFiles(wiring.files, user);
  await using bin = await cliBinDir(cli, user, dirname(sandbox.home));
  const env: Record<string, string> = {
    ...isolatedEnv(sandbox.home),
    ...wiring.env,
    ...IDENTITY,
    ...(user !== undefined && { USER: 'nobody' }),
    PATH: `${bin.dir}${delimiter}${dirname(process.execPath)}${delimiter}/usr/bin:/bin`,
  };
  const repo = sandbox.cwd;
  const git = (...args: string[]): string =>
    execFileSync('git', ['-c', 'safe.directory=*', ...args], { cwd: repo, env, encoding: 'utf8' });
  git('init', '-q');
  await writeFile(join(repo, 'README.md'), 'hello\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'init');
  if (user !== undefined) execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, repo]);
  const args = ['run', '--agent', options.agent ?? cli, '--repo', repo, '--json'];
  if (options.config !== undefined) {
    const file = join(sandbox.home, 'musubi.yaml');
    await writeFile(file, options.config);
    if (user !== undefined) await chown(file, user.uid, user.gid);
    args.unshift('--config', file);
  }
  const run = await musubi([...args, '--', task], repo, env, user);
  let json: RunJson;
  try {
    json = JSON.parse(run.stdout) as RunJson;
  } catch {
    throw new Error(`musubi run printed no JSON (exit ${run.code}): ${run.stdout}\n${run.stderr}`);
  }
  const files = git('ls-tree', '-r', '--name-only', json.branch).split('\n');
  const show = (path: string): string => (files.includes(path) ? git('show', `${json.branch}:${path}`) : '');
  return {
    run,
    json,
    answers: endpoint.requests().map((r) => r.answer),
    onBranch: new Map(['new.txt', 'README.md'].map((p) => [p, show(p)])),
    outside: existsSync(join(repo, 'outside.txt')),
  };
}

function expectBothChanges(o: Outcome): void {
  expect(o.json).toMatchObject({ status: 'succeeded', filesChanged: ['README.md', 'new.txt'], reason: null });
  expect(o.run.code).toBe(0);
  expect(o.onBranch.get('new.txt')).toBe('new file\n');
  expect(o.onBranch.get('README.md')).toBe('hello, edited\n');
}

const CLAUDE_ACCEPT_EDITS = 'agents:\n  strict:\n    backend: claude\n    permissionMode: acceptEdits\n';

describe.runIf(claude !== undefined).concurrent(`real claude ${PINS.claude.version} - run worktrees`, () => {
  if (!isRoot) console.warn('SKIP real claude runs as root: this process is not root');
  it.runIf(isRoot)(
    'as root without IS_SANDBOX (acceptEdits): writes a new file and edits a tracked one in its worktree',
    { timeout: TEST_MS },
    async () => {
      // claude refuses --dangerously-skip-permissions as root without IS_SANDBOX: musubi must pick acceptEdits.
      const o = await runOn('claude', TASK);
      expectBothChanges(o);
      // The tracked file was read before claude's Write replaced it (it refuses a file not read yet).
      expect(o.answers.filter((a) => a?.startsWith('tool '))).toEqual([
        'tool Write',
        'tool Read',
        'tool Write',
      ]);
    },
  );

  if (owner === undefined) console.warn('SKIP real claude runs as `nobody`: needs root and a `nobody` user');
  it.runIf(owner !== undefined)(
    'as nobody with permissionMode acceptEdits: writes a new file and edits a tracked one',
    { timeout: TEST_MS },
    async () => {
      const o = await runOn('claude', TASK, { user: owner, agent: 'strict', config: CLAUDE_ACCEPT_EDITS });
      expectBothChanges(o);
      expect(o.answers.filter((a) => a?.startsWith('tool '))).toEqual([
        'tool Write',
        'tool Read',
        'tool Write',
      ]);
    },
  );

  // The repository's top, outside the worktree (<repo>/.musubi/worktrees/<run-id>/<name>): claude in
  // acceptEdits asks for a permission nobody can grant (in bypass mode it would write the file), so this
  // also shows both runs were in acceptEdits.
  for (const [who, user, runOptions] of [
    ['as root without IS_SANDBOX', isRoot ? undefined : null, {}],
    [
      'as nobody with permissionMode acceptEdits',
      owner ?? null,
      { agent: 'strict', config: CLAUDE_ACCEPT_EDITS },
    ],
  ] as const) {
    it.runIf(user !== null)(
      `${who}: a run whose only edit is refused ends no-change naming the refusal`,
      { timeout: TEST_MS },
      async () => {
        const o = await runOn('claude', 'write ../../../outside.txt not allowed', {
          ...runOptions,
          ...(user !== null && { user }),
        });
        expect(o.json.status).toBe('no-change');
        expect(o.json.reason).toMatch(
          /^no subtask changed a file \(.*-implement-sub1: Write \/.*\/outside\.txt: Claude requested permissions to write to /,
        );
        expect(o.run.code).toBe(1);
        // The turn, then its one retry with the refusal quoted: two refused writes, nothing more.
        expect(o.answers.filter((a) => a === 'tool Write')).toHaveLength(2);
        expect(o.outside).toBe(false);
      },
    );
  }
});

describe.runIf(codex !== undefined).concurrent(`real codex ${PINS.codex.version} - run worktrees`, () => {
  if (!isRoot) console.warn('SKIP real codex runs as root: this process is not root');
  it.runIf(isRoot)(
    'as root: writes a new file and edits a tracked one in its worktree',
    { timeout: TEST_MS },
    async () => {
      expectBothChanges(await runOn('codex', TASK));
    },
  );

  if (owner === undefined) console.warn('SKIP real codex runs as `nobody`: needs root and a `nobody` user');
  it.runIf(owner !== undefined)(
    'as nobody: writes a new file and edits a tracked one in its worktree',
    { timeout: TEST_MS },
    async () => {
      expectBothChanges(await runOn('codex', TASK, { user: owner }));
    },
  );
});
