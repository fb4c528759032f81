import { createHash } from 'node:crypto';
import type { KvState } from '../../bus/bus.types.js';
import type { Clock } from '../../core/clock.js';
import { isMusubiError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { firstCodePoints, pySplitLines, pyStrip } from '../../core/python/text.js';
import type { TaskRecord as RegistryRow } from '../../tasks/task-record.js';
import type { TaskRegistry } from '../../tasks/task-registry.js';
import type { ErrorDoc, ResultDoc, TaskInput } from './result-doc.js';
import {
  TaskRecords,
  type StoredTaskInput,
  type TaskRecord,
  type TaskRecordOutcome,
} from './task-records.js';

/** The owner of every yadon task in the task registry. */
const YADON_TASK_OWNER = 'yadon';
/** The registry error of a task its host's restart found unfinished. */
const RESTART_ERROR = 'Interrupted by restart';
/** The registry error of a task still queued or running when its host stopped. */
const STOP_ERROR = 'Interrupted: the yadon agent stopped';
const TITLE_CODE_POINTS = 200;
const ERROR_CODE_POINTS = 500;

/** What the yadon gateway uses of the task registry (the TaskRegistry satisfies it). */
export type YadonTaskRegistry = Pick<
  TaskRegistry,
  'create' | 'get' | 'list' | 'start' | 'progress' | 'finish' | 'cancel' | 'recover' | 'watchEnd' | 'sweep'
>;

/** What `get_result` finds for a task id (spec yadon.md 3.5). */
export type TaskLookup =
  | { readonly kind: 'unknown' }
  | { readonly kind: 'state'; readonly state: 'queued' | 'running' }
  | { readonly kind: 'done'; readonly doc: Readonly<Record<string, unknown>> }
  | { readonly kind: 'interrupted' }
  | { readonly kind: 'cancelled' };

/** What to do with a claimed submission: run it, answer it as cancelled, or drop it (it is over). */
export type Admission = 'run' | 'cancelled' | 'skip';

/** Collaborators and settings of {@link TaskLedger}. */
export interface TaskLedgerOptions {
  readonly registry: YadonTaskRegistry;
  readonly kv: KvState;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly agent: string;
  /** The registry `kind` of this agent's tasks (`job` for the manager, `subtask` for a worker). */
  readonly kind: string;
}

/** The registry id of one submission to one agent (envelope ids may hold characters task ids may not). */
export function taskRowId(agent: string, submission: string): string {
  return `yadon-${createHash('sha256').update(`${agent}\n${submission}`).digest('hex').slice(0, 32)}`;
}

function titleOf(task: TaskInput): string {
  const line =
    pySplitLines(task.instruction)
      .map((l) => pyStrip(l))
      .find((l) => l !== '') ?? '';
  return firstCodePoints(line === '' ? task.id : `${task.id}: ${line}`, TITLE_CODE_POINTS);
}

/**
 * One yadon agent's tasks, each submission a task registry row (owner `yadon`): the registry is the
 * truth of its state — queued, running, completed/failed, cancelled from the dashboard — and a
 * stop or restart fails what is still live there. Beside it, {@link TaskRecords} keeps only what the
 * wire needs: the task id's latest submission, and once a task is over its result document (kept
 * for days for `get_result`, while the registry drops ended rows after minutes) or that it was
 * interrupted or cancelled. Rows are written first, records second, so a record never names a row
 * that was not written.
 */
export class TaskLedger {
  readonly #o: TaskLedgerOptions;
  readonly #records: TaskRecords;

  constructor(options: TaskLedgerOptions) {
    this.#o = options;
    this.#records = new TaskRecords({
      kv: options.kv,
      clock: options.clock,
      logger: options.logger,
      agent: options.agent,
    });
  }

  #row(submission: string): string {
    return taskRowId(this.#o.agent, submission);
  }

  async #createRow(submission: string, task: TaskInput, channel: 'socket' | 'bus'): Promise<void> {
    await this.#o.registry.create({
      id: this.#row(submission),
      owner: YADON_TASK_OWNER,
      kind: this.#o.kind,
      agent: this.#o.agent,
      channel,
      title: titleOf(task),
      params: { taskId: task.id, projectDir: task.projectDir },
      meta: { submission },
    });
  }

  #record(submission: string, taskId: string): TaskRecord {
    return {
      id: taskId,
      agent: this.#o.agent,
      submission,
      task: this.#row(submission),
      createdAt: this.#o.clock.now(),
    };
  }

  /**
   * A socket task: its input when too large for the bus message, its queued row, then its record
   * (replacing an older submission's of the same task id, which still runs under its own row).
   */
  async enqueue(
    submission: string,
    input: StoredTaskInput,
    options: { isInputInline: boolean },
  ): Promise<void> {
    if (!options.isInputInline) await this.#records.storeInput(submission, input);
    await this.#createRow(submission, input, 'socket');
    await this.#records.put(this.#record(submission, input.id));
  }

  /**
   * Decides what a claimed submission does, from its registry row: queued or running (a retry) runs,
   * cancelled is answered as such, anything else is over. A bus task (from another gateway, given as
   * `busTask`) gets its row and record here, at its first claim.
   */
  async admit(submission: string, busTask?: TaskInput): Promise<Admission> {
    let row = await this.#o.registry.get(this.#row(submission));
    if (row === null && busTask !== undefined) {
      await this.#createRow(submission, busTask, 'bus').catch((err: unknown) => {
        if (!isMusubiError(err, 'STORE_CONFLICT')) throw err;
        // Created meanwhile by an earlier claim of the same message.
      });
      row = await this.#o.registry.get(this.#row(submission));
    }
    if (row?.state === 'cancelled') return 'cancelled';
    if (row?.state !== 'queued' && row?.state !== 'running') return 'skip';
    if (busTask !== undefined) await this.#records.ensure(this.#record(submission, busTask.id));
    return 'run';
  }

  /** Marks the submission's row running (a retry finds it running already). */
  async start(submission: string): Promise<void> {
    await this.#o.registry.start(this.#row(submission));
  }

  /** Aborted once the submission's row ends or goes away, whoever wrote it; watches until `signal`. */
  watchEnd(submission: string, signal: AbortSignal): AbortSignal {
    return this.#o.registry.watchEnd(this.#row(submission), { signal });
  }

  /** A crashed run waits for its retry: the row stays running and says so. */
  async retrying(submission: string, reason: string): Promise<void> {
    await this.#o.registry.progress(this.#row(submission), { stage: 'retrying', message: reason });
  }

  /**
   * Ends the submission's row with `doc` (completed for a `success` result, else failed), then stores
   * `doc` for `get_result`. Terminal wins: when the row was cancelled meanwhile the task counts as
   * cancelled and `doc` is dropped. Resolves which it was.
   */
  async finish(taskId: string, submission: string, doc: ResultDoc | ErrorDoc): Promise<'done' | 'cancelled'> {
    const isSuccess = doc.type === 'result' && doc.status === 'success';
    const error = doc.type === 'error' ? doc.message : doc.payload.summary;
    const row = this.#row(submission);
    const ended = await this.#o.registry.finish(row, {
      state: isSuccess ? 'completed' : 'failed',
      ...(doc.type === 'result' && { result: { status: doc.status, summary: doc.payload.summary } }),
      ...(!isSuccess && { error: firstCodePoints(error, ERROR_CODE_POINTS) }),
    });
    if (ended === null && (await this.#o.registry.get(row))?.state === 'cancelled') {
      await this.#records.end(taskId, submission, { kind: 'cancelled' });
      return 'cancelled';
    }
    await this.#records.end(taskId, submission, { kind: 'done', result: { ...doc } });
    return 'done';
  }

  /** Records that a cancelled submission ended without a result. */
  async cancelled(taskId: string, submission: string): Promise<void> {
    await this.#records.end(taskId, submission, { kind: 'cancelled' });
  }

  /** Where task `taskId` stands: its stored outcome, else its registry row. */
  async lookup(taskId: string): Promise<TaskLookup> {
    const record = await this.#records.get(taskId);
    if (record === null) return { kind: 'unknown' };
    switch (record.outcome?.kind) {
      case 'done':
        return { kind: 'done', doc: record.outcome.result };
      case 'interrupted':
      case 'cancelled':
        return { kind: record.outcome.kind };
      case undefined:
        return lookupRow(await this.#o.registry.get(record.task));
    }
  }

  /**
   * After a (re)start: fails this agent's rows still queued or running (they are not re-run), gives
   * every unfinished record its outcome, drops stored inputs and deletes records past `retentionMs`.
   */
  async recover(retentionMs: number): Promise<{ interrupted: number; expired: number }> {
    const interrupted = await this.#interrupt(RESTART_ERROR);
    await this.#records.dropInputs();
    return { interrupted, expired: await this.#records.expire(retentionMs) };
  }

  /** When the agent stops: what is still queued or running will not finish. Resolves how many. */
  stopped(): Promise<number> {
    return this.#interrupt(STOP_ERROR);
  }

  async #interrupt(error: string): Promise<number> {
    const failed = await this.#o.registry.recover({ owner: YADON_TASK_OWNER, agent: this.#o.agent, error });
    for (const record of await this.#records.unfinished()) {
      const row = await this.#o.registry.get(record.task);
      const outcome: TaskRecordOutcome = { kind: row?.state === 'cancelled' ? 'cancelled' : 'interrupted' };
      await this.#records.end(record.id, record.submission, outcome);
    }
    return failed.length;
  }

  /**
   * Cancels the live tasks of other yadon agents whose task id extends `jobId` (`<job id>-<phase>-sub<j>`,
   * spec yadon.md 3.7): the subtasks of a cancelled job. Resolves how many it cancelled.
   */
  async cancelSubtasks(jobId: string): Promise<number> {
    const live = await this.#o.registry.list({ owner: YADON_TASK_OWNER, states: ['queued', 'running'] });
    let cancelled = 0;
    for (const t of live) {
      const taskId = t.params['taskId'];
      if (t.agent === this.#o.agent || typeof taskId !== 'string' || !taskId.startsWith(`${jobId}-`))
        continue;
      const outcome = await this.#o.registry.cancel(t.id, { error: `job ${jobId} cancelled` });
      if (outcome.outcome === 'cancelled') cancelled++;
    }
    return cancelled;
  }

  /** Lazy clean-up of ended registry rows (at most once per the registry's sweep interval). */
  async sweep(): Promise<void> {
    await this.#o.registry.sweep();
  }

  /** The stored input of a large submission, or null. */
  input(submission: string): Promise<StoredTaskInput | null> {
    return this.#records.input(submission);
  }

  /** Drops the stored input of a finished submission. */
  dropInput(submission: string): Promise<void> {
    return this.#records.dropInput(submission);
  }
}

/** A live record's state from its row; a row already ended stays `running` until its outcome is stored. */
function lookupRow(row: RegistryRow | null): TaskLookup {
  switch (row?.state) {
    case 'queued':
      return { kind: 'state', state: 'queued' };
    case 'running':
    case 'completed':
    case 'failed':
      return { kind: 'state', state: 'running' };
    case 'cancelled':
      return { kind: 'cancelled' };
    case 'blocked':
    case undefined:
      return { kind: 'interrupted' };
  }
}
