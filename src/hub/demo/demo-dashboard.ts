import { MusubiError } from '../../core/errors.js';
import type { TaskSource, TaskView, TeamSource, TeamView } from '../../gateways/http/http-ports.js';
import { DEMO_PHASES, type DemoProgress, type PhaseState, type PhaseView } from './demo-progress.js';

const TASK_STATES: Readonly<Record<PhaseState, string>> = {
  pending: 'queued',
  running: 'running',
  done: 'completed',
  failed: 'failed',
  skipped: 'cancelled',
};

function taskOf(view: PhaseView): TaskView {
  return {
    id: `demo-${view.phase}`,
    state: TASK_STATES[view.state],
    title: `demo: ${view.phase}`,
    kind: 'demo-phase',
    ...(view.total > 0 && { progress: Math.min(1, view.done / view.total) }),
    ...(view.note !== '' && { detail: view.note }),
    ...(view.startedAt !== undefined && { createdAt: view.startedAt }),
    ...((view.endedAt ?? view.startedAt) !== undefined && { updatedAt: view.endedAt ?? view.startedAt }),
  };
}

/**
 * The demo's phases as dashboard tasks (one per phase, with its progress). The phases are not
 * cancellable from the page: `cancel` resolves the task unchanged, and NOT_FOUND for an unknown id.
 */
export function demoTaskSource(progress: DemoProgress): TaskSource {
  return {
    list: () => Promise.resolve(progress.views().map(taskOf)),
    cancel(id) {
      const view = progress.views().find((v) => `demo-${v.phase}` === id);
      if (view === undefined) return Promise.reject(new MusubiError('NOT_FOUND', `no demo task ${id}`));
      return Promise.resolve(taskOf(view));
    },
  };
}

/** The demo team as the dashboard's team list shows it: its members, goal and current phase. */
export function demoTeamSource(options: {
  readonly progress: DemoProgress;
  readonly members: readonly string[];
  readonly goal: string;
}): TeamSource {
  return {
    list(): Promise<readonly TeamView[]> {
      // After the run, the last phase stays marked, so the stepper shows the ones before it as done.
      const phase = options.progress.latest();
      return Promise.resolve([
        {
          id: 'demo',
          pattern: 'demo',
          phases: [...DEMO_PHASES],
          members: [...options.members],
          goal: options.goal.slice(0, 2000),
          ...(phase !== undefined && { phase }),
        },
      ]);
    },
  };
}
