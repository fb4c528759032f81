import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { TaskChange, TaskRecord } from '../../tasks/task-record.js';
import type { Channel } from './channel.js';
import type { SessionMemory } from './session-memory.js';
import type { TrackerRecord } from './task-tracker.js';

function metaText(task: TaskRecord, key: string): string {
  const value = task.meta[key];
  return typeof value === 'string' ? value : '';
}

function resultDetail(task: TaskRecord): string {
  const result = task.result;
  if (
    typeof result === 'object' &&
    result !== null &&
    'summary' in result &&
    typeof result.summary === 'string'
  ) {
    return result.summary;
  }
  return '';
}

function trackerKind(change: TaskChange): TrackerRecord['kind'] | undefined {
  if (change.reason === 'created') return 'assigned';
  if (change.reason === 'cancelled') return 'cancelled';
  if (change.task.state === 'completed') return 'completed';
  if (change.task.state === 'failed' || change.task.state === 'blocked') return 'failed';
  return undefined;
}

/**
 * What every change of an executor task causes besides the registry write, whoever made it (this
 * executor, the dashboard through the shared registry, a deadline): a tracker record for the session,
 * and on cancel the channel's own `cancel` in the background (errors only logged).
 */
export function applyTaskChange(
  change: TaskChange,
  deps: {
    readonly sessions: SessionMemory;
    readonly channels: readonly Channel[];
    readonly clock: Clock;
    readonly logger: Logger;
  },
): void {
  const { task } = change;
  if (change.reason === 'progress' || change.reason === 'started' || change.reason === 'deferred') return;
  if (change.reason === 'deleted') return;
  const kind = trackerKind(change);
  if (kind !== undefined && task.session !== undefined) {
    deps.sessions.track(task.session, {
      ts: deps.clock.now(),
      kind,
      method: metaText(task, 'method') || task.kind,
      desc: task.description ?? '',
      detail: kind === 'completed' ? resultDetail(task) : (task.error ?? ''),
      taskId: task.id,
      triggerUserFingerprint: metaText(task, 'triggerFingerprint'),
      triggerSignature: metaText(task, 'triggerSignature'),
    });
  }
  if (change.reason === 'cancelled') {
    const channel = deps.channels.find((c) => c.id === task.channel);
    channel
      ?.cancel(task.id)
      .catch((err: unknown) => deps.logger.warn({ err, taskId: task.id }, 'channel cancel failed'));
  }
}
