import { el, replaceChildren } from './dom.js';
import { runButtons, runStatusBadge, testVerdict, type RunActions } from './run-facts.js';
import { formatAgo, formatTokens, formatUsd, summaryLine } from './text-format.js';
import type { RunsReply, RunView } from '../gateways/http/api-schemas.js';

function runCard(run: RunView, nowMs: number, busy: ReadonlySet<string>, actions: RunActions): HTMLElement {
  const phases = run.plan?.phases.length;
  const goal = summaryLine(run.goal, 120).line;
  return el(
    'li',
    { class: `run-card rc-${run.status}`, data: { run: run.id, key: `run:${run.id}` } },
    el(
      'div',
      { class: 'run-top' },
      runStatusBadge(run),
      el(
        'h3',
        { class: 'run-goal' },
        el(
          'button',
          {
            class: 'link-btn',
            type: 'button',
            title: run.goal,
            aria: { label: `open run ${run.id}: ${goal}` },
            onClick: () => actions.open(run.id),
          },
          goal,
        ),
      ),
      runButtons(run, busy, actions),
    ),
    el(
      'div',
      { class: 'run-meta' },
      el('span', { class: 'mono', title: 'branch' }, run.branch),
      testVerdict(run),
      el('span', {}, phases === undefined ? 'not planned yet' : `${run.phasesDone} of ${phases} phases done`),
      el('span', { title: 'cost' }, formatUsd(run.usage.costUsd)),
      el('span', {}, formatTokens(run.usage)),
      el('span', { class: 'muted' }, `${run.turns} turns · ${formatAgo(run.updatedAt, nowMs)}`),
    ),
    run.reason === null ? null : el('p', { class: 'run-reason' }, run.reason),
  );
}

/**
 * Renders the runs list (newest first) and puts the start form in step with `canStart`: disabled with
 * the hub's reason when it cannot start runs.
 */
export function renderRuns(
  box: HTMLElement,
  form: { readonly fieldset: HTMLFieldSetElement; readonly reason: HTMLElement },
  view: { readonly reply: RunsReply | undefined; readonly busy: ReadonlySet<string>; readonly nowMs: number },
  actions: RunActions,
): void {
  const { reply, busy, nowMs } = view;
  const canStart = reply?.canStart === true;
  form.fieldset.disabled = !canStart || busy.has('run-start');
  form.reason.hidden = reply === undefined || canStart;
  form.reason.textContent =
    reply === undefined || canStart
      ? ''
      : `Runs cannot be started here: ${reply.reason ?? 'the hub says no'}.`;
  if (reply === undefined) return replaceChildren(box, el('p', { class: 'loading' }, 'Loading runs…'));
  if (reply.runs.length === 0)
    return replaceChildren(
      box,
      el(
        'p',
        { class: 'empty-line', data: { testid: 'runs-empty' } },
        'No runs yet. Start one with the form.',
      ),
    );
  const runs = [...reply.runs].sort((a, b) => b.createdAt - a.createdAt);
  replaceChildren(
    box,
    el(
      'ol',
      { class: 'run-list', id: 'run-list', aria: { label: 'runs, newest first' } },
      ...runs.map((r) => runCard(r, nowMs, busy, actions)),
    ),
  );
}
