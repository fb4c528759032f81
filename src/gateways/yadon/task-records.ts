import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { KvState } from '../../bus/bus.types.js';
import type { Clock } from '../../core/clock.js';
import { isMusubiError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';

/** Default retention of finished task records: well over the 24 h the spec asks for. */
export const DEFAULT_RETENTION_MS = 7 * 24 * 3_600_000;
const CAS_RETRIES = 5;

const recordSchema = z.object({
  id: z.string(),
  agent: z.string(),
  /** The bus envelope id of the submission this record describes (a task id may be sent twice). */
  submission: z.string(),
  state: z.enum(['queued', 'running', 'done', 'interrupted']),
  createdAt: z.number(),
  startedAt: z.number().optional(),
  finishedAt: z.number().optional(),
  result: z.record(z.string(), z.unknown()).optional(),
});

const inputSchema = z.object({ id: z.string(), instruction: z.string(), projectDir: z.string() });

/** One task as stored (spec yadon.md 4.4). */
export type TaskRecord = z.infer<typeof recordSchema>;
/** A queued task's input, kept until it finishes. */
export type StoredTaskInput = z.infer<typeof inputSchema>;

/**
 * The task records of one agent in the bus's key-value state: `yadon/<agent>/tasks/<hash of task id>`
 * (task ids are arbitrary client text, so they are hashed into safe keys) and the inputs of queued
 * submissions at `yadon/<agent>/inputs/<envelope id>`. Values are schema-checked when read back; a
 * corrupt row reads as absent and is logged. One writer (the agent's host) per agent.
 */
export class TaskRecords {
  readonly #kv: KvState;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #agent: string;
  readonly #prefix: string;

  constructor(options: { kv: KvState; clock: Clock; logger: Logger; agent: string }) {
    this.#kv = options.kv;
    this.#clock = options.clock;
    this.#log = options.logger;
    this.#agent = options.agent;
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

  /**
   * Stores the `queued` record of a new submission (replacing an older one of the same id) and, unless
   * the caller carries it inline in the bus message, its input.
   */
  async enqueue(
    submission: string,
    input: StoredTaskInput,
    options: { isInputInline: boolean },
  ): Promise<void> {
    if (!options.isInputInline) await this.#kv.kvSet(this.#inputKey(submission), input);
    await this.#kv.kvSet(this.#recordKey(input.id), {
      id: input.id,
      agent: this.#agent,
      submission,
      state: 'queued',
      createdAt: this.#clock.now(),
    } satisfies TaskRecord);
  }

  /** The stored input of a submission, or null when it is gone (finished, or cleared at a restart). */
  async input(submission: string): Promise<StoredTaskInput | null> {
    const entry = await this.#kv.kvGet(this.#inputKey(submission));
    const parsed = inputSchema.safeParse(entry?.value);
    return parsed.success ? parsed.data : null;
  }

  /**
   * Moves the record of (taskId, submission) to `change(record)`; creates it from `create` when absent.
   * A record that now belongs to a newer submission of the same id is left alone.
   */
  async update(
    taskId: string,
    submission: string,
    change: (record: TaskRecord) => TaskRecord,
    create?: () => TaskRecord,
  ): Promise<void> {
    const key = this.#recordKey(taskId);
    for (let i = 0; i < CAS_RETRIES; i++) {
      const current = await this.#read(key);
      if (current !== null && current.record.submission !== submission) return;
      const base = current?.record ?? create?.();
      if (base === undefined) return;
      try {
        await this.#kv.kvSet(key, change(base), { expectedRevision: current?.revision ?? 0 });
        return;
      } catch (err) {
        if (!isMusubiError(err, 'STORE_CONFLICT')) throw err;
      }
    }
    this.#log.warn({ taskId }, 'task record kept changing; update skipped');
  }

  /** Drops the input of a finished submission (a no-op when it travelled inline). */
  async dropInput(submission: string): Promise<void> {
    await this.#kv.kvDelete(this.#inputKey(submission));
  }

  /**
   * After a host (re)start: records still `queued` or `running` become `interrupted` (they are not re-run),
   * every stored input is dropped, and finished records older than `retentionMs` are deleted.
   */
  async recover(retentionMs: number): Promise<{ interrupted: number; expired: number }> {
    const now = this.#clock.now();
    let interrupted = 0;
    let expired = 0;
    for (const entry of await this.#kv.kvList(`${this.#prefix}tasks/`)) {
      const parsed = recordSchema.safeParse(entry.value);
      if (!parsed.success) continue;
      const record = parsed.data;
      if (record.state === 'queued' || record.state === 'running') {
        await this.update(record.id, record.submission, (r) => ({
          ...r,
          state: 'interrupted',
          finishedAt: now,
        }));
        interrupted++;
      } else if ((record.finishedAt ?? now) < now - retentionMs) {
        await this.#kv.kvDelete(entry.key);
        expired++;
      }
    }
    for (const entry of await this.#kv.kvList(`${this.#prefix}inputs/`)) await this.#kv.kvDelete(entry.key);
    return { interrupted, expired };
  }
}
