import type { Clock, Timer } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { taskRecordSchema, type TaskRecord } from './task-record.js';
import { retentionVerdict } from './task-retention.js';
import type { TaskRows } from './task-rows.js';

/** Error of a deferred task whose completion never came. */
export const DEFERRED_TIMEOUT_ERROR = 'Deferred task timeout (callback not received)';

/** What one retention pass did. */
export interface SweepResult {
  readonly deleted: readonly TaskRecord[];
  readonly timedOut: readonly TaskRecord[];
}

/** Settings of {@link TaskSweeper}. */
export interface TaskSweeperOptions {
  readonly rows: TaskRows;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly retentionMs: number;
  readonly intervalMs: number;
}

/**
 * Retention and deferred deadlines of the task registry. `sweep()` is lazy (at most once per
 * `intervalMs` unless forced; concurrent calls share a pass); while deferred tasks are tracked a timer
 * forces a pass every `intervalMs`, so a missed deadline is found without anyone asking.
 */
export class TaskSweeper {
  readonly #o: TaskSweeperOptions;
  readonly #deferred = new Set<string>();
  #lastSweepAt = Number.NEGATIVE_INFINITY;
  #sweeping: Promise<SweepResult> | undefined;
  #timer: Timer | undefined;
  #isClosed = false;

  constructor(options: TaskSweeperOptions) {
    this.#o = options;
  }

  /** Runs a pass now (`force`) or when the last one is at least `intervalMs` old. */
  sweep(options: { readonly force?: boolean } = {}): Promise<SweepResult> {
    if (this.#sweeping !== undefined) return this.#sweeping;
    const now = this.#o.clock.now();
    if (options.force !== true && now - this.#lastSweepAt < this.#o.intervalMs) {
      return Promise.resolve({ deleted: [], timedOut: [] });
    }
    this.#lastSweepAt = now;
    this.#sweeping = this.#pass().finally(() => (this.#sweeping = undefined));
    return this.#sweeping;
  }

  /** Starts watching a deferred task's deadline (arms the timer). */
  trackDeferred(id: string): void {
    this.#deferred.add(id);
    this.#arm();
  }

  /** Stops watching a task (it ended or was deleted); the timer stops with the last one. */
  forget(id: string): void {
    this.#deferred.delete(id);
    if (this.#deferred.size === 0) {
      this.#timer?.cancel();
      this.#timer = undefined;
    }
  }

  /** Cancels the timer. Idempotent. */
  close(): void {
    this.#isClosed = true;
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  #arm(): void {
    if (this.#timer !== undefined || this.#isClosed || this.#deferred.size === 0) return;
    this.#timer = this.#o.clock.setTimer(() => {
      this.#timer = undefined;
      // Re-arm before the pass so the timer keeps ticking however long the pass takes.
      this.#arm();
      this.sweep({ force: true }).catch((err: unknown) =>
        this.#o.logger.warn({ err }, 'deferred-task clean-up failed'),
      );
    }, this.#o.intervalMs);
  }

  async #pass(): Promise<SweepResult> {
    const { rows, clock } = this.#o;
    const policy = { retentionMs: this.#o.retentionMs, fallbackRetentionMs: 2 * this.#o.retentionMs };
    const deleted: TaskRecord[] = [];
    const timedOut: TaskRecord[] = [];
    for (const entry of await rows.entries()) {
      const task = taskRecordSchema.safeParse(entry.value).data;
      if (task === undefined) {
        // A row nobody can read can never be shown or completed: drop it rather than keep it forever.
        await rows.deleteInvalid(entry);
        continue;
      }
      const verdict = retentionVerdict(task, clock.now(), policy);
      if (verdict === 'delete' && (await rows.delete(task, entry.revision))) deleted.push(task);
      if (verdict !== 'time_out') continue;
      const failed = await rows.write(task.id, 'timed_out', (c, now) => {
        if (c.state !== 'running' || c.deferredUntil === undefined || now < c.deferredUntil) return null;
        const { deferredUntil: _expired, ...rest } = c;
        return { ...rest, state: 'failed', error: DEFERRED_TIMEOUT_ERROR, endedAt: now };
      });
      if (failed !== null) timedOut.push(failed);
    }
    return { deleted, timedOut };
  }
}
