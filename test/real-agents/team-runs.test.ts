import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_WIRINGS } from '../../src/agents/model-endpoint/cli-wirings.js';
import { createModelEndpoint } from '../../src/agents/model-endpoint/create-model-endpoint.js';
import { expectNoLiveChildren } from '../fixtures/process-children.js';
import { runCli } from '../fixtures/run-cli.js';
import { isolatedEnv, makeSandbox, realCliGuard, writeWiringFiles } from './real-cli.js';

const TEAM_TIMEOUT_MS = 300_000;
const claude = realCliGuard('claude');

/** The environment of a real claude wired to the endpoint at `url`, its config in `home`. */
async function claudeEnv(home: string, url: string): Promise<Record<string, string>> {
  const wiring = CLI_WIRINGS.claude({ url, configDir: join(home, '.claude') });
  await writeWiringFiles(wiring.files);
  return {
    ...isolatedEnv(home),
    ...wiring.env,
    // Inside this sandboxed test claude may bypass permissions as root (docs/agents.md, "Containers and root").
    IS_SANDBOX: '1',
    PATH: `${dirname(claude ?? '')}${delimiter}${dirname(process.execPath)}${delimiter}/usr/bin:/bin`,
  };
}

// A whole team on the real claude CLI against musubi's model endpoint: yadoran decomposes (JSON from the
// endpoint), yadon-1/2 implement, document and review through claude's own Write tool, the tester runs the
// sample's tests over agent_sync through claude's Bash tool, the scribe appends the changelog.
describe.runIf(claude !== undefined)('real claude - team runs', () => {
  it(
    'finishes the demo sample with a yadon three-phase job and an agent_sync round on real claude turns',
    async () => {
      await using sandbox = await makeSandbox();
      await using endpoint = createModelEndpoint();
      const env = await claudeEnv(sandbox.home, await endpoint.start());
      const run = await runCli(['demo', '--state', 'state', '--agent', 'claude'], {
        cwd: sandbox.cwd,
        env,
        timeoutMs: TEAM_TIMEOUT_MS,
      });
      expect(run.stderr).toBe('');
      expect(run.stdout).toMatch(/agents +claude \(real CLI/);
      expect(run.stdout).toMatch(/result +✔ goal met: the sample's tests pass \(8 of 8/);
      expect(run.code).toBe(0);
      const project = join(sandbox.cwd, 'state', 'project');
      for (const file of ['src/slugify.js', 'src/title-case.js', 'src/truncate.js']) {
        expect(existsSync(join(project, file))).toBe(true);
      }
      expect(await readFile(join(project, 'CHANGELOG.md'), 'utf8')).toContain('## Unreleased');
      const tests = spawnSync(process.execPath, ['--test'], {
        cwd: project,
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(tests.status).toBe(0);
      // The files were written by claude's own tools, which the endpoint asked it to call.
      const tools = endpoint.requests().map((r) => r.answer);
      expect(tools).toContain('tool Write');
      expect(tools).toContain('tool Bash');
      await expectNoLiveChildren();
    },
    TEAM_TIMEOUT_MS + 30_000,
  );

  // `musubi run` on real claude turns: the manager's decomposition is the endpoint's JSON, each worker
  // turn writes its file in its own worktree through claude's own Write tool, musubi commits and merges
  // both onto musubi/<run-id> and the user's working tree (with an uncommitted edit) stays as it was.
  it(
    'runs musubi run with two claude workers that write their files through claude’s Write tool',
    async () => {
      await using sandbox = await makeSandbox();
      await using endpoint = createModelEndpoint();
      const identity = {
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@t',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@t',
      };
      const env = { ...(await claudeEnv(sandbox.home, await endpoint.start())), ...identity };
      const repo = sandbox.cwd;
      const git = (...args: string[]): string =>
        execFileSync('git', args, { cwd: repo, env, encoding: 'utf8' });
      git('init', '-q');
      await writeFile(join(repo, 'README.md'), 'hello\n');
      git('add', '-A');
      git('commit', '-q', '-m', 'init');
      await writeFile(join(repo, 'README.md'), 'hello, edited but not committed\n');
      await writeFile(join(repo, 'scratch.txt'), 'untracked\n');
      const base = git('rev-parse', 'HEAD').trim();
      const statusBefore = git('status', '--porcelain');

      const run = await runCli(
        ['run', '--agent', 'claude', '--repo', repo, '--json', '--', '- write a.txt A\n- write b.txt B'],
        {
          cwd: repo,
          env,
          timeoutMs: TEAM_TIMEOUT_MS,
        },
      );
      expect(run.stderr).toContain('phase 1/3: implement');
      expect(run.code).toBe(0);
      const out = JSON.parse(run.stdout) as {
        runId: string;
        status: string;
        branch: string;
        baseCommit: string;
        filesChanged: string[];
        conflicts: number;
        turns: number;
        reason: string | null;
      };
      expect(out).toMatchObject({
        status: 'succeeded',
        branch: `musubi/${out.runId}`,
        baseCommit: base,
        filesChanged: ['a.txt', 'b.txt'],
        conflicts: 0,
        turns: 5,
        reason: null,
      });
      expect(git('show', `${out.branch}:a.txt`)).toBe('A\n');
      expect(git('show', `${out.branch}:b.txt`)).toBe('B\n');
      // The user's branch, index and files are as they were; the worktrees are gone.
      expect(git('rev-parse', 'HEAD').trim()).toBe(base);
      expect(git('status', '--porcelain')).toBe(statusBefore);
      expect(await readFile(join(repo, 'README.md'), 'utf8')).toBe('hello, edited but not committed\n');
      expect(existsSync(join(repo, 'a.txt'))).toBe(false);
      expect(git('worktree', 'list').trim().split('\n')).toHaveLength(1);
      // The files were written by claude's own Write tool, which the endpoint asked it to call.
      const answers = endpoint.requests().map((r) => r.answer);
      expect(answers.filter((a) => a === 'tool Write')).toHaveLength(2);
      await expectNoLiveChildren();
    },
    TEAM_TIMEOUT_MS + 30_000,
  );
});
