import { MusubiError } from '../../core/errors.js';
import type { TaskRegistry } from '../../tasks/task-registry.js';
import type { TaskRecord } from '../../tasks/task-record.js';
import type { TaskSource, TaskView } from './http-ports.js';

/** A progress value as a fraction: 0-1 as is, 1-100 as a percentage, else from step / stepTotal. */
function fraction(progress: TaskRecord['progress']): number | undefined {
  const value = progress?.progress;
  if (value !== undefined && Number.isFinite(value) && value >= 0)
    return value <= 1 ? value : Math.min(1, value / 100);
  const { step, stepTotal } = progress ?? {};
  if (step !== undefined && stepTotal !== undefined && stepTotal > 0)
    return Math.min(1, Math.max(0, step / stepTotal));
  return undefined;
}

/** One registry row as the dashboard shows it; `params`, `result` and `meta` stay with their owner. */
export function toTaskView(task: TaskRecord): TaskView {
  const progress = fraction(task.progress);
  const title = task.title ?? task.description;
  const detail = task.error ?? task.progress?.message ?? task.progress?.stage;
  return {
    id: task.id,
    state: task.state,
    kind: task.kind,
    createdAt: task.createdAt,
    startedAt: task.startedAt,
    updatedAt: task.updatedAt,
    ...(title === undefined ? {} : { title: title.slice(0, 2000) }),
    ...(task.agent === undefined ? {} : { agent: task.agent.slice(0, 128) }),
    ...(task.channel === undefined ? {} : { channel: task.channel.slice(0, 128) }),
    ...(progress === undefined ? {} : { progress }),
    ...(detail === undefined ? {} : { detail: detail.slice(0, 4000) }),
  };
}

/**
 * The TaskSource the hub passes to the HTTP gateway: the task registry seen through {@link toTaskView}.
 * `cancel` maps the registry's `not_found` to NOT_FOUND (404) and resolves the task as it stands, also
 * when it had already ended.
 */
export function createRegistryTaskSource(registry: Pick<TaskRegistry, 'list' | 'cancel'>): TaskSource {
  return {
    list: async () => (await registry.list()).map(toTaskView),
    async cancel(id) {
      const outcome = await registry.cancel(id);
      if (outcome.outcome === 'not_found')
        throw new MusubiError('NOT_FOUND', `no task ${JSON.stringify(id)}`);
      return toTaskView(outcome.task);
    },
  };
}
