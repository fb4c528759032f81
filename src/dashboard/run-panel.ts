import type { ApiClient } from './api-client.js';
import { el, replaceChildren } from './dom.js';
import type { DrawerPanel } from './drawer.js';
import { runButtons, runStatusBadge, testVerdict, type RunActions } from './run-facts.js';
import { formatTokens, formatUsd } from './text-format.js';
import { runReply, type BusEvent, type RunView } from '../gateways/http/api-schemas.js';

/** What the run panel needs from the page. */
export interface RunPanelDeps {
  readonly api: ApiClient;
  /** The run as the page knows it now (the runs list). */
  readonly run: (id: string) => RunView | undefined;
  /** Puts a fresher copy of the run into the page's list. */
  readonly remember: (run: RunView) => void;
  readonly busy: ReadonlySet<string>;
  readonly actions: RunActions;
  /** Opens the message a subtask's turn was delivered as (its id is the subtask's): every attempt. */
  readonly openDelivery: (messageId: string) => void;
  readonly onLoaded: () => void;
  readonly onError: (err: unknown) => void;
}

/** The run id a `run.*` event is about. */
export function runIdOf(event: BusEvent): string | undefined {
  const data = event.data ?? {};
  const id = data.runId ?? data.run;
  return typeof id === 'string' ? id : undefined;
}

function facts(pairs: readonly (readonly [string, Node | string | null])[]): HTMLElement {
  return el(
    'dl',
    { class: 'kv' },
    ...pairs.flatMap(([k, v]) => (v === null ? [] : [el('dt', {}, k), el('dd', {}, v)])),
  );
}

function planSection(run: RunView): HTMLElement[] {
  const plan = run.plan;
  if (plan === null) return [el('h3', {}, 'Plan'), el('p', { class: 'empty-line' }, 'Not planned yet.')];
  return [
    el('h3', {}, 'Plan'),
    plan.strategy === undefined ? el('span') : el('p', {}, plan.strategy),
    plan.fallbackReason === undefined
      ? el('span')
      : el('p', { class: 'note' }, `A one-phase plan was used: ${plan.fallbackReason}`),
    el(
      'ol',
      { class: 'run-phases', id: 'run-phases', aria: { label: 'phases' } },
      ...plan.phases.map((phase, i) => {
        const state =
          i < run.phasesDone ? 'done' : i === run.phasesDone && run.status === 'running' ? 'active' : 'todo';
        const word = { done: 'done', active: 'in progress', todo: 'not reached' }[state];
        return el(
          'li',
          { class: `run-phase rp-${state}`, data: { state } },
          el(
            'span',
            { class: 'icon', aria: { hidden: 'true' } },
            state === 'done' ? '✓' : state === 'active' ? '●' : '○',
          ),
          el('b', {}, phase.name),
          ` · ${phase.subtasks.length} ${phase.subtasks.length === 1 ? 'subtask' : 'subtasks'} · ${word}`,
        );
      }),
    ),
  ];
}

function subtaskTable(run: RunView, openDelivery: (messageId: string) => void): HTMLElement {
  if (run.subtasks.length === 0) return el('p', { class: 'empty-line' }, 'No subtask has started yet.');
  return el(
    'div',
    { class: 'table-scroll', tabIndex: 0, role: 'region', aria: { label: 'subtasks' } },
    el(
      'table',
      { class: 'subtasks', id: 'run-subtasks' },
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          ...['subtask', 'phase', 'worker', 'status', 'attempts', 'cost', 'summary'].map((h) =>
            el('th', { attrs: { scope: 'col' } }, h),
          ),
        ),
      ),
      el(
        'tbody',
        {},
        ...run.subtasks.map((s) =>
          el(
            'tr',
            { data: { subtask: s.id } },
            el('td', { class: 'mono', title: s.instruction }, s.id),
            el('td', {}, s.phase),
            el('td', { class: 'num' }, String(s.worker)),
            el(
              'td',
              {},
              el('span', { class: `status st-${s.status}` }, s.status),
              s.isMerged ? el('span', { class: 'muted' }, ' · merged') : null,
            ),
            el(
              'td',
              { class: 'num' },
              // The turn's delivery on the bus holds every attempt: claims, nacks, the dead letter.
              el(
                'button',
                {
                  class: 'link-btn',
                  type: 'button',
                  onClick: () => openDelivery(s.id),
                  aria: {
                    label: `${s.attempts} ${s.attempts === 1 ? 'attempt' : 'attempts'} of ${s.id}: open its delivery history`,
                  },
                },
                String(s.attempts),
              ),
            ),
            el('td', { class: 'num' }, formatUsd(s.usage.costUsd)),
            el('td', { class: 'subtask-summary' }, s.summary === '' ? '—' : s.summary),
          ),
        ),
      ),
    ),
  );
}

function conflictList(run: RunView): HTMLElement[] {
  if (run.conflicts.length === 0) return [];
  return [
    el('h3', {}, 'Conflicts'),
    el(
      'ul',
      { class: 'conflicts' },
      ...run.conflicts.map((c) =>
        el(
          'li',
          {},
          el('b', {}, c.subtask),
          c.isResolved ? ' · resolved: ' : ' · unresolved: ',
          el('span', { class: 'mono' }, c.files.join(', ')),
        ),
      ),
    ),
  ];
}

/** One run: summary, plan and phases, subtasks, conflicts and the test verdict; Stop or Resume. */
export class RunPanel implements DrawerPanel {
  readonly view = 'run';
  readonly element: HTMLElement;
  readonly #id: string;
  readonly #deps: RunPanelDeps;
  /** The copy this panel fetched, shown until the page's list has one as new. */
  #fetched: RunView | undefined;
  /** What was drawn last (the run and its buttons' state): ticks redraw nothing, so details stay open. */
  #drawnKey = '';

  constructor(runId: string, deps: RunPanelDeps) {
    this.#id = runId;
    this.#deps = deps;
    this.element = el(
      'div',
      { class: 'drawer-panel', data: { testid: 'run-detail', run: runId } },
      el('p', { class: 'loading' }, 'Loading the run…'),
    );
    this.#fetch();
  }

  get title(): string {
    return `Run ${this.#id}`;
  }

  update(): void {
    const listed = this.#deps.run(this.#id);
    const fetched = this.#fetched;
    const run =
      listed !== undefined && (fetched === undefined || listed.updatedAt >= fetched.updatedAt)
        ? listed
        : fetched;
    if (run === undefined) return;
    const busy = this.#deps.busy;
    const key = `${run.updatedAt}|${run.status}|${run.isActive}|${busy.has(`run-stop:${run.id}`)}|${busy.has(`run-resume:${run.id}`)}`;
    if (key === this.#drawnKey) return;
    this.#drawnKey = key;
    const budget = [
      run.budget.usd === undefined ? null : formatUsd(run.budget.usd),
      run.budget.tokens === undefined ? null : `${run.budget.tokens} tokens`,
    ].filter((b): b is string => b !== null);
    replaceChildren(
      this.element,
      el(
        'div',
        { class: 'run-top' },
        runStatusBadge(run),
        testVerdict(run),
        runButtons(run, this.#deps.busy, this.#deps.actions),
      ),
      run.reason === null ? null : el('p', { class: 'run-reason' }, run.reason),
      el('h3', {}, 'Goal'),
      el('p', { class: 'tx-text' }, run.goal),
      el('h3', {}, 'Summary'),
      facts([
        ['branch', el('span', { class: 'mono' }, run.branch)],
        ['head', run.headCommit === null ? null : el('span', { class: 'mono' }, run.headCommit.slice(0, 12))],
        ['team', run.team],
        ['agent', run.agent ?? 'default'],
        ['workers', String(run.workers)],
        ['test', run.test === null ? 'none' : el('code', {}, run.test)],
        ['budget', budget.length === 0 ? 'none' : budget.join(' · ')],
        ['spent', `${formatUsd(run.usage.costUsd)} · ${formatTokens(run.usage)}`],
        ['turns', `${run.turns} (${run.retries} retried, ${run.fixRounds} fix rounds)`],
        ['started', new Date(run.createdAt).toLocaleString()],
        ['finished', run.finishedAt === null ? null : new Date(run.finishedAt).toLocaleString()],
        ['repository', el('span', { class: 'mono' }, run.repo)],
      ]),
      ...planSection(run),
      el('h3', {}, 'Subtasks'),
      subtaskTable(run, this.#deps.openDelivery),
      ...conflictList(run),
      el('h3', {}, 'Tests'),
      run.tests === null
        ? el('p', { class: 'empty-line' }, run.test === null ? 'No test command.' : 'Not run yet.')
        : el(
            'div',
            {},
            el('p', {}, testVerdict(run), ' · ', el('code', {}, run.tests.command)),
            el(
              'details',
              { class: 'tx-fold' },
              el('summary', {}, 'Output (last lines)'),
              el('pre', { class: 'tx-pre' }, run.tests.outputTail),
            ),
          ),
    );
  }

  onEvent(event: BusEvent): void {
    if (event.type.startsWith('run.') && runIdOf(event) === this.#id) this.update();
  }

  #fetch(): void {
    this.#deps.api
      .get(`/api/runs/${encodeURIComponent(this.#id)}`, runReply)
      .then((reply) => {
        this.#fetched = reply.run;
        this.#deps.remember(reply.run);
        this.update();
        this.#deps.onLoaded();
      })
      .catch((err: unknown) => {
        if (this.#deps.run(this.#id) === undefined && this.#fetched === undefined)
          replaceChildren(this.element, el('p', { class: 'empty-line' }, 'Could not load the run.'));
        this.#deps.onError(err);
      });
  }
}
