import type { Team, TurnSummary } from '../gateways/http/api-schemas.js';

// What the timeline draws: the time span, one lane per agent, and where phases begin. No DOM.

/** One agent's row of turns. */
export interface Lane {
  readonly agent: string;
  readonly turns: readonly TurnSummary[];
}

/** A phase boundary: from `at` on, `group` (a team or run) was in phase `label`. */
export interface PhaseMark {
  readonly at: number;
  readonly label: string;
  readonly group: string;
}

/** Two marks of the same group and phase closer than this are one (a turn and a team event). */
const SAME_MARK_MS = 5_000;

/** When a turn ends on the chart: its end, or now while it runs. */
export function turnEnd(turn: TurnSummary, nowMs: number): number {
  return turn.endedAt ?? (turn.state === 'running' ? nowMs : turn.lastEventAt);
}

/**
 * The span to draw: the last `rangeMs` up to now, or (without a range) from the first turn's start to
 * now; at least a minute, so one short turn is not a full-width bar.
 */
export function timeDomain(
  turns: readonly TurnSummary[],
  nowMs: number,
  rangeMs: number | undefined,
): readonly [number, number] {
  if (rangeMs !== undefined) return [nowMs - rangeMs, nowMs];
  const first = turns.reduce((min, t) => Math.min(min, t.startedAt), nowMs);
  return [Math.min(first, nowMs - 60_000), nowMs];
}

/**
 * One lane per agent: the agents the page knows, in their order, then any other agent with a turn,
 * by name; each with its turns that overlap `[startMs, endMs]`, oldest first.
 */
export function timelineLanes(
  turns: readonly TurnSummary[],
  agents: readonly string[],
  domain: readonly [number, number],
  nowMs: number,
): Lane[] {
  const [startMs, endMs] = domain;
  const byAgent = new Map<string, TurnSummary[]>(agents.map((a) => [a, []]));
  const others: string[] = [];
  for (const turn of turns) {
    if (turnEnd(turn, nowMs) < startMs || turn.startedAt > endMs) continue;
    let list = byAgent.get(turn.agent);
    if (list === undefined) {
      list = [];
      byAgent.set(turn.agent, list);
      others.push(turn.agent);
    }
    list.push(turn);
  }
  const order = [...agents, ...others.sort((a, b) => a.localeCompare(b))];
  return order.map((agent) => ({
    agent,
    turns: (byAgent.get(agent) ?? []).sort((a, b) => a.startedAt - b.startedAt),
  }));
}

/**
 * Where phases begin: wherever a team's or run's turns change `phase` (oldest first), and each step in
 * the teams' histories. A mark repeated by both sources within a few seconds counts once.
 */
export function phaseMarks(turns: readonly TurnSummary[], teams: readonly Team[]): PhaseMark[] {
  const marks: PhaseMark[] = [];
  const current = new Map<string, string>();
  for (const turn of [...turns].sort((a, b) => a.startedAt - b.startedAt)) {
    const group = turn.team ?? turn.run;
    if (group === undefined || turn.phase === undefined || current.get(group) === turn.phase) continue;
    current.set(group, turn.phase);
    marks.push({ at: turn.startedAt, label: turn.phase, group });
  }
  for (const team of teams) {
    for (const step of team.history) {
      const label = step.round === undefined ? step.phase : `R${step.round} ${step.phase}`;
      marks.push({ at: step.at, label, group: team.id });
    }
  }
  marks.sort((a, b) => a.at - b.at);
  const kept: PhaseMark[] = [];
  for (const mark of marks) {
    const isRepeat = kept.some(
      (k) => k.group === mark.group && samePhase(k.label, mark.label) && mark.at - k.at < SAME_MARK_MS,
    );
    if (!isRepeat) kept.push(mark);
  }
  return kept;
}

/** "R2 TEST" and "TEST" name the same phase. */
function samePhase(a: string, b: string): boolean {
  const bare = (label: string): string => label.replace(/^R\d+ /, '');
  return bare(a) === bare(b);
}
