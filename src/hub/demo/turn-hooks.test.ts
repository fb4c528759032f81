import { describe, expect, it } from 'vitest';
import { MusubiError } from '../../core/errors.js';
import { FakeAgentRunner } from '../../../test/fakes/fake-agent-runner.js';
import { failFirstTurns, observeTurns } from './turn-hooks.js';

const turn = { prompt: 'write a.txt x', cwd: '/tmp', timeoutMs: 1_000 };

describe('failFirstTurns', () => {
  it('fails the first n turns without running the agent, then runs it', async () => {
    const inner = new FakeAgentRunner(() => ({ text: 'done' }));
    const runner = failFirstTurns(inner, 2, 'injected');
    const results = [await runner.run(turn), await runner.run(turn), await runner.run(turn)];
    expect(results.map((r) => [r.isError, r.exitCode, r.text])).toEqual([
      [true, 1, 'injected'],
      [true, 1, 'injected'],
      [false, 0, 'done'],
    ]);
    expect(inner.inputs).toHaveLength(1);
  });
});

describe('observeTurns', () => {
  it('reports the start and end of each turn and passes the result through unchanged', async () => {
    const seen: string[] = [];
    const runner = observeTurns(new FakeAgentRunner(() => ({ text: 'ok', exitCode: 3 })), {
      onStart: (input) => seen.push(`start ${input.prompt}`),
      onEnd: (_input, result) => seen.push(`end ${result?.exitCode}`),
    });
    expect((await runner.run(turn)).exitCode).toBe(3);
    expect(seen).toEqual(['start write a.txt x', 'end 3']);
  });

  it('reports a turn that could not start with no result and rethrows', async () => {
    const ends: unknown[] = [];
    const runner = observeTurns(
      new FakeAgentRunner(() => {
        throw new MusubiError('AGENT_NOT_FOUND', 'missing');
      }),
      { onEnd: (_input, result) => ends.push(result) },
    );
    await expect(runner.run(turn)).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND' });
    expect(ends).toEqual([undefined]);
  });
});
