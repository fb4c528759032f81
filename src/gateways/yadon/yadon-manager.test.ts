import { describe, expect, it } from 'vitest';
import { createSilentLogger } from '../../core/logger.js';
import { FakeAgentRunner } from '../../../test/fakes/fake-agent-runner.js';
import { threePhaseTeams } from '../../hub/team-builders.js';
import type { SubtaskDispatcher } from '../../teams/three-phase/phase-dispatch.js';
import type { Bubble } from './bubble-text.js';
import type { CollectedEntry } from './result-doc.js';
import { invalidSubtaskEntry } from './socket-subtask-dispatcher.js';
import { decompositionPrompt, yadonManagerExecute } from './yadon-team.js';

const job = { id: 'job-1', instruction: 'ログ機能を追加', projectDir: '/proj' };

function team(runner: FakeAgentRunner, workerCount = 2) {
  const bubbles: Bubble[] = [];
  const sent: string[] = [];
  const dispatcher: SubtaskDispatcher<CollectedEntry> = {
    invalidSubtask: invalidSubtaskEntry,
    dispatch: ({ worker, subtask }) => {
      sent.push(`${worker}:${subtask.id}:${subtask.instruction}`);
      return Promise.resolve({
        entry: {
          type: 'result',
          id: subtask.id,
          from: `yadon-${worker}`,
          status: 'success',
          payload: { output: 'o', summary: 's' },
        },
        isConnectionFailure: false,
      });
    },
  };
  const execute = yadonManagerExecute({
    team: threePhaseTeams(runner, createSilentLogger()),
    workerCount,
    dispatcher,
    instructionsFile: '/i/yadoran.md',
    onBubble: (b) => bubbles.push(b),
  });
  return { run: () => execute(job, new AbortController().signal), bubbles, sent };
}

describe('yadon manager (three-phase team in yadon wording)', () => {
  it('states the rules of spec 4.3.1 in the decomposition prompt with N substituted', () => {
    const prompt = decompositionPrompt({
      instruction: 'do it',
      projectDir: '/p',
      workerCount: 3,
      instructionsFile: '/i/yadoran.md',
    });
    for (const text of [
      'ヤドラン',
      '/i/yadoran.md',
      '<task>\ndo it\n</task>',
      'Working directory: /p',
      '```json',
      '"phases"',
      'Every answer contains the three phases implement, docs, review.',
      'At most 3 subtasks per phase; the subtasks of a phase run in parallel.',
      'Phases run one after another',
      "Every subtask carries all the information it needs; workers do not see each other's subtasks.",
      'The docs phase updates the project documents related to the change (README, agent instruction files).',
      'The review phase checks the implementation and the documents for quality and consistency and reports problems.',
    ]) {
      expect(prompt).toContain(text);
    }
  });

  it('runs the phases in order with the bubbles of spec 3.8', async () => {
    const plan = {
      phases: [
        { name: 'implement', subtasks: [{ instruction: 'a' }, { instruction: 'b' }, { instruction: 'c' }] },
        { name: 'docs', subtasks: [{ instruction: 'd' }] },
        { name: 'review', subtasks: [{ instruction: 'r' }] },
      ],
    };
    const runner = new FakeAgentRunner(() => ({ text: JSON.stringify(plan), exitCode: 7 }));
    const t = team(runner);
    const outcome = await t.run();
    expect(runner.inputs[0]?.timeoutMs).toBe(120_000);
    expect(runner.inputs[0]?.cwd).toBe('/proj');
    expect(t.sent).toEqual([
      '1:job-1-implement-sub1:a',
      '2:job-1-implement-sub2:b',
      '1:job-1-implement-sub3:c',
      '1:job-1-docs-sub1:d',
      '1:job-1-review-sub1:r',
    ]);
    expect(outcome).toMatchObject({ kind: 'done', doc: { id: 'job-1', from: 'yadoran', status: 'success' } });
    expect(t.bubbles).toEqual([
      {
        pet: 'yadoran',
        text: 'ヤドキングが言ってる「ログ機能を追加」',
        bubbleType: 'claude',
        durationMs: 5000,
      },
      { pet: 'yadoran', text: '実装するヤドン2体に依頼', bubbleType: 'claude', durationMs: 3000 },
      { pet: 'yadoran', text: 'ドキュメント更新するヤドン1体に依頼', bubbleType: 'claude', durationMs: 3000 },
      { pet: 'yadoran', text: 'レビューするヤドン1体に依頼', bubbleType: 'claude', durationMs: 3000 },
      {
        pet: 'yadoran',
        text: 'みんなできた「[yadon-1] success: s\n[yadon-2] success: s\n[yadon-1] success:...」',
        bubbleType: 'claude',
        durationMs: 5000,
      },
    ]);
  });

  it('falls back to one subtask on worker 1 when the decomposition turn fails or times out', async () => {
    for (const runner of [
      new FakeAgentRunner(() => {
        throw new Error('spawn failed');
      }),
      new FakeAgentRunner(() => ({ timedOut: true, isError: true, exitCode: null })),
    ]) {
      const t = team(runner);
      await t.run();
      expect(t.sent).toEqual(['1:job-1-implement-sub1:ログ機能を追加']);
    }
  });

  it('reports success with empty summary and output when the plan has no subtasks', async () => {
    const t = team(new FakeAgentRunner(() => ({ text: '{"phases": [{"name": "implement"}]}' })));
    expect(await t.run()).toMatchObject({
      kind: 'done',
      doc: { status: 'success', payload: { summary: '', output: '' } },
    });
    expect(t.bubbles[1]?.text).toBe('実装するヤドン0体に依頼');
  });
});
