import { describe, expect, it } from 'vitest';
import { phaseMarks, timeDomain, timelineLanes, turnEnd } from './timeline-model.js';
import type { TurnSummary } from '../gateways/http/api-schemas.js';

const turn = (id: string, extra: Partial<TurnSummary> = {}): TurnSummary => ({
  id,
  agent: 'alice',
  backend: 'claude',
  state: 'succeeded',
  startedAt: 0,
  endedAt: 10,
  lastEventAt: 10,
  heartbeatAt: 10,
  prompt: '',
  promptChars: 0,
  usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
  toolCalls: 0,
  entries: 0,
  ...extra,
});

describe('dashboard timeline model', () => {
  it('draws running turns up to now and spans at least a minute', () => {
    const running = turn('r', { state: 'running', startedAt: 100_000, lastEventAt: 110_000 });
    delete (running as { endedAt?: number }).endedAt;
    expect(turnEnd(running, 120_000)).toBe(120_000);
    expect(timeDomain([running], 120_000, undefined)).toEqual([60_000, 120_000]);
    expect(timeDomain([turn('a', { startedAt: 1_000 })], 120_000, undefined)).toEqual([1_000, 120_000]);
    expect(timeDomain([], 120_000, 30_000)).toEqual([90_000, 120_000]);
  });

  it('has a lane per known agent in order, then other agents by name, with the turns in the span', () => {
    const lanes = timelineLanes(
      [
        turn('1', { agent: 'zed', startedAt: 50, endedAt: 60 }),
        turn('2', { agent: 'bob', startedAt: 40, endedAt: 45 }),
        turn('3', { agent: 'bob', startedAt: 0, endedAt: 5 }),
        turn('4', { agent: 'amy', startedAt: 50, endedAt: 55 }),
      ],
      ['bob', 'carol'],
      [20, 100],
      100,
    );
    expect(lanes.map((l) => [l.agent, l.turns.map((t) => t.id)])).toEqual([
      ['bob', ['2']],
      ['carol', []],
      ['amy', ['4']],
      ['zed', ['1']],
    ]);
  });

  it("marks where a team's or run's turns change phase, and team steps, once each", () => {
    const marks = phaseMarks(
      [
        turn('a', { team: 'peers', phase: 'IMPLEMENT', startedAt: 0 }),
        turn('b', { team: 'peers', phase: 'IMPLEMENT', startedAt: 10_000 }),
        turn('c', { team: 'peers', phase: 'TEST', startedAt: 20_000 }),
        turn('d', { run: 'r1', phase: 'implement', startedAt: 30_000 }),
        turn('e', { phase: 'lonely', startedAt: 40_000 }),
      ],
      [
        {
          id: 'peers',
          pattern: 'rounds',
          history: [
            { phase: 'TEST', round: 1, at: 19_000 },
            { phase: 'DISCUSS', round: 1, at: 50_000 },
          ],
        },
      ],
    );
    expect(marks).toEqual([
      { at: 0, label: 'IMPLEMENT', group: 'peers' },
      { at: 19_000, label: 'R1 TEST', group: 'peers' },
      { at: 30_000, label: 'implement', group: 'r1' },
      { at: 50_000, label: 'R1 DISCUSS', group: 'peers' },
    ]);
  });
});
