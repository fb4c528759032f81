import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { KvState } from '../../bus/bus.types.js';
import type { Clock } from '../../core/clock.js';
import { isMusubiError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';

/** Default retention of finished task records: well over the 24 h the spec asks for. */
export const DEFAULT_RETENTION_MS = 7 * 24 * 3_600_000;
const CAS_RETRIES = 5;

/** How a task ended as the wire reports it (spec yadon.md 3.5): its result, or why it has none. */
const outcomeSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('done'), result: z.record(z.string(), z.unknown()) }),
  z.object({ kind: z.literal('interrupted') }),
  z.object({ kind: z.literal('cancelled') }),
]);

const recordSchema = z.object({
  id: z.string(),
  agent: z.string(),
  /** The bus envelope id of the submission this record describes (a task id may be sent twice). */
  submission: z.string(),
  /** The task registry row of that submission: the truth of its state until `outcome` is set. */
  task: z.string(),
  createdAt: z.number(),
  endedAt: z.number().optional(),
  outcome: outcomeSchema.optional(),
});

const inputSchema = z.object({ id: z.string(), instruction: z.string(), projectDir: z.string() });

/** One task as `get_result` finds it. */
export type TaskRecord = z.infer<typeof recordSchema>;
/** The end of a task as the wire reports it. */
export type TaskRecordOutcome = z.infer<typeof outcomeSchema>;
/** A queued task's input, kept until it finishes. */
export type StoredTaskInput = z.infer<typeof inputSchema>;

/**
 * What the yadon wire needs of one agent's tasks beside the task registry, in the bus's key-value
 * state: the index from a task id (arbitrary client text, hashed into a safe key) to its latest
 * submission and registry row at `yadon/<agent>/tasks/<hash>`, and once the task is over, the result
 * document exactly as the sender got it (kept for `get_result` long after the registry drops the row)
 * or why there is none. Inputs too large for a bus message wait at `yadon/<agent>/inputs/<envelope
 * id>`. Values are schema-checked when read back; a corrupt row reads as absent and is logged. One
 * writer (the agent's host) per agent.
 */
export class TaskRecords {
  readonly #kv: KvState;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #prefix: string;

  constructor(options: { kv: KvState; clock: Clock; logger: Logger; agent: string }) {
    this.#kv = options.kv;
    this.#clock = options.clock;
    this.#log = options.logger;
    this.#prefix = `yadon/${options.agent}/`;
  }

  #recordKey(taskId: string): string {
    return `${this.#prefix}tasks/${createHash('sha256').update(taskId).digest('hex').slice(0, 40)}`;
  }

  #inputKey(submission: string): string {
    return `${this.#prefix}inputs/${submission}`;
  }

  /** The record of `taskId`, or null. */
  async get(taskId: string): Promise<TaskRecord | null> {
    return (await this.#read(this.#recordKey(taskId)))?.record ?? null;
  }

  async #read(key: string): Promise<{ record: TaskRecord; revision: number } | null> {
    const entry = await this.#kv.kvGet(key);
    if (entry === null) return null;
    const parsed = recordSchema.safeParse(entry.value);
    if (parsed.success) return { record: parsed.data, revision: entry.revision };
    this.#log.warn({ key }, 'task record failed validation; treated as absent');
    return null;
  }

  /** Stores the record of a new submission, replacing an older one of the same task id. */
  async put(record: TaskRecord): Promise<void> {
    await this.#kv.kvSet(this.#recordKey(record.id), record);
  }

  /** Stores `record` unless its task id has a record already. */
  async ensure(record: TaskRecord): Promise<void> {
    try {
      await this.#kv.kvSet(this.#recordKey(record.id), record, { expectedRevision: 0 });
    } catch (err) {
      if (!isMusubiError(err, 'STORE_CONFLICT')) throw err;
      // It exists: the first claim of this submission (or a newer submission) wrote it.
    }
  }

  /**
   * Sets the outcome of (taskId, submission) unless it has one already; a record that now belongs to a
   * newer submission of the same id is left alone.
   */
  async end(taskId: string, submission: string, outcome: TaskRecordOutcome): Promise<void> {
    const key = this.#recordKey(taskId);
    for (let i = 0; i < CAS_RETRIES; i++) {
      const current = await this.#read(key);
      if (current === null || current.record.submission !== submission) return;
      if (current.record.outcome !== undefined) return;
      const next = { ...current.record, outcome, endedAt: this.#clock.now() };
      try {
        await this.#kv.kvSet(key, next, { expectedRevision: current.revision });
        return;
      } catch (err) {
        if (!isMusubiError(err, 'STORE_CONFLICT')) throw err;
      }
    }
    this.#log.warn({ taskId }, 'task record kept changing; outcome not stored');
  }

  /** Records without an outcome (their registry rows say where they stand). */
  async unfinished(): Promise<TaskRecord[]> {
    const entries = await this.#kv.kvList(`${this.#prefix}tasks/`);
    return entries.flatMap((e) => {
      const record = recordSchema.safeParse(e.value).data;
      return record !== undefined && record.outcome === undefined ? [record] : [];
    });
  }

  /** Deletes the records that ended more than `retentionMs` ago; resolves how many. */
  async expire(retentionMs: number): Promise<number> {
    const now = this.#clock.now();
    let expired = 0;
    for (const entry of await this.#kv.kvList(`${this.#prefix}tasks/`)) {
      const record = recordSchema.safeParse(entry.value).data;
      if (record?.outcome === undefined || (record.endedAt ?? now) >= now - retentionMs) continue;
      await this.#kv.kvDelete(entry.key);
      expired++;
    }
    return expired;
  }

  /** Keeps the input of a submission too large to travel in its bus message. */
  async storeInput(submission: string, input: StoredTaskInput): Promise<void> {
    await this.#kv.kvSet(this.#inputKey(submission), input);
  }

  /** The stored input of a submission, or null when it is gone (finished, or cleared at a restart). */
  async input(submission: string): Promise<StoredTaskInput | null> {
    const entry = await this.#kv.kvGet(this.#inputKey(submission));
    const parsed = inputSchema.safeParse(entry?.value);
    return parsed.success ? parsed.data : null;
  }

  /** Drops the input of a finished submission (a no-op when it travelled inline). */
  async dropInput(submission: string): Promise<void> {
    await this.#kv.kvDelete(this.#inputKey(submission));
  }

  /** Drops every stored input (after a restart no queued task runs again). */
  async dropInputs(): Promise<void> {
    for (const entry of await this.#kv.kvList(`${this.#prefix}inputs/`)) await this.#kv.kvDelete(entry.key);
  }
}
