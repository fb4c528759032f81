import { isTerminalState, type TaskRecord } from './task-record.js';

/** Retention settings of the task registry (N.E.K.O. `TASK_REGISTRY_CLEANUP_TTL` = 300 s). */
export interface RetentionPolicy {
  /** Terminal tasks are deleted this long after `endedAt`. */
  readonly retentionMs: number;
  /** Terminal tasks without `endedAt` are deleted this long after `startedAt` (default 2 × retention). */
  readonly fallbackRetentionMs: number;
}

/** What one retention pass does to one task. */
export type RetentionVerdict = 'keep' | 'delete' | 'time_out';

/**
 * Decides one task's fate at `now`: terminal tasks past retention are deleted, running deferred tasks
 * past their deadline time out, everything else is kept. Pure; the registry applies the verdict.
 */
export function retentionVerdict(task: TaskRecord, now: number, policy: RetentionPolicy): RetentionVerdict {
  if (isTerminalState(task.state)) {
    const anchor = task.endedAt ?? task.startedAt;
    const ttl = task.endedAt === undefined ? policy.fallbackRetentionMs : policy.retentionMs;
    return !Number.isFinite(anchor) || now - anchor > ttl ? 'delete' : 'keep';
  }
  if (task.state === 'running' && task.deferredUntil !== undefined && now >= task.deferredUntil) {
    return 'time_out';
  }
  return 'keep';
}
