import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENGINE_GIT_ENV, engineReposForFile } from '../../test/fixtures/engine-repo.js';
import type { AgentRunInput } from '../agents/agent-runner.js';
import { createSystemClock } from '../core/clock.js';
import type { StoredEvent } from '../core/events.js';
import { createSilentLogger } from '../core/logger.js';
import { memoryBusOn } from '../../test/fixtures/memory-bus.js';
import { ThreePhaseTeam } from '../teams/three-phase/three-phase-team.js';
import { FakeAgentRunner } from '../../test/fakes/fake-agent-runner.js';
import { Git } from './git.js';
import { executeRun, type RunProgress } from './run-engine.js';
import { newRunRecord, RunLedger } from './run-record.js';
import { RunWorktrees } from './worktrees.js';
import type { AskHuman } from './turn-escalations.js';

// Turns as deliveries (#34 item 1): the engine over a real bus (memory store, system clock, retries of
// a few ms), agents faked. The CLI's view of the same path is in test/integration/run-deliveries.test.ts.

const repo = engineReposForFile('musubi-turns-');
const gitEnv = ENGINE_GIT_ENV;

const PLAN = JSON.stringify({
  phases: [{ name: 'implement', subtasks: [{ instruction: 'make a.txt' }, { instruction: 'make b.txt' }] }],
});

/**
 * A worker whose turns on b.txt end killed by a signal `crashes` times (as an agent process killed from
 * outside), then write the file; a.txt is written at once.
 */
function flakyWorker(crashes: number) {
  let left = crashes;
  return new FakeAgentRunner(async (input: AgentRunInput) => {
    const file = /make (\S+)/.exec(input.prompt)?.[1] ?? 'none';
    if (file === 'b.txt' && left > 0) {
      left -= 1;
      return { exitCode: null, signal: 'SIGKILL', text: '' };
    }
    await writeFile(join(input.cwd, file), `${file}\n`);
    return { text: `wrote ${file}` };
  });
}

async function setup(o: { crashes: number; askHuman?: AskHuman }) {
  const { dir, head } = await repo();
  const clock = createSystemClock();
  const { bus } = memoryBusOn(clock, { leaseMs: 5_000, retry: { baseMs: 5, capMs: 20, maxAttempts: 3 } });
  const git = new Git(gitEnv);
  const ledger = new RunLedger(bus.kv);
  const record = newRunRecord(
    {
      id: 'r1',
      goal: 'two files',
      repo: dir,
      baseCommit: head,
      team: 'three-phase',
      agent: null,
      workers: 1,
      test: null,
      budget: {},
      keepWorktrees: false,
    },
    clock.now(),
  );
  await ledger.create(record);
  const progress: RunProgress[] = [];
  const manager = new FakeAgentRunner(() => ({ text: PLAN }));
  const worker = flakyWorker(o.crashes);
  /** Runs (or, the second time, resumes) the run; `over` replaces the stop signal or the prompt. */
  const run = async (over: { signal?: AbortSignal; askHuman?: AskHuman } = {}) =>
    executeRun(
      {
        git,
        ledger,
        bus,
        clock,
        logger: createSilentLogger(),
        worktrees: new RunWorktrees(git, dir, join(dir, '.git'), 'r1'),
        managerRunner: manager,
        workerRunner: () => worker,
        resolverRunner: manager,
        team: (w) => new ThreePhaseTeam({ ...w, workerCount: 1, logger: createSilentLogger() }),
        testEnv: {},
        onProgress: (p) => progress.push(p),
        signal: over.signal ?? new AbortController().signal,
        ...((over.askHuman ?? o.askHuman) !== undefined && { askHuman: over.askHuman ?? o.askHuman }),
      },
      await ledger.get(record.id),
    );
  /** The bus's events about one message, oldest first. */
  const historyOf = async (messageId: string): Promise<StoredEvent[]> =>
    (await bus.readEvents({ limit: 10_000 })).filter((e) => 'messageId' in e && e.messageId === messageId);
  return { bus, run, progress, worker, historyOf };
}

const B = 'r1-implement-sub2';

describe('run turns on the bus', () => {
  it('delivers a crashed turn again through the retry policy; the message history holds every attempt', async () => {
    const { run, progress, historyOf, bus } = await setup({ crashes: 2 });
    const { record } = await run();
    expect(record.status).toBe('succeeded');
    expect(record.subtasks[B]).toMatchObject({ status: 'succeeded', attempts: 3 });
    expect(record.retries).toBe(2);
    const history = await historyOf(B);
    expect(history.map((e) => e.type)).toEqual([
      'message.sent',
      'message.claimed',
      'message.nacked',
      'message.claimed',
      'message.nacked',
      'message.claimed',
      'message.acked',
    ]);
    expect(history[0]).toMatchObject({ mailbox: 'worker-1.r1', from: 'run.r1' });
    const retrying = progress.filter((p) => p.kind === 'retrying');
    expect(retrying).toHaveLength(2);
    expect(retrying[0]).toMatchObject({ turn: B, attempt: 2, reason: 'agent process killed by SIGKILL' });
    // Every turn was acked: nothing is left in the members' mailboxes.
    for (const m of await bus.listMailboxes()) expect(m.total).toBe(0);
  });

  it('escalates a turn that used up its attempts and obeys retry: done on attempt 4', async () => {
    const asked: string[] = [];
    const { run, progress, historyOf } = await setup({
      crashes: 3,
      askHuman: async (e) => {
        asked.push(`${e.title} ${e.attempts} ${e.reason}`);
        return { choice: 'retry', by: 'the test' };
      },
    });
    const { record } = await run();
    expect(asked).toEqual([`${B} 3 agent process killed by SIGKILL`]);
    expect(record.status).toBe('succeeded');
    expect(record.subtasks[B]).toMatchObject({ status: 'succeeded', attempts: 4 });
    const types = (await historyOf(B)).map((e) => e.type);
    expect(types.filter((t) => t === 'message.claimed')).toHaveLength(4);
    expect(types).toContain('message.dead_lettered');
    expect(types).toContain('escalation');
    expect(types).toContain('message.requeued');
    expect(types.at(-1)).toBe('message.acked');
    expect(progress).toContainEqual(
      expect.objectContaining({ kind: 'answered', turn: B, choice: 'retry', by: 'the test' }),
    );
  });

  it('skips a given-up turn when told to, and the run ends with that subtask failed', async () => {
    const { run, bus } = await setup({
      crashes: 99,
      askHuman: async () => ({ choice: 'skip', by: 'the test' }),
    });
    const { record } = await run();
    expect(record.subtasks[B]).toMatchObject({ status: 'failed' });
    expect(record.subtasks[B]?.summary).toMatch(
      /^skipped by the test after 3 attempt\(s\): agent process killed by SIGKILL/,
    );
    expect(record.status).toBe('failed');
    expect(await bus.listDeadLetters()).toEqual([]);
  });

  it('takes the answer from the run mailbox (the inbox reply, musubi runs answer): abort stops the run', async () => {
    const { run, bus, progress } = await setup({ crashes: 99 });
    const running = run();
    const deadline = Date.now() + 10_000;
    while (!progress.some((p) => p.kind === 'escalated')) {
      if (Date.now() > deadline) throw new Error('never escalated');
      await new Promise((r) => setTimeout(r, 5));
    }
    // An answer that names no choice is answered with what to write.
    await bus.send({ to: 'run.r1', from: 'human', type: 'say', body: 'hmm?', thread: B });
    await bus.send({ to: 'run.r1', from: 'human', type: 'answer', body: 'Abort please', thread: B });
    const { record } = await running;
    expect(record.status).toBe('stopped');
    expect(record.reason).toMatch(
      new RegExp(
        `^aborted by human: ${B} gave up after 3 attempt\\(s\\) \\(agent process killed by SIGKILL\\)`,
      ),
    );
    const [told] = await bus.peek('human');
    expect(told?.envelope.body).toMatch(/answer retry, skip, abort \(got 'hmm\?'\)/);
    expect(told?.envelope).toMatchObject({ from: 'run.r1', thread: B });
  });

  it('treats a dead letter moved back by hand (the page, musubi bus) as the answer retry', async () => {
    const { run, bus, progress } = await setup({ crashes: 3 });
    const running = run();
    const deadline = Date.now() + 10_000;
    while (!progress.some((p) => p.kind === 'escalated')) {
      if (Date.now() > deadline) throw new Error('never escalated');
      await new Promise((r) => setTimeout(r, 5));
    }
    await bus.retryDeadLetter(B);
    const { record } = await running;
    expect(record.status).toBe('succeeded');
    expect(progress).toContainEqual(
      expect.objectContaining({ kind: 'answered', choice: 'retry', by: 'the dead letters' }),
    );
  });

  it('asks again on resume about a turn that was dead-lettered when its process stopped, and obeys', async () => {
    const { run, bus, progress } = await setup({ crashes: 3 });
    const stop = new AbortController();
    // Nobody answers; the run is stopped while it waits (Ctrl-C, or a kill: the dead letter stays).
    const first = run({ signal: stop.signal, askHuman: () => new Promise(() => undefined) });
    const deadline = Date.now() + 10_000;
    while (!progress.some((p) => p.kind === 'escalated')) {
      if (Date.now() > deadline) throw new Error('never escalated');
      await new Promise((r) => setTimeout(r, 5));
    }
    stop.abort();
    expect((await first).record.status).toBe('stopped');
    expect((await bus.listDeadLetters()).map((d) => d.envelope.id)).toEqual([B]);
    progress.length = 0;
    const { record } = await run({ askHuman: async () => ({ choice: 'retry', by: 'the test' }) });
    expect(progress).toContainEqual(
      expect.objectContaining({
        kind: 'escalated',
        turn: B,
        attempts: 3,
        reason: 'agent process killed by SIGKILL',
      }),
    );
    expect(record.status).toBe('succeeded');
    expect(record.subtasks[B]?.status).toBe('succeeded');
    expect(await bus.listDeadLetters()).toEqual([]);
  });
});
