import type { Team } from '../gateways/http/api-schemas.js';

/** Where a team stands on one phase: passed this round, the current one, or not reached yet. */
export type StepState = 'done' | 'active' | 'todo';

/** One phase of a team's stepper. */
export interface PhaseStep {
  readonly phase: string;
  readonly state: StepState;
}

/** The phase orders of the patterns musubi ships, for teams whose source does not list them. */
const PATTERN_PHASES: Readonly<Record<string, readonly string[]>> = {
  rounds: ['IMPLEMENT', 'TEST', 'DISCUSS'],
  'three-phase': ['implement', 'docs', 'review'],
};

/** Phase names that mean the team got through its phases (agent_sync rounds end in SHUTDOWN). */
const FINISHED = /^(done|finished|complete|completed|succeeded|shutdown|closed|ended)$/i;

/**
 * The phases to draw, in the pattern's order: the team's own list; else its pattern's; else a shipped
 * order that covers every phase seen; only as a last resort the order the history first visited them
 * (history repeats phases every round, so it is no order at all for a pattern with rounds).
 */
export function phaseOrder(team: Team): readonly string[] {
  if (team.phases !== undefined && team.phases.length > 0) return team.phases;
  const seen: string[] = [];
  for (const step of team.history) if (!seen.includes(step.phase)) seen.push(step.phase);
  if (team.phase !== undefined && !seen.includes(team.phase)) seen.push(team.phase);
  const known = seen.filter((p) => !FINISHED.test(p));
  const ofPattern = PATTERN_PHASES[team.pattern];
  if (ofPattern !== undefined && known.every((p) => ofPattern.includes(p))) return ofPattern;
  const covering = Object.values(PATTERN_PHASES).find((order) => known.every((p) => order.includes(p)));
  return covering ?? known;
}

/**
 * Each phase with its state for the current round: phases before the current one are done, the
 * current one is active, later ones are not reached. A finished team (phase `done` and the like) has
 * every phase done; a team with no phase yet has none reached.
 */
export function phaseSteps(team: Team): PhaseStep[] {
  const order = phaseOrder(team);
  const phase = team.phase;
  if (phase !== undefined && FINISHED.test(phase) && !order.includes(phase))
    return order.map((p) => ({ phase: p, state: 'done' }));
  const current = phase === undefined ? -1 : order.indexOf(phase);
  return order.map((p, i) => ({
    phase: p,
    state: current < 0 || i > current ? 'todo' : i === current ? 'active' : 'done',
  }));
}
