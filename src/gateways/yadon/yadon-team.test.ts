import { describe, expect, it } from 'vitest';
import { MusubiError } from '../../core/errors.js';
import { FakeAgentRunner } from '../../../test/fakes/fake-agent-runner.js';
import type { Bubble } from './bubble-text.js';
import { runWorkerTurn, workerPrompt } from './yadon-team.js';

const task = {
  id: 't-implement-sub1',
  instruction: '/home/u/p/a.py を修正\nwrite a.txt x',
  projectDir: '/proj',
};

async function turn(runner: FakeAgentRunner, timeoutMs?: number) {
  const bubbles: Bubble[] = [];
  const outcome = await runWorkerTurn(
    {
      runner,
      workerNumber: 2,
      instructionsFile: '/i/yadon.md',
      onBubble: (b) => bubbles.push(b),
      ...(timeoutMs !== undefined && { timeoutMs }),
    },
    task,
    new AbortController().signal,
  );
  return { outcome, bubbles };
}

describe('worker turn', () => {
  it('names the worker, points to yadon.md, carries the instruction verbatim and runs in project_dir', async () => {
    const runner = new FakeAgentRunner(() => ({ text: 'done' }));
    const { outcome, bubbles } = await turn(runner);
    const input = runner.inputs[0];
    expect(input?.prompt).toBe(workerPrompt(2, '/i/yadon.md', task.instruction));
    expect(input?.prompt).toContain('ヤドン2');
    expect(input?.prompt).toContain('/i/yadon.md');
    expect(input?.prompt).toContain(`タスク:\n${task.instruction}`);
    expect(input?.cwd).toBe('/proj');
    expect(input?.timeoutMs).toBe(600_000);
    expect(outcome).toEqual({
      kind: 'done',
      doc: {
        type: 'result',
        id: task.id,
        from: 'yadon-2',
        status: 'success',
        payload: { output: 'done', summary: 'done' },
      },
    });
    expect(bubbles).toEqual([
      { pet: '2', text: 'やるやぁん「a.py を修正\nwrite a.txt x」', bubbleType: 'claude', durationMs: 5000 },
      { pet: '2', text: 'できたやぁん「done」', bubbleType: 'claude', durationMs: 5000 },
    ]);
  });

  it('reports status error for a non-zero exit, with stderr after the answer', async () => {
    const { outcome, bubbles } = await turn(
      new FakeAgentRunner(() => ({ text: 'half', exitCode: 3, isError: true, stderrTail: 'boom\n' })),
    );
    expect(outcome).toMatchObject({
      doc: { status: 'error', payload: { output: 'half\nboom', summary: 'half\nboom' } },
    });
    expect(bubbles[1]?.text).toBe('失敗やぁん「half\nboom」');
  });

  it('summarises blank output as (出力なし)', async () => {
    const { outcome } = await turn(new FakeAgentRunner(() => ({ text: '  \n' })));
    expect(outcome).toMatchObject({ doc: { payload: { summary: '(出力なし)' } } });
  });

  it('maps a timeout to タイムアウト (10分) and a spawn failure to 実行エラー:', async () => {
    const timedOut = await turn(
      new FakeAgentRunner(() => ({ timedOut: true, isError: true, exitCode: null, signal: 'SIGTERM' })),
    );
    expect(timedOut.outcome).toMatchObject({
      doc: { status: 'error', payload: { output: 'タイムアウト (10分)' } },
    });
    const missing = await turn(
      new FakeAgentRunner(() => {
        throw new MusubiError('AGENT_NOT_FOUND', "agent CLI 'claude' not found on PATH");
      }),
    );
    expect(missing.outcome).toMatchObject({
      doc: {
        status: 'error',
        payload: { output: "実行エラー: AGENT_NOT_FOUND: agent CLI 'claude' not found on PATH" },
      },
    });
  });

  it('passes a crash (killed by a signal from outside) on for a retry, without a result', async () => {
    const { outcome, bubbles } = await turn(
      new FakeAgentRunner(() => ({ exitCode: null, signal: 'SIGKILL', isError: true })),
    );
    expect(outcome).toEqual({ kind: 'crashed', reason: 'agent process killed by SIGKILL' });
    expect(bubbles).toHaveLength(1);
  });
});
