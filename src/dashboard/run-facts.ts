import { el } from './dom.js';
import type { RunView } from '../gateways/http/api-schemas.js';

// Small pieces both the runs list and the run drawer show: status, test verdict, stop/resume buttons.

const RUN_STATUS: Readonly<Record<string, { readonly icon: string; readonly label: string }>> = {
  running: { icon: '▶\uFE0E', label: 'running' },
  succeeded: { icon: '✓', label: 'succeeded' },
  failed: { icon: '✕', label: 'failed' },
  stopped: { icon: '■', label: 'stopped' },
  // Nothing changed: no subtask committed anything (its reason says why, a refused edit say).
  'no-change': { icon: '∅', label: 'no change' },
};

/** What the run controls do. */
export interface RunActions {
  open(runId: string): void;
  stop(runId: string): void;
  resume(runId: string): void;
}

/** A run's status as an icon and a word; a `running` run no process drives says so. */
export function runStatusBadge(run: RunView): HTMLElement {
  const view = RUN_STATUS[run.status] ?? { icon: '•', label: run.status };
  const isOrphan = run.status === 'running' && !run.isActive;
  return el(
    'span',
    { class: `run-status rs-${run.status}`, data: { status: run.status } },
    el('span', { class: 'icon', aria: { hidden: 'true' } }, view.icon),
    isOrphan ? 'interrupted (resumable)' : view.label,
  );
}

/** The test verdict in words. */
export function testVerdict(run: RunView): HTMLElement {
  if (run.tests === null)
    return el(
      'span',
      { class: 'verdict v-none' },
      run.test === null ? 'no test command' : 'tests not run yet',
    );
  return run.tests.passed
    ? el('span', { class: 'verdict v-pass' }, '✓ tests passed')
    : el('span', { class: 'verdict v-fail' }, `✕ tests failed (exit ${run.tests.exitCode})`);
}

/**
 * Whether a run can be resumed from the page: nothing drives it and it did not finish through all its
 * phases well or with nothing changed (a resume of those has no step left to run).
 */
export function isResumable(run: RunView): boolean {
  return !run.isActive && run.status !== 'succeeded' && run.status !== 'no-change';
}

/** Stop (while this hub runs it) or Resume (when it stopped, failed or was interrupted). */
export function runButtons(run: RunView, busy: ReadonlySet<string>, actions: RunActions): HTMLElement | null {
  const isStopping = busy.has(`run-stop:${run.id}`);
  const isResuming = busy.has(`run-resume:${run.id}`);
  if (run.isActive)
    return el(
      'button',
      {
        class: 'btn btn-small btn-danger',
        type: 'button',
        disabled: isStopping,
        data: { action: 'stop' },
        aria: { label: `stop run ${run.id}` },
        onClick: () => actions.stop(run.id),
      },
      isStopping ? 'Stopping…' : 'Stop',
    );
  if (isResumable(run))
    return el(
      'button',
      {
        class: 'btn btn-small',
        type: 'button',
        disabled: isResuming,
        data: { action: 'resume' },
        aria: { label: `resume run ${run.id}` },
        onClick: () => actions.resume(run.id),
      },
      isResuming ? 'Resuming…' : 'Resume',
    );
  return null;
}
