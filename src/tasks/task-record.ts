import { z } from 'zod';

/** Every state a task can be in. `queued` → `running` → one of the terminal states; `queued` → `cancelled`. */
export const TASK_STATES = ['queued', 'running', 'completed', 'failed', 'cancelled', 'blocked'] as const;
export type TaskState = (typeof TASK_STATES)[number];

/** States a task never leaves ("terminal wins": later writes are ignored). `blocked` counts as terminal. */
export const TERMINAL_TASK_STATES = ['completed', 'failed', 'cancelled', 'blocked'] as const;
export type TerminalTaskState = (typeof TERMINAL_TASK_STATES)[number];

/** True when `state` is terminal. */
export function isTerminalState(state: TaskState): state is TerminalTaskState {
  return (TERMINAL_TASK_STATES as readonly string[]).includes(state);
}

/** Task ids double as KV key segments, so they are restricted to a safe alphabet. */
export const TASK_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

/** Progress reported by a running task; every field optional. */
export const taskProgressSchema = z.object({
  progress: z.number().optional(),
  stage: z.string().optional(),
  message: z.string().optional(),
  step: z.number().optional(),
  stepTotal: z.number().optional(),
});
export type TaskProgress = z.infer<typeof taskProgressSchema>;

/**
 * One task as stored at KV `tasks/<id>`. Times are epoch milliseconds of the registry's clock.
 * `owner` names the team or gateway that runs it (`neko`), `kind` its type within that owner
 * (`computer_use`, `plugin_direct`). `meta` is private to the owner and never shown on a wire.
 */
export const taskRecordSchema = z.object({
  id: z.string().regex(TASK_ID_PATTERN),
  owner: z.string(),
  kind: z.string(),
  state: z.enum(TASK_STATES),
  channel: z.string().optional(),
  title: z.string().optional(),
  description: z.string().optional(),
  agent: z.string().optional(),
  /** A session or conversation key (N.E.K.O.'s `lanlan_name`). */
  session: z.string().optional(),
  params: z.record(z.string(), z.unknown()),
  progress: taskProgressSchema.optional(),
  result: z.unknown().optional(),
  error: z.string().optional(),
  createdAt: z.number(),
  /** Set at creation and reset when the task starts running. */
  startedAt: z.number(),
  updatedAt: z.number(),
  /** Set when the task reaches a terminal state. */
  endedAt: z.number().optional(),
  /** A deferred task stays `running` until completed externally or this deadline passes. */
  deferredUntil: z.number().optional(),
  /** Creation order among tasks with the same `createdAt`. */
  seq: z.number().int(),
  meta: z.record(z.string(), z.unknown()),
});
export type TaskRecord = z.infer<typeof taskRecordSchema>;

/** What a caller supplies to create a task; the registry fills id (unless given), times and seq. */
export interface TaskCreateInput {
  readonly id?: string;
  readonly owner: string;
  readonly kind: string;
  /** `queued` (default) or `running`. */
  readonly state?: 'queued' | 'running';
  readonly channel?: string;
  readonly title?: string;
  readonly description?: string;
  readonly agent?: string;
  readonly session?: string;
  readonly params?: Record<string, unknown>;
  readonly meta?: Record<string, unknown>;
}

/** Why a task record changed; delivered to {@link TaskChangeListener}s and in `task.changed` events. */
export type TaskChangeReason =
  | 'created'
  | 'started'
  | 'progress'
  | 'finished'
  | 'cancelled'
  | 'deferred'
  | 'completed_deferred'
  | 'timed_out'
  | 'interrupted'
  | 'deleted';

/** One change of one task, as seen by in-process listeners. For `deleted`, `task` is the last record. */
export interface TaskChange {
  readonly reason: TaskChangeReason;
  readonly task: TaskRecord;
  readonly previous: TaskRecord | null;
}

/** Called synchronously after each successful write of this registry instance; must not throw. */
export type TaskChangeListener = (change: TaskChange) => void;
