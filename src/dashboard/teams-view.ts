import { el, replaceChildren } from './dom.js';
import { phaseSteps, type StepState } from './phase-steps.js';
import { formatAgo, formatClock, summaryLine } from './text-format.js';
import type { Team, TeamStep } from '../gateways/http/api-schemas.js';

const HISTORY_SHOWN = 12;
/** A goal longer than this (or on several lines) is shown as its first line until expanded. */
const GOAL_LINE_CHARS = 140;

/** What the team cards' controls do. */
export interface TeamActions {
  /** Shows or hides a team's whole goal. */
  toggleGoal(teamId: string): void;
}

/** Each state in its own style and words: a tick, a ring, a hollow dot; never colour alone. */
const STEP_VIEW: Readonly<
  Record<StepState, { readonly mark: string; readonly words: string; readonly cls: string }>
> = {
  done: { mark: '✓', words: 'done', cls: 'step done' },
  active: { mark: '●', words: 'current phase', cls: 'step current' },
  todo: { mark: '', words: 'not reached', cls: 'step todo' },
};

function stepper(team: Team): HTMLElement {
  return el(
    'ol',
    // Focusable: on a narrow card the stepper scrolls sideways, and a keyboard must be able to scroll it.
    { class: 'stepper', tabIndex: 0, aria: { label: `phases of ${team.id}` } },
    ...phaseSteps(team).map((step) => {
      const view = STEP_VIEW[step.state];
      return el(
        'li',
        {
          class: view.cls,
          data: { state: step.state },
          aria: step.state === 'active' ? { current: 'step' } : {},
        },
        el('span', { class: 'step-dot', aria: { hidden: 'true' } }, view.mark),
        el('span', { class: 'step-label' }, step.phase),
        el('span', { class: 'sr-only' }, ` (${view.words})`),
      );
    }),
  );
}

/** The goal as one line with a "show all" toggle, or whole once expanded. */
function goalOf(team: Team, goal: string, isExpanded: boolean, actions: TeamActions): HTMLElement {
  const { line, isCut } = summaryLine(goal, GOAL_LINE_CHARS);
  const id = `goal-${team.id}`;
  return el(
    'div',
    { class: isExpanded ? 'team-goal is-open' : 'team-goal' },
    el('p', { class: 'goal-text', id }, isExpanded || !isCut ? goal : line),
    isCut
      ? el(
          'button',
          {
            class: 'link-btn',
            type: 'button',
            aria: {
              expanded: String(isExpanded),
              controls: id,
              label: `${isExpanded ? 'show less' : 'show all'} of the goal of ${team.id}`,
            },
            onClick: () => actions.toggleGoal(team.id),
          },
          isExpanded ? 'show less' : 'show all',
        )
      : null,
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

function teamCard(
  team: Team,
  nowMs: number,
  expanded: ReadonlySet<string>,
  actions: TeamActions,
): HTMLElement {
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
    team.goal === undefined || team.goal.trim() === ''
      ? null
      : goalOf(team, team.goal, expanded.has(team.id), actions),
    stepper(team),
    history.length === 0
      ? null
      : el(
          'ol',
          { class: 'history', tabIndex: 0, aria: { label: `recent phase changes of ${team.id}` } },
          ...history.map(historyChip),
        ),
  );
}

/**
 * Renders one card per team: its goal (one line until expanded), its phase stepper in the pattern's
 * order and its recent phase changes.
 */
export function renderTeams(
  container: HTMLElement,
  teams: readonly Team[],
  nowMs: number,
  view: { readonly expanded: ReadonlySet<string>; readonly actions: TeamActions },
): void {
  if (teams.length === 0) {
    replaceChildren(
      container,
      el('p', { class: 'empty-line' }, 'No teams yet. Phases and rounds show up here as teams work.'),
    );
    return;
  }
  replaceChildren(container, ...teams.map((t) => teamCard(t, nowMs, view.expanded, view.actions)));
}
