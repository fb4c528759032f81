import { el, replaceChildren } from './dom.js';
import { formatAgo, formatClock } from './text-format.js';
import type { Team, TeamStep } from '../gateways/http/api-schemas.js';

const HISTORY_SHOWN = 12;

/** Phase orders of the coordination patterns musubi ships, for teams that do not list their own. */
const KNOWN_ORDERS: readonly (readonly string[])[] = [
  ['IMPLEMENT', 'TEST', 'DISCUSS'],
  ['implement', 'docs', 'review'],
];

/**
 * The phases to draw: the team's own list; else a known pattern order that covers every phase seen;
 * else the order the history first visited them.
 */
function phasesOf(team: Team): readonly string[] {
  if (team.phases !== undefined && team.phases.length > 0) return team.phases;
  const seen: string[] = [];
  for (const step of team.history) if (!seen.includes(step.phase)) seen.push(step.phase);
  if (team.phase !== undefined && !seen.includes(team.phase)) seen.push(team.phase);
  return KNOWN_ORDERS.find((order) => seen.every((p) => order.includes(p))) ?? seen;
}

function stepper(team: Team): HTMLElement {
  const phases = phasesOf(team);
  const current = team.phase === undefined ? -1 : phases.indexOf(team.phase);
  return el(
    'ol',
    { class: 'stepper', aria: { label: `phases of ${team.id}` } },
    ...phases.map((phase, i) =>
      el(
        'li',
        {
          class: i === current ? 'step current' : i < current ? 'step done' : 'step',
          aria: i === current ? { current: 'step' } : {},
        },
        el('span', { class: 'step-dot', aria: { hidden: 'true' } }),
        el('span', { class: 'step-label' }, phase),
      ),
    ),
  );
}

function historyChip(step: TeamStep): HTMLElement {
  return el(
    'li',
    { class: 'hist', title: new Date(step.at).toLocaleString() },
    step.round === undefined ? null : el('span', { class: 'hist-round' }, `R${step.round}`),
    el('span', { class: 'hist-phase' }, step.phase),
    el('span', { class: 'hist-time' }, formatClock(step.at)),
  );
}

function teamCard(team: Team, nowMs: number): HTMLElement {
  const facts = [
    team.round === undefined ? null : el('span', { class: 'fact' }, el('b', {}, `Round ${team.round}`)),
    team.implementer === undefined || team.implementer === ''
      ? null
      : el('span', { class: 'fact' }, 'implementer ', el('b', {}, team.implementer)),
    team.members === undefined ? null : el('span', { class: 'fact muted' }, `${team.members.length} members`),
    team.updatedAt === undefined
      ? null
      : el('span', { class: 'fact muted' }, `changed ${formatAgo(team.updatedAt, nowMs)}`),
  ];
  const history = team.history.slice(-HISTORY_SHOWN);
  return el(
    'article',
    { class: 'team-card', data: { team: team.id, key: `team:${team.id}` } },
    el(
      'header',
      { class: 'team-head' },
      el('span', { class: 'team-name' }, team.id),
      el('span', { class: 'pattern' }, team.pattern),
      ...facts,
    ),
    team.goal === undefined ? null : el('p', { class: 'team-goal' }, team.goal),
    stepper(team),
    history.length === 0
      ? null
      : el('ol', { class: 'history', aria: { label: 'recent phase changes' } }, ...history.map(historyChip)),
  );
}

/** Renders one card per team with its phase stepper and recent phase changes. */
export function renderTeams(container: HTMLElement, teams: readonly Team[], nowMs: number): void {
  if (teams.length === 0) {
    replaceChildren(
      container,
      el('p', { class: 'empty-line' }, 'No teams yet. Phases and rounds show up here as teams work.'),
    );
    return;
  }
  replaceChildren(container, ...teams.map((t) => teamCard(t, nowMs)));
}
