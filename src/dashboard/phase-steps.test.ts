import { describe, expect, it } from 'vitest';
import { phaseOrder, phaseSteps } from './phase-steps.js';
import type { Team } from '../gateways/http/api-schemas.js';

const team = (extra: Partial<Team>): Team => ({ id: 't', pattern: 'rounds', history: [], ...extra });
const states = (t: Team): string[] => phaseSteps(t).map((s) => `${s.phase}:${s.state}`);

describe('dashboard phase stepper', () => {
  it("draws the team's own phases in their order, whatever order the history visited them", () => {
    const t = team({
      pattern: 'pipeline',
      phases: ['PLAN', 'BUILD', 'TEST', 'SHIP'],
      phase: 'TEST',
      history: [
        { phase: 'TEST', at: 1 },
        { phase: 'PLAN', at: 2 },
        { phase: 'TEST', at: 3 },
      ],
    });
    expect(states(t)).toEqual(['PLAN:done', 'BUILD:done', 'TEST:active', 'SHIP:todo']);
  });

  it("uses the pattern's order when the team does not list its phases (round 2 starts over)", () => {
    const t = team({
      phase: 'IMPLEMENT',
      round: 2,
      history: [
        { phase: 'DISCUSS', at: 1 },
        { phase: 'TEST', at: 2 },
        { phase: 'IMPLEMENT', at: 3 },
      ],
    });
    expect(phaseOrder(t)).toEqual(['IMPLEMENT', 'TEST', 'DISCUSS']);
    expect(states(t)).toEqual(['IMPLEMENT:active', 'TEST:todo', 'DISCUSS:todo']);
  });

  it('finds a shipped order for an unnamed pattern, else falls back to the order first seen', () => {
    expect(
      phaseOrder(team({ pattern: 'team', phase: 'review', history: [{ phase: 'docs', at: 1 }] })),
    ).toEqual(['implement', 'docs', 'review']);
    expect(phaseOrder(team({ pattern: 'x', phase: 'b', history: [{ phase: 'a', at: 1 }] }))).toEqual([
      'a',
      'b',
    ]);
  });

  it('marks every phase done for a finished team and none reached before the first phase', () => {
    expect(states(team({ phases: ['A', 'B'], phase: 'done' }))).toEqual(['A:done', 'B:done']);
    expect(states(team({ phases: ['A', 'B'] }))).toEqual(['A:todo', 'B:todo']);
    const shutDown = team({
      pattern: 'team',
      phase: 'SHUTDOWN',
      history: ['TEST', 'DISCUSS', 'IMPLEMENT', 'SHUTDOWN'].map((phase, at) => ({ phase, at })),
    });
    expect(states(shutDown)).toEqual(['IMPLEMENT:done', 'TEST:done', 'DISCUSS:done']);
  });
});
