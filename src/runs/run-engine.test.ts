import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENGINE_GIT_ENV, engineReposForFile } from '../../test/fixtures/engine-repo.js';
import type { AgentRunInput, AgentRunner } from '../agents/agent-runner.js';
import { ScriptedRunner } from '../agents/scripted/scripted-runner.js';
import { createSilentLogger } from '../core/logger.js';
import { ThreePhaseTeam } from '../teams/three-phase/three-phase-team.js';
import { FakeAgentRunner } from '../../test/fakes/fake-agent-runner.js';
import { memoryBus } from '../../test/fixtures/memory-bus.js';
import { Git } from './git.js';
import { executeRun } from './run-engine.js';
import { newRunRecord, RunLedger, type RunRecord } from './run-record.js';
import { RunWorktrees } from './worktrees.js';

const repo = engineReposForFile('musubi-run-engine-');
const gitEnv = ENGINE_GIT_ENV;

function record(dir: string, head: string, budget: RunRecord['budget']): RunRecord {
  const start = {
    id: 'r1',
    goal: 'two files',
    repo: dir,
    baseCommit: head,
    team: 'three-phase',
    agent: null,
  };
  return newRunRecord({ ...start, workers: 1, test: null, budget, keepWorktrees: false }, 0);
}

const PLAN = JSON.stringify({
  phases: [
    { name: 'implement', subtasks: [{ instruction: 'make a.txt' }, { instruction: 'make b.txt' }] },
    { name: 'review', subtasks: [{ instruction: 'look' }] },
  ],
});

/** Workers that write the file their instruction names, each turn costing 100 tokens. */
function workers(calls: string[]) {
  return new FakeAgentRunner(async (input: AgentRunInput) => {
    const file = /make (\S+)/.exec(input.prompt)?.[1];
    calls.push(file ?? 'review');
    if (file !== undefined) await writeFile(join(input.cwd, file), `${file}\n`);
    return { text: 'done', usage: { inputTokens: 60, outputTokens: 40, costUsd: 0.01 } };
  });
}

function deps(dir: string, ledger: RunLedger, calls: string[], git: Git, bus: ReturnType<typeof memoryBus>) {
  const manager = new FakeAgentRunner(() => ({
    text: PLAN,
    usage: { inputTokens: 50, outputTokens: 50, costUsd: 0.01 },
  }));
  const worker = workers(calls);
  return {
    git,
    ledger,
    bus: bus.bus,
    clock: bus.clock,
    logger: createSilentLogger(),
    worktrees: new RunWorktrees(git, dir, join(dir, '.git'), 'r1'),
    managerRunner: manager,
    workerRunner: () => worker,
    resolverRunner: manager,
    team: (w: Parameters<Parameters<typeof executeRun>[0]['team']>[0]) =>
      new ThreePhaseTeam({ ...w, workerCount: 1, logger: createSilentLogger() }),
    testEnv: {},
    onProgress: () => undefined,
    signal: new AbortController().signal,
  };
}

describe('run engine', () => {
  it('stops before the turn that would pass the token budget, and a resume with a raised budget runs only what is left', async () => {
    const { dir, head } = await repo();
    const git = new Git(gitEnv);
    const bus = memoryBus();
    const ledger = new RunLedger(bus.bus.kv);
    const calls: string[] = [];
    await ledger.create(record(dir, head, { tokens: 250 }));
    const stopped = await executeRun(deps(dir, ledger, calls, git, bus), await ledger.get('r1'));
    expect(stopped.record.status).toBe('stopped');
    expect(stopped.record.reason).toMatch(/budget of 250 tokens/);
    // plan 100 + a.txt 100 + b.txt 100 = 300 ≥ 250: the review turn never started.
    expect(calls).toEqual(['a.txt', 'b.txt']);
    expect(stopped.record.phasesDone).toBe(1);

    const again = await ledger.get('r1');
    const done = await executeRun(deps(dir, ledger, calls, git, bus), {
      ...again,
      budget: { tokens: 10_000 },
    });
    expect(done.record.status).toBe('succeeded');
    expect(calls).toEqual(['a.txt', 'b.txt', 'review']);
    expect(done.record.turns).toBe(4);
    expect(done.record.usage).toEqual({
      inputTokens: 230,
      outputTokens: 170,
      costUsd: expect.closeTo(0.04, 6),
    });
    const files = await git.changedFiles(dir, head, 'musubi/r1');
    expect(files.sort()).toEqual(['a.txt', 'b.txt']);
    expect(await readFile(join(dir, 'README.md'), 'utf8')).toBe('hello\n');
    expect(await git.isClean(dir)).toBe(true);
    // Worker branches and worktrees are gone; the run branch stays.
    const branches = execFileSync('git', ['branch', '--format=%(refname:short)'], {
      cwd: dir,
      encoding: 'utf8',
    });
    expect(
      branches
        .trim()
        .split('\n')
        .filter((b) => b.startsWith('musubi/')),
    ).toEqual(['musubi/r1']);
  });

  it('runs sixteen subtasks on four workers at once without the worktrees tripping over each other', async () => {
    for (let round = 0; round < 2; round++) {
      const { dir, head } = await repo();
      const git = new Git(gitEnv);
      const bus = memoryBus();
      const ledger = new RunLedger(bus.bus.kv);
      const calls: string[] = [];
      const files = Array.from({ length: 16 }, (_, i) => `f${String(i).padStart(2, '0')}.txt`);
      const plan = JSON.stringify({
        phases: [{ name: 'implement', subtasks: files.map((f) => ({ instruction: `make ${f}` })) }],
      });
      await ledger.create({ ...record(dir, head, {}), workers: 4 });
      const d = deps(dir, ledger, calls, git, bus);
      const result = await executeRun(
        {
          ...d,
          managerRunner: new FakeAgentRunner(() => ({ text: plan })),
          team: (w) => new ThreePhaseTeam({ ...w, workerCount: 4, logger: createSilentLogger() }),
        },
        await ledger.get('r1'),
      );
      expect(result.record.status).toBe('succeeded');
      expect((await git.changedFiles(dir, head, 'musubi/r1')).sort()).toEqual(files);
      expect(
        execFileSync('git', ['worktree', 'list'], { cwd: dir, encoding: 'utf8' }).trim().split('\n'),
      ).toHaveLength(1);
    }
  });

  describe('honest outcomes (#34 item 6)', () => {
    /** The scripted agent as the workers, every prompt it gets recorded. */
    function scriptedWorkers(prompts: string[]): AgentRunner {
      const scripted = new ScriptedRunner({ env: { PATH: process.env['PATH'] } });
      return {
        backend: 'scripted',
        available: () => scripted.available(),
        run: (input) => {
          prompts.push(input.prompt);
          return scripted.run(input);
        },
      };
    }

    async function runPlan(phases: readonly { name: string; subtasks: { instruction: string }[] }[]) {
      const { dir, head } = await repo();
      const git = new Git(gitEnv);
      const bus = memoryBus();
      const ledger = new RunLedger(bus.bus.kv);
      const prompts: string[] = [];
      const progress: string[] = [];
      await ledger.create(record(dir, head, {}));
      const worker = scriptedWorkers(prompts);
      const result = await executeRun(
        {
          ...deps(dir, ledger, [], git, bus),
          managerRunner: new FakeAgentRunner(() => ({ text: JSON.stringify({ phases }) })),
          workerRunner: () => worker,
          onProgress: (p) => progress.push(p.kind),
        },
        await ledger.get('r1'),
      );
      const subtask = (instruction: string) =>
        Object.values(result.record.subtasks).find((s) => s.instruction === instruction);
      return { result, prompts, progress, subtask, files: await git.changedFiles(dir, head, 'musubi/r1') };
    }

    it('runs a turn whose only edit was refused once more with the refusal quoted, then fails the subtask naming it; the run ends no-change', async () => {
      const refused = 'try write ../outside.txt hi\nreply I could not write it';
      const review = 'reply looks fine';
      const { result, prompts, progress, subtask } = await runPlan([
        { name: 'implement', subtasks: [{ instruction: refused }] },
        { name: 'review', subtasks: [{ instruction: review }] },
      ]);
      const refusal = 'write ../outside.txt: PATH_OUTSIDE_CWD:';
      expect(prompts).toHaveLength(3);
      expect(prompts[0]).not.toContain(refusal);
      expect(prompts[1]).toContain(`> ${refusal}`);
      expect(prompts[1]).toContain(refused);
      expect(progress).toContain('refused');
      expect(subtask(refused)).toMatchObject({
        status: 'failed',
        commit: null,
        attempts: 2,
        refusal: expect.stringContaining(refusal),
        summary: expect.stringContaining(`changed nothing; an edit failed: ${refusal}`),
      });
      // A review that only replies changes nothing legitimately.
      expect(subtask(review)).toMatchObject({ status: 'succeeded', commit: null, summary: 'looks fine' });
      expect(result.record.status).toBe('no-change');
      expect(result.record.reason).toMatch(
        /^no subtask changed a file \(r1-implement-sub1: write \.\.\/outside\.txt: PATH_OUTSIDE_CWD/,
      );
      expect(result.record.retries).toBe(1);
    });

    it('leaves a turn that changed files alone, failed edit or not, and fails a run whose other subtask changed nothing for a refused edit', async () => {
      const works = 'try write ../outside.txt hi\nwrite a.txt A';
      const refused = 'try write ../other.txt hi';
      const { result, prompts, subtask, files } = await runPlan([
        { name: 'implement', subtasks: [{ instruction: works }, { instruction: refused }] },
        { name: 'review', subtasks: [{ instruction: 'reply ok' }] },
      ]);
      expect(prompts.filter((p) => p.includes(works))).toHaveLength(1);
      expect(subtask(works)).toMatchObject({ status: 'succeeded', commit: expect.any(String), attempts: 1 });
      expect(subtask(refused)).toMatchObject({ status: 'failed', attempts: 2 });
      expect(files).toEqual(['a.txt']);
      expect(result.record.status).toBe('failed');
      expect(result.record.reason).toBe('1 subtask(s) failed: r1-implement-sub2');
    });

    it('ends no-change, not succeeded, when no subtask of any phase changed anything', async () => {
      const { result, subtask } = await runPlan([
        { name: 'implement', subtasks: [{ instruction: 'reply nothing to do' }] },
        { name: 'review', subtasks: [{ instruction: 'reply ok' }] },
      ]);
      expect(subtask('reply nothing to do')).toMatchObject({ status: 'succeeded', attempts: 1 });
      expect(result.record).toMatchObject({ status: 'no-change', reason: 'no subtask changed a file' });
    });
  });
});
