import type { Bus } from '../bus/bus.types.js';
import type { Clock } from '../core/clock.js';
import { isMusubiError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { KvEntry } from '../store/store.js';
import {
  TASK_ID_PATTERN,
  taskRecordSchema,
  type TaskChangeListener,
  type TaskChangeReason,
  type TaskRecord,
  type TaskState,
} from './task-record.js';

const KEY_PREFIX = 'tasks/';
const MAX_CAS_ATTEMPTS = 50;

/** Selects tasks by owner, agent and state. */
export interface TaskFilter {
  readonly owner?: string;
  readonly agent?: string;
  readonly states?: readonly TaskState[];
}

/** Computes the next record from the current one at `now`; null means "nothing to write". */
export type TaskMutation = (current: TaskRecord, now: number) => TaskRecord | null;

/**
 * The storage half of the task registry: KV rows `tasks/<id>` written by compare-and-set, with every
 * successful write reported to in-process listeners (synchronously, in write order) and published as a
 * `task.changed` event. Rows failing the schema are invisible to readers.
 */
export class TaskRows {
  readonly #bus: Pick<Bus, 'kv' | 'publish'>;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #listeners = new Set<TaskChangeListener>();

  constructor(options: { bus: Pick<Bus, 'kv' | 'publish'>; clock: Clock; logger: Logger }) {
    this.#bus = options.bus;
    this.#clock = options.clock;
    this.#log = options.logger;
  }

  /** Registers a listener; returns the unsubscribe function. A throwing listener is logged, never fatal. */
  onChange(listener: TaskChangeListener): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  /** Forgets every listener. */
  clearListeners(): void {
    this.#listeners.clear();
  }

  /** Writes a new row; rejects STORE_CONFLICT when the id exists. */
  async insert(task: TaskRecord): Promise<void> {
    await this.#bus.kv.kvSet(KEY_PREFIX + task.id, task, { expectedRevision: 0 });
    await this.#changed('created', task, null);
  }

  async get(id: string): Promise<TaskRecord | null> {
    if (!TASK_ID_PATTERN.test(id)) return null;
    const entry = await this.#bus.kv.kvGet(KEY_PREFIX + id);
    return entry === null ? null : (taskRecordSchema.safeParse(entry.value).data ?? null);
  }

  /** Every raw row, valid or not, in key order (for retention). */
  entries(): Promise<KvEntry[]> {
    return this.#bus.kv.kvList(KEY_PREFIX);
  }

  /**
   * The row of `id` after each change made after this call, by any writer on the store (null once it is
   * deleted or unreadable), until `signal` aborts. The watch starts now, not at the first `next()`.
   */
  watch(id: string, signal: AbortSignal): AsyncIterable<TaskRecord | null> {
    const key = KEY_PREFIX + id;
    const changes = this.#bus.kv.kvWatch(key, { signal });
    return {
      async *[Symbol.asyncIterator]() {
        for await (const change of changes) {
          // The watch is by prefix: `tasks/ab` also sees `tasks/abc`.
          if (change.key !== key) continue;
          yield change.op === 'delete' ? null : (taskRecordSchema.safeParse(change.value).data ?? null);
        }
      },
    };
  }

  /** Valid rows matching `filter`, in creation order. */
  async list(filter: TaskFilter = {}): Promise<TaskRecord[]> {
    const entries = await this.entries();
    return entries
      .flatMap((e) => {
        const task = taskRecordSchema.safeParse(e.value).data;
        if (task === undefined) return [];
        if (filter.owner !== undefined && task.owner !== filter.owner) return [];
        if (filter.agent !== undefined && task.agent !== filter.agent) return [];
        if (filter.states !== undefined && !filter.states.includes(task.state)) return [];
        return [task];
      })
      .sort((a, b) => a.createdAt - b.createdAt || a.seq - b.seq);
  }

  /**
   * Applies `mutation` to the current row and writes the result (retrying on STORE_CONFLICT with a
   * fresh read). Resolves the written record, or null when the row is missing/invalid or the mutation
   * declined. `updatedAt` is set here.
   */
  async write(id: string, reason: TaskChangeReason, mutation: TaskMutation): Promise<TaskRecord | null> {
    if (!TASK_ID_PATTERN.test(id)) return null;
    for (let attempt = 0; ; attempt++) {
      const entry = await this.#bus.kv.kvGet(KEY_PREFIX + id);
      const current = entry === null ? undefined : taskRecordSchema.safeParse(entry.value).data;
      if (entry === null || current === undefined) return null;
      const now = this.#clock.now();
      const next = mutation(current, now);
      if (next === null) return null;
      const task = { ...next, updatedAt: now };
      try {
        await this.#bus.kv.kvSet(KEY_PREFIX + id, task, { expectedRevision: entry.revision });
      } catch (err) {
        if (isMusubiError(err, 'STORE_CONFLICT') && attempt < MAX_CAS_ATTEMPTS) continue;
        throw err;
      }
      await this.#changed(reason, task, current);
      return task;
    }
  }

  /** Deletes a row (only at `revision` when given). False when it changed meanwhile. */
  async delete(task: TaskRecord, revision?: number): Promise<boolean> {
    try {
      const options = revision === undefined ? {} : { expectedRevision: revision };
      await this.#bus.kv.kvDelete(KEY_PREFIX + task.id, options);
    } catch (err) {
      if (isMusubiError(err, 'STORE_CONFLICT')) return false;
      throw err;
    }
    await this.#changed('deleted', task, task);
    return true;
  }

  /** Deletes a row that failed validation, if it is still at `revision`. */
  async deleteInvalid(entry: KvEntry): Promise<void> {
    try {
      await this.#bus.kv.kvDelete(entry.key, { expectedRevision: entry.revision });
    } catch (err) {
      if (!isMusubiError(err, 'STORE_CONFLICT')) throw err;
      // Rewritten meanwhile: the next pass looks at the new value.
    }
  }

  async #changed(reason: TaskChangeReason, task: TaskRecord, previous: TaskRecord | null): Promise<void> {
    for (const listener of this.#listeners) {
      try {
        listener({ reason, task, previous });
      } catch (err) {
        this.#log.warn({ err, taskId: task.id }, 'task change listener threw');
      }
    }
    const data: Record<string, unknown> = {
      id: task.id,
      owner: task.owner,
      kind: task.kind,
      state: task.state,
      reason,
      updatedAt: task.updatedAt,
    };
    for (const key of ['channel', 'title', 'agent', 'session', 'error'] as const) {
      if (task[key] !== undefined) data[key] = task[key];
    }
    await this.#bus
      .publish({ type: 'task.changed', data })
      .catch((err: unknown) => this.#log.warn({ err, taskId: task.id }, 'task.changed not published'));
  }
}
