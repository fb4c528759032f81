import type { Logger } from '../../core/logger.js';
import type { TaskRecord } from '../../tasks/task-record.js';
import type { TaskRegistry } from '../../tasks/task-registry.js';
import type { Channel, ChannelRunResult, ChannelTask, DeliveryMode } from './channel.js';

/** Characters kept of a result's summary / error and of its detail. */
export const MAX_SUMMARY_CHARS = 500;
export const MAX_DETAIL_CHARS = 1_500;

/** What the gateway needs to report one finished task (`task_result`). */
export interface ResultReport {
  readonly status: 'completed' | 'failed' | 'cancelled' | 'blocked' | 'partial';
  readonly success: boolean;
  readonly summary: string;
  readonly detail: string;
  readonly error: string;
  readonly delivery: DeliveryMode;
  readonly source: { readonly kind: string; readonly name: string };
}

/** Collaborators of {@link executeTask}. */
export interface ExecutionDeps {
  readonly registry: TaskRegistry;
  readonly logger: Logger;
  /** Aborted when the server stops: runs end and their tasks stay for the restart rules. */
  readonly stopSignal: AbortSignal;
  /** Called once per finished, non-silent, non-deferred task. */
  readonly onResult: (task: TaskRecord, report: ResultReport) => void;
}

function statusOf(result: ChannelRunResult): ResultReport['status'] {
  if (result.status !== undefined) return result.status;
  if (result.success) return 'completed';
  return (result.detail ?? '') !== '' ? 'partial' : 'failed';
}

function reportOf(result: ChannelRunResult): ResultReport {
  const status = statusOf(result);
  const error = result.error ?? (result.success ? '' : result.summary);
  return {
    status,
    success: result.success,
    summary: result.summary.slice(0, MAX_SUMMARY_CHARS),
    detail: (result.detail ?? '').slice(0, MAX_DETAIL_CHARS),
    error: error.slice(0, MAX_SUMMARY_CHARS),
    delivery: result.delivery ?? 'proactive',
    source: result.source ?? { kind: '', name: '' },
  };
}

async function runChannel(
  deps: ExecutionDeps,
  channel: Channel,
  task: ChannelTask,
  signal: AbortSignal,
): Promise<ChannelRunResult> {
  try {
    return await channel.run(task, {
      signal,
      onProgress: (progress) => {
        deps.registry
          .progress(task.id, progress)
          .catch((err: unknown) => deps.logger.warn({ err, taskId: task.id }, 'progress not recorded'));
      },
    });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { success: false, summary: message, error: message, status: 'failed' };
  }
}

/**
 * Runs one started task on its channel and records the outcome. Terminal wins: when the task became
 * terminal meanwhile (cancel, end_all) nothing is written or reported. A successful `deferred` result
 * keeps the task running (no result). A `partial` outcome is stored as `failed`. Never rejects.
 */
export async function executeTask(deps: ExecutionDeps, channel: Channel, task: ChannelTask): Promise<void> {
  const signal = AbortSignal.any([deps.registry.runSignal(task.id), deps.stopSignal]);
  const result = await runChannel(deps, channel, task, signal);
  if (deps.stopSignal.aborted) return; // the restart rules decide what this task became
  if (result.success && result.deferred === true) {
    await deps.registry.defer(task.id);
    return;
  }
  const report = reportOf(result);
  const state = report.status === 'partial' ? 'failed' : report.status;
  const finished = await deps.registry.finish(task.id, {
    state,
    result: { summary: report.summary, detail: report.detail },
    ...(state !== 'completed' && { error: report.error }),
  });
  if (finished === null) return;
  if (report.delivery !== 'silent') deps.onResult(finished, report);
}
