import type { TaskRecord } from '../../tasks/task-record.js';
import type { ChannelGroup } from '../../teams/executor/channel.js';
import type { ControlState, Gate } from '../../teams/executor/control-state.js';
import type { ResultReport } from '../../teams/executor/task-execution.js';

/** ISO 8601 UTC with microseconds and `Z` (`2025-01-01T00:00:00.123000Z`), the wire's time format. */
export function isoMicros(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '000Z');
}

/** A wire event: one JSON object with `event_type` and `lanlan_name`. */
export type NekoEvent = Record<string, unknown> & { readonly event_type: string };

/** The `channel` group a task type reports in `task_result` (plugin_direct counts as user_plugin). */
export function groupOfType(type: string): string {
  return type === 'plugin_direct' ? 'user_plugin' : type;
}

function progressFields(task: TaskRecord): Record<string, unknown> {
  const p = task.progress;
  if (p === undefined) return {};
  return {
    ...(p.progress !== undefined && { progress: p.progress }),
    ...(p.stage !== undefined && { stage: p.stage }),
    ...(p.message !== undefined && { message: p.message }),
    ...(p.step !== undefined && { step: p.step }),
    ...(p.stepTotal !== undefined && { step_total: p.stepTotal }),
  };
}

/** The `task` object of `task_update` (spec 3.2). */
export function taskObject(task: TaskRecord): Record<string, unknown> {
  return {
    id: task.id,
    status: task.state,
    type: task.kind,
    start_time: isoMicros(task.startedAt),
    ...(task.endedAt !== undefined && { end_time: isoMicros(task.endedAt) }),
    params: task.params,
    ...(task.error !== undefined && { error: task.error }),
    ...progressFields(task),
    ...(task.channel !== undefined && { channel: task.channel }),
  };
}

/** A task as GET /tasks/{id} shows it: every public field (nothing private, no `_` keys). */
export function publicTask(task: TaskRecord): Record<string, unknown> {
  return {
    ...taskObject(task),
    end_time: task.endedAt === undefined ? null : isoMicros(task.endedAt),
    result: task.result ?? null,
    error: task.error ?? null,
    lanlan_name: task.session ?? null,
    session_id: null,
    ...(task.deferredUntil !== undefined && { deferred_timeout: task.deferredUntil / 1000 }),
  };
}

/** One row of GET /tasks. */
export function taskListItem(task: TaskRecord): Record<string, unknown> {
  return {
    id: task.id,
    type: task.kind,
    status: task.state,
    start_time: isoMicros(task.startedAt),
    params: task.params,
    result: task.result ?? null,
    error: task.error ?? null,
    lanlan_name: task.session ?? null,
    source: 'runtime',
  };
}

/** The `task_update` event of a task. */
export function taskUpdateEvent(task: TaskRecord): NekoEvent {
  return { event_type: 'task_update', lanlan_name: task.session ?? null, task: taskObject(task) };
}

/** The one `task_result` event of a finished task (spec 3.2). */
export function taskResultEvent(task: TaskRecord, report: ResultReport, now: number): NekoEvent {
  return {
    event_type: 'task_result',
    lanlan_name: task.session ?? null,
    text: report.summary,
    task_id: task.id,
    channel: groupOfType(task.kind),
    channel_id: task.channel ?? '',
    status: report.status,
    success: report.success,
    summary: report.summary,
    detail: report.detail,
    error_message: report.status === 'completed' ? '' : report.error,
    direct_reply: false,
    source_kind: report.source.kind,
    source_name: report.source.name,
    delivery_mode: report.delivery,
    result_kind: 'task_result',
    expires_in_s: null,
    timestamp: isoMicros(now),
  };
}

/** An `agent_notification` (assessment or dispatch failure). */
export function notificationEvent(sessionKey: string | null, text: string): NekoEvent {
  return {
    event_type: 'agent_notification',
    lanlan_name: sessionKey,
    text,
    source: 'brain',
    status: 'error',
    error_message: text,
  };
}

/** The public flag object (`agent_flags`). */
export function flagsObject(state: ControlState): Record<string, boolean> {
  return { ...state.flags, openclaw_ready: state.capabilities.openclaw.ready };
}

/** The gate as the wire shows it. */
export function gateObject(gate: Gate): Record<string, unknown> {
  return { ready: gate.ready, reasons: [...gate.reasons], is_free_version: false };
}

/** The state snapshot (spec 3.4). `notification` is the one-shot value the caller took. */
export function snapshotObject(parts: {
  readonly state: ControlState;
  readonly gate: Gate;
  readonly active: readonly TaskRecord[];
  readonly notification: string | null;
  readonly now: number;
}): Record<string, unknown> {
  const groups: ChannelGroup[] = ['computer_use', 'browser_use', 'user_plugin', 'openclaw'];
  return {
    revision: parts.state.revision,
    server_online: true,
    analyzer_enabled: parts.state.analyzerEnabled,
    flags: flagsObject(parts.state),
    gate: gateObject(parts.gate),
    capabilities: Object.fromEntries(groups.map((g) => [g, { ...parts.state.capabilities[g] }])),
    active_tasks: parts.active.map((t) => ({
      id: t.id,
      status: t.state,
      type: t.kind,
      start_time: isoMicros(t.startedAt),
      params: t.params,
      session_id: null,
      lanlan_name: t.session ?? null,
    })),
    notification: parts.notification,
    updated_at: isoMicros(parts.now),
  };
}
