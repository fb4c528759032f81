/**
 * The task registry: every tracked background task of every team, one KV row `tasks/<id>` each, plus a
 * `task.changed` bus event per change (`data`: id, owner, kind, state, reason, updatedAt and, when set,
 * channel, title, agent, session, error). Generic: the N.E.K.O. executor, other teams and the dashboard
 * share the one instance hub/ builds.
 *
 * For the dashboard: `list({ owner?, agent?, states? })` returns {@link TaskRecord}s in creation order;
 * `get(id)` one or null; `cancel(id)` resolves `{ outcome: 'cancelled' | 'not_active' | 'not_found' }` and
 * never throws for an unknown id. A cancel through the shared instance aborts `runSignal(id)` (the owning
 * team stops the run) and reaches the owner's `onChange` listener (the N.E.K.O. gateway then tells its
 * main server); a run in another process on the same store sees it through `watchEnd(id)`. Show `id kind
 * channel state title description agent session progress error createdAt startedAt endedAt`; `params`,
 * `result` and `meta` belong to the owner (`meta` is never put on a wire).
 *
 * Rules: terminal wins at every write (a write to a completed/failed/cancelled/blocked task changes
 * nothing and resolves null or `not_active`); progress applies to `running` tasks only; terminal tasks
 * are deleted `retentionMs` after `endedAt` by `sweep()` (lazy, at most once per `sweepIntervalMs`, and
 * from a timer while deferred tasks exist); deferred tasks fail at `deferredUntil`. Listeners see only
 * this instance's writes.
 */
import { randomUUID } from 'node:crypto';
import type { Bus } from '../bus/bus.types.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import {
  isTerminalState,
  TASK_ID_PATTERN,
  type TaskChangeListener,
  type TaskCreateInput,
  type TaskProgress,
  type TaskRecord,
  type TerminalTaskState,
} from './task-record.js';
import { TaskRows, type TaskFilter } from './task-rows.js';
import { TaskSweeper, type SweepResult } from './task-sweeper.js';

export type { TaskFilter } from './task-rows.js';
export { DEFERRED_TIMEOUT_ERROR, type SweepResult } from './task-sweeper.js';

/** Why a task's row watch stopped (an abort reason that costs no stack trace). */
const WATCH_STOPPED = 'task watch stopped';
/** Default retention of terminal tasks (N.E.K.O. `TASK_REGISTRY_CLEANUP_TTL`). */
export const DEFAULT_TASK_RETENTION_MS = 300_000;
/** Lazy clean-up runs at most this often; the deferred-task timer fires this often. */
export const DEFAULT_SWEEP_INTERVAL_MS = 60_000;
/** Deadline of a deferred task. */
export const DEFAULT_DEFERRED_TIMEOUT_MS = 3_600_000;

/** Collaborators and settings of {@link TaskRegistry}. */
export interface TaskRegistryOptions {
  readonly bus: Pick<Bus, 'kv' | 'publish'>;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly retentionMs?: number;
  readonly sweepIntervalMs?: number;
  readonly deferredTimeoutMs?: number;
  /** New task ids; UUID v4 by default. Must match {@link TASK_ID_PATTERN}. */
  readonly newId?: () => string;
}

/** Result of {@link TaskRegistry.cancel}. */
export type CancelOutcome =
  | { readonly outcome: 'cancelled' | 'not_active'; readonly task: TaskRecord }
  | { readonly outcome: 'not_found' };

/** Result of {@link TaskRegistry.completeDeferred}. */
export type DeferredOutcome =
  | { readonly outcome: 'completed' | 'not_running' | 'not_deferred'; readonly task: TaskRecord }
  | { readonly outcome: 'not_found' };

/** How a task ended, for {@link TaskRegistry.finish}. */
export interface TaskOutcome {
  readonly state: TerminalTaskState;
  readonly result?: unknown;
  readonly error?: string;
}

/** The task registry; see the file comment for the contract. `close()` stops its timer. */
export class TaskRegistry implements AsyncDisposable {
  readonly #rows: TaskRows;
  readonly #sweeper: TaskSweeper;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #deferredTimeoutMs: number;
  readonly #newId: () => string;
  readonly #runs = new Map<string, AbortController>();
  #seq: number | undefined;

  constructor(options: TaskRegistryOptions) {
    const logger = options.logger.child({ component: 'tasks' });
    this.#clock = options.clock;
    this.#log = logger;
    this.#rows = new TaskRows({ bus: options.bus, clock: options.clock, logger });
    this.#sweeper = new TaskSweeper({
      rows: this.#rows,
      clock: options.clock,
      logger,
      retentionMs: options.retentionMs ?? DEFAULT_TASK_RETENTION_MS,
      intervalMs: options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS,
    });
    this.#deferredTimeoutMs = options.deferredTimeoutMs ?? DEFAULT_DEFERRED_TIMEOUT_MS;
    this.#newId = options.newId ?? randomUUID;
    this.#rows.onChange(({ task, reason }) => {
      if (!isTerminalState(task.state) && reason !== 'deleted') return;
      this.#runs.get(task.id)?.abort(new Error(`task ${task.id} ${task.state}`));
      this.#runs.delete(task.id);
      this.#sweeper.forget(task.id);
    });
  }

  /** Registers an in-process listener for this instance's writes; returns the unsubscribe function. */
  onChange(listener: TaskChangeListener): () => void {
    return this.#rows.onChange(listener);
  }

  /** Creates a task (`queued` unless `state: 'running'`). Rejects STORE_CONFLICT on a reused id. */
  async create(input: TaskCreateInput): Promise<TaskRecord> {
    const id = input.id ?? this.#newId();
    if (!TASK_ID_PATTERN.test(id)) throw new TypeError(`invalid task id ${JSON.stringify(id)}`);
    const now = this.#clock.now();
    const { state, params, meta, ...rest } = input;
    const task: TaskRecord = {
      ...rest,
      id,
      state: state ?? 'queued',
      params: { ...params },
      meta: { ...meta },
      createdAt: now,
      startedAt: now,
      updatedAt: now,
      seq: await this.#nextSeq(),
    };
    await this.#rows.insert(task);
    return task;
  }

  /** One task, or null (also for a string that cannot be a task id). */
  get(id: string): Promise<TaskRecord | null> {
    return this.#rows.get(id);
  }

  /** Tasks matching `filter`, in creation order; rows failing validation are left out. */
  list(filter: TaskFilter = {}): Promise<TaskRecord[]> {
    return this.#rows.list(filter);
  }

  /**
   * Aborted once the task turns terminal or is deleted through this instance. Ask before the run
   * starts; the controller is dropped when the task ends.
   */
  runSignal(id: string): AbortSignal {
    let controller = this.#runs.get(id);
    if (controller === undefined) {
      controller = new AbortController();
      this.#runs.set(id, controller);
    }
    return controller.signal;
  }

  /**
   * Aborted once task `id` is terminal, deleted or unreadable, whoever wrote it: this instance or another
   * one on the same store (another process), seen through a watch of its row. Aborted at once for a task
   * that is already over or unknown. Watching stops when the task ends or `options.signal` aborts: pass
   * the run's own signal so nothing outlives the run. A watch that fails (the bus closed) is logged and
   * leaves the signal as it is.
   */
  watchEnd(id: string, options: { readonly signal: AbortSignal }): AbortSignal {
    const ended = new AbortController();
    const watching = new AbortController();
    // A reason of our own: without one, abort() builds a DOMException with a stack trace each time.
    const stopWatching = (): void => watching.abort(WATCH_STOPPED);
    options.signal.addEventListener('abort', stopWatching, { once: true });
    const hasEnded = (task: TaskRecord | null): boolean => {
      if (task !== null && !isTerminalState(task.state)) return false;
      ended.abort(new Error(`task ${id} ${task?.state ?? 'deleted'}`));
      return true;
    };
    const follow = async (): Promise<void> => {
      if (options.signal.aborted) return;
      if (!TASK_ID_PATTERN.test(id)) return void hasEnded(null);
      // Watch first, then read: a change between the two is seen by the watch.
      const changes = this.#rows.watch(id, watching.signal);
      if (hasEnded(await this.#rows.get(id))) return;
      for await (const task of changes) if (hasEnded(task)) return;
    };
    void follow()
      .catch((err: unknown) => this.#log.warn({ err, taskId: id }, 'cannot watch the task; it runs on'))
      .finally(() => {
        options.signal.removeEventListener('abort', stopWatching);
        watching.abort(WATCH_STOPPED);
      });
    return ended.signal;
  }

  /** `queued` → `running`, resetting `startedAt`. Resolves null when the task is not queued. */
  start(id: string): Promise<TaskRecord | null> {
    return this.#rows.write(id, 'started', (t, now) =>
      t.state === 'queued' ? { ...t, state: 'running', startedAt: now } : null,
    );
  }

  /** Records progress of a running task; resolves null (dropped) when the task is not running. */
  progress(id: string, progress: TaskProgress): Promise<TaskRecord | null> {
    return this.#rows.write(id, 'progress', (t) =>
      t.state === 'running' ? { ...t, progress: { ...t.progress, ...progress } } : null,
    );
  }

  /** Ends a live task with `endedAt`; null when it was already terminal (terminal wins) or is unknown. */
  finish(id: string, outcome: TaskOutcome): Promise<TaskRecord | null> {
    return this.#rows.write(id, 'finished', (t, now) => {
      if (isTerminalState(t.state)) return null;
      const { deferredUntil: _ended, ...rest } = t;
      return {
        ...rest,
        state: outcome.state,
        endedAt: now,
        ...(outcome.result !== undefined && { result: outcome.result }),
        ...(outcome.error !== undefined && { error: outcome.error }),
      };
    });
  }

  /** Cancels a queued or running task (error `Cancelled by user` by default) and aborts its run signal. */
  async cancel(id: string, options: { readonly error?: string } = {}): Promise<CancelOutcome> {
    const error = options.error ?? 'Cancelled by user';
    const seen: { task?: TaskRecord } = {};
    const task = await this.#rows.write(id, 'cancelled', (t, now) => {
      seen.task = t;
      return isTerminalState(t.state) ? null : { ...t, state: 'cancelled', error, endedAt: now };
    });
    if (task !== null) return { outcome: 'cancelled', task };
    return seen.task === undefined ? { outcome: 'not_found' } : { outcome: 'not_active', task: seen.task };
  }

  /** Cancels every queued or running task matching `filter`; resolves the tasks it cancelled. */
  async endAll(filter: { readonly owner?: string; readonly error?: string } = {}): Promise<TaskRecord[]> {
    const { error, ...which } = filter;
    const cancelled: TaskRecord[] = [];
    for (const t of await this.list({ ...which, states: ['queued', 'running'] })) {
      const outcome = await this.cancel(t.id, error === undefined ? {} : { error });
      if (outcome.outcome === 'cancelled') cancelled.push(outcome.task);
    }
    return cancelled;
  }

  /** Deletes every task matching `filter`, whatever its state. */
  async clear(filter: { readonly owner?: string } = {}): Promise<void> {
    for (const t of await this.list(filter)) await this.#rows.delete(t);
  }

  /** Keeps a running task `running` until {@link completeDeferred} or the deadline; null when not running. */
  async defer(id: string, options: { readonly timeoutMs?: number } = {}): Promise<TaskRecord | null> {
    const timeoutMs = options.timeoutMs ?? this.#deferredTimeoutMs;
    const task = await this.#rows.write(id, 'deferred', (t, now) =>
      t.state === 'running' ? { ...t, deferredUntil: now + timeoutMs } : null,
    );
    if (task !== null) this.#sweeper.trackDeferred(task.id);
    return task;
  }

  /** Completes a deferred running task; the outcome says why not otherwise. Never throws for bad ids. */
  async completeDeferred(id: string, options: { readonly result?: unknown } = {}): Promise<DeferredOutcome> {
    const seen: { task?: TaskRecord } = {};
    const task = await this.#rows.write(id, 'completed_deferred', (t, now) => {
      seen.task = t;
      if (t.state !== 'running' || t.deferredUntil === undefined) return null;
      const { deferredUntil: _done, ...rest } = t;
      const result = options.result === undefined ? {} : { result: options.result };
      return { ...rest, ...result, state: 'completed', endedAt: now };
    });
    if (task !== null) return { outcome: 'completed', task };
    if (seen.task === undefined) return { outcome: 'not_found' };
    return { outcome: seen.task.state === 'running' ? 'not_deferred' : 'not_running', task: seen.task };
  }

  /**
   * After a restart: fails queued and running tasks that are not deferred (error `Interrupted by
   * restart` by default) and re-arms the deadline timer of deferred ones. Resolves the failed tasks.
   */
  async recover(
    filter: { readonly owner?: string; readonly agent?: string; readonly error?: string } = {},
  ): Promise<TaskRecord[]> {
    const { error = 'Interrupted by restart', ...which } = filter;
    const failed: TaskRecord[] = [];
    for (const t of await this.list({ ...which, states: ['queued', 'running'] })) {
      if (t.state === 'running' && t.deferredUntil !== undefined) {
        this.#sweeper.trackDeferred(t.id);
        continue;
      }
      const task = await this.#rows.write(t.id, 'interrupted', (c, now) =>
        isTerminalState(c.state) ? null : { ...c, state: 'failed', error, endedAt: now },
      );
      if (task !== null) failed.push(task);
    }
    return failed;
  }

  /**
   * Deletes terminal tasks past retention and fails deferred tasks past their deadline. Without `force`
   * it does nothing when the last pass is less than `sweepIntervalMs` old.
   */
  sweep(options: { readonly force?: boolean } = {}): Promise<SweepResult> {
    return this.#sweeper.sweep(options);
  }

  /** Stops the deadline timer and forgets listeners and run signals. Idempotent; stored tasks stay. */
  close(): Promise<void> {
    this.#sweeper.close();
    this.#rows.clearListeners();
    this.#runs.clear();
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #nextSeq(): Promise<number> {
    if (this.#seq === undefined) {
      const all = await this.list();
      this.#seq = all.reduce((max, t) => Math.max(max, t.seq), 0);
    }
    this.#seq += 1;
    return this.#seq;
  }
}
