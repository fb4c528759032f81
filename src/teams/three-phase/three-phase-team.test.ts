import { describe, expect, it } from 'vitest';
import { runnerTurn, type AgentTurn } from '../../agents/agent-turn.js';
import { createSilentLogger } from '../../core/logger.js';
import { FakeAgentRunner } from '../../../test/fakes/fake-agent-runner.js';
import type { SubtaskDispatcher } from './phase-dispatch.js';
import { ThreePhaseTeam } from './three-phase-team.js';

const job = { id: 'j', instruction: 'add logging', projectDir: '/proj' };

/** A team whose workers answer `<worker>:<instruction>` and whose observer records every call. */
function team(manager: AgentTurn, workerCount = 2) {
  const seen: string[] = [];
  const dispatcher: SubtaskDispatcher<string> = {
    invalidSubtask: (worker) => `${worker}:invalid`,
    dispatch: ({ worker, subtask }) =>
      Promise.resolve({ entry: `${worker}:${subtask.instruction}`, isConnectionFailure: false }),
  };
  const t = new ThreePhaseTeam({
    manager,
    workerCount,
    dispatcher,
    logger: createSilentLogger(),
    observer: {
      jobStarted: (j) => seen.push(`job ${j.id}`),
      planned: (_j, plan) => seen.push(`plan ${plan.phases.map((p) => p.name).join(',')}`),
      phaseStarted: (_j, p) => seen.push(`start ${p.name} ${p.index + 1}/${p.phaseCount} ${p.workers}`),
      phaseFinished: (_j, p) => seen.push(`done ${p.name} ${p.entries.join(' ')}`),
    },
  });
  return { t, seen };
}

describe('three-phase team (wire-free)', () => {
  it('asks with the plain prompt, runs the phases in order and hands back every entry', async () => {
    const plan = {
      phases: [
        { name: 'implement', subtasks: [{ instruction: 'a' }, { instruction: 'b' }, 'x'] },
        { name: 'review', subtasks: [{ instruction: 'r' }] },
      ],
    };
    const runner = new FakeAgentRunner(() => ({ text: JSON.stringify(plan) }));
    const { t, seen } = team(runnerTurn(runner));
    const outcome = await t.runJob(job, new AbortController().signal);
    const prompt = runner.inputs[0]?.prompt ?? '';
    expect(prompt).toContain('<task>\nadd logging\n</task>');
    expect(prompt).toContain('At most 2 subtasks per phase');
    expect(prompt).not.toMatch(/[ぁ-んァ-ン]/u);
    expect(outcome).toEqual({
      kind: 'done',
      plan,
      phases: [
        { name: 'implement', entries: ['1:a', '2:b', '1:invalid'] },
        { name: 'review', entries: ['1:r'] },
      ],
    });
    expect(seen).toEqual([
      'job j',
      'plan implement,review',
      'start implement 1/2 2',
      'done implement 1:a 2:b 1:invalid',
      'start review 2/2 1',
      'done review 1:r',
    ]);
  });

  it('takes the caller’s prompt wording and falls back to one subtask when the turn fails', async () => {
    const prompts: string[] = [];
    const { t } = team((request) => {
      prompts.push(request.prompt);
      return Promise.resolve({ kind: 'finished', output: 'timed out', exitCode: 1, hasFailed: true });
    });
    const worded = new ThreePhaseTeam({
      manager: (request) => (prompts.push(request.prompt), Promise.resolve({ kind: 'crashed', reason: 'x' })),
      workerCount: 1,
      dispatcher: {
        invalidSubtask: () => '',
        dispatch: () => Promise.resolve({ entry: 'ok', isConnectionFailure: false }),
      },
      planPrompt: (r) => `PLAN ${r.instruction} for ${r.workerCount}`,
      logger: createSilentLogger(),
    });
    const fallback = await t.runJob(job, new AbortController().signal);
    expect(fallback).toMatchObject({
      kind: 'done',
      plan: { fallbackReason: 'timed out' },
      phases: [{ name: 'implement', entries: ['1:add logging'] }],
    });
    expect(await worded.runJob(job, new AbortController().signal)).toMatchObject({ kind: 'done' });
    expect(prompts[1]).toBe('PLAN add logging for 1');
  });

  it('resolves canceled when the signal aborts during a phase', async () => {
    const ac = new AbortController();
    const t = new ThreePhaseTeam<string>({
      manager: () =>
        Promise.resolve({
          kind: 'finished',
          output: '{"phases":[{"name":"implement","subtasks":[{"instruction":"a"},{"instruction":"b"}]}]}',
          exitCode: 0,
          hasFailed: false,
        }),
      workerCount: 1,
      dispatcher: {
        invalidSubtask: () => '',
        dispatch: () => (ac.abort(), Promise.resolve({ entry: 'a', isConnectionFailure: false })),
      },
      logger: createSilentLogger(),
    });
    expect(await t.runJob(job, ac.signal)).toEqual({ kind: 'canceled' });
  });
});
