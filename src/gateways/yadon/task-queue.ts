import type { Bus, ConsumeVerdict, Settlement } from '../../bus/bus.types.js';
import type { Clock } from '../../core/clock.js';
import { isMusubiError } from '../../core/errors.js';
import type { IdGenerator } from '../../core/ids.js';
import type { Logger } from '../../core/logger.js';
import type { Delivery } from '../../store/store.js';
import {
  errorDoc,
  type ErrorDoc,
  type ResultDoc,
  type TaskInput,
  type TaskOutcome,
} from '../../teams/three-phase/result-doc.js';
import { yadonResultEnvelope, yadonTaskOf } from '../bridging/index.js';
import { CONNECTION_ERROR_PREFIX } from './agent-request.js';
import { decodeTaskMessage, encodeTaskMessage, SOCKET_TASK_TYPE } from './task-message.js';
import { DEFAULT_RETENTION_MS, TaskRecords } from './task-records.js';

/** The sender name of socket submissions on the bus. */
const SOCKET_SENDER = 'yadon-socket';
const DEFAULT_LEASE_MS = 60_000;

/** What `get_result` finds for a task id. */
export type TaskLookup =
  | { readonly kind: 'unknown' }
  | { readonly kind: 'state'; readonly state: 'queued' | 'running' }
  | { readonly kind: 'done'; readonly doc: Readonly<Record<string, unknown>> }
  | { readonly kind: 'interrupted' };

/** Collaborators and settings of {@link TaskQueue}. */
export interface TaskQueueOptions {
  readonly bus: Bus;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly logger: Logger;
  /** The agent name, which is also its mailbox. */
  readonly agent: string;
  /** project_dir of tasks that name none (bus messages from other gateways). */
  readonly defaultProjectDir: string;
  /** Executes one task; the queue runs one at a time. May reject (an internal failure). */
  readonly execute: (task: TaskInput, signal: AbortSignal) => Promise<TaskOutcome>;
  /** The result reported when the bus gave up on a task whose agent kept crashing. */
  readonly onGaveUp: (task: TaskInput, reason: string) => ResultDoc;
  /** Lease of a claimed task, extended every third of it while the task runs; default 60 s. */
  readonly leaseMs?: number;
  readonly retentionMs?: number;
}

interface Claimed {
  readonly task: TaskInput;
  readonly submission: string;
  /** The mailbox a bus sender (another gateway) gets the result in. */
  readonly replyTo?: string;
  /** The input waits in KV (too large to travel inline) and is dropped when the task finishes. */
  readonly hasStoredInput?: boolean;
}

/**
 * One agent's task queue, kept in its bus mailbox: tasks are executed one at a time in FIFO order
 * while the lease is extended; a crashed execution is nacked (retry with backoff) and, once the bus's
 * attempts are used up (dead letter + escalation), reported through `onGaveUp` — never lost. Records
 * in KV serve `get_result`. Messages of other types sent to the mailbox by other gateways run as tasks
 * too, their result going back to the sender's mailbox as a `result` message (spec yadon.md 4.6).
 */
export class TaskQueue {
  readonly #o: TaskQueueOptions;
  readonly #log: Logger;
  readonly #records: TaskRecords;
  readonly #waiters = new Map<string, (doc: ResultDoc | ErrorDoc) => void>();
  readonly #stop = new AbortController();
  #current: string | null = null;
  /** Crashed tasks waiting for their nack's outcome, by delivery id. */
  readonly #crashed = new Map<string, { readonly claimed: Claimed; readonly reason: string }>();
  #loop: Promise<void> | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: TaskQueueOptions) {
    this.#o = options;
    this.#log = options.logger.child({ agentId: options.agent });
    this.#records = new TaskRecords({
      kv: options.bus.kv,
      clock: options.clock,
      logger: this.#log,
      agent: options.agent,
    });
  }

  /** Applies the restart rules to earlier records, then starts consuming the mailbox. */
  async start(): Promise<void> {
    const recovered = await this.#records.recover(this.#o.retentionMs ?? DEFAULT_RETENTION_MS);
    if (recovered.interrupted > 0) this.#log.warn(recovered, 'tasks interrupted by a restart');
    this.#loop ??= this.#run();
  }

  /** The id of the task being executed, or null when idle. */
  currentTask(): string | null {
    return this.#current;
  }

  /** Where task `taskId` stands. */
  async lookup(taskId: string): Promise<TaskLookup> {
    const record = await this.#records.get(taskId);
    if (record === null) return { kind: 'unknown' };
    if (record.state === 'interrupted') return { kind: 'interrupted' };
    if (record.state === 'done' && record.result !== undefined) return { kind: 'done', doc: record.result };
    return { kind: 'state', state: record.state === 'queued' ? 'queued' : 'running' };
  }

  /** Queues a task; resolves once it is stored, with a promise of its reply document. */
  async submit(task: TaskInput): Promise<{ readonly reply: Promise<ResultDoc | ErrorDoc> }> {
    const submission = this.#o.ids.next();
    const reply = new Promise<ResultDoc | ErrorDoc>((resolve) => this.#waiters.set(submission, resolve));
    const input = { id: task.id, instruction: task.instruction, projectDir: task.projectDir };
    const { body, isInputInline } = encodeTaskMessage(input);
    try {
      await this.#records.enqueue(submission, input, { isInputInline });
      await this.#o.bus.send({
        id: submission,
        to: this.#o.agent,
        from: SOCKET_SENDER,
        type: SOCKET_TASK_TYPE,
        body,
      });
    } catch (err) {
      this.#waiters.delete(submission);
      throw err;
    }
    return { reply };
  }

  /** Stops consuming, aborts the running task (left for the restart rules) and answers pending waiters. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#stop.abort(new Error('yadon agent stopping'));
      await this.#loop;
      const stopping = errorDoc(this.#o.agent, `${CONNECTION_ERROR_PREFIX}agent host stopping`);
      for (const resolve of this.#waiters.values()) resolve(stopping);
      this.#waiters.clear();
    })();
    return this.#closing;
  }

  async #run(): Promise<void> {
    await this.#o.bus
      .consume(this.#o.agent, (delivery, { signal }) => this.#handle(delivery, signal), {
        signal: this.#stop.signal,
        leaseMs: this.#leaseMs(),
        onSettled: (delivery, settlement) => this.#afterSettled(delivery, settlement),
      })
      .catch((err: unknown) => {
        if (!isMusubiError(err, 'BUS_CLOSED')) throw err;
      });
  }

  #leaseMs(): number {
    return this.#o.leaseMs ?? DEFAULT_LEASE_MS;
  }

  /** The task a delivery carries, or null when it must not run (finished, or cleared by a restart). */
  async #claimed(delivery: Delivery): Promise<Claimed | null> {
    const envelope = delivery.envelope;
    if (envelope.type === SOCKET_TASK_TYPE) {
      // Runs only while its record still says queued/running for this very submission: a restart
      // marks it interrupted, and a newer submission of the same id replaces it.
      const body = decodeTaskMessage(envelope.body);
      const record = body === undefined ? null : await this.#records.get(body.taskId);
      if (record?.submission !== envelope.id || (record.state !== 'queued' && record.state !== 'running'))
        return null;
      const input = body?.input ?? (await this.#records.input(envelope.id));
      if (input === null || input === undefined) return null;
      return { task: input, submission: envelope.id, hasStoredInput: body?.input === undefined };
    }
    const task = yadonTaskOf(envelope, this.#o.defaultProjectDir);
    if (task === null) return null; // a reply addressed to this agent is not a task
    const record = await this.#records.get(envelope.id);
    if (
      record !== null &&
      record.submission === envelope.id &&
      (record.state === 'done' || record.state === 'interrupted')
    ) {
      return null;
    }
    return { task, submission: envelope.id, replyTo: envelope.from };
  }

  async #handle(delivery: Delivery, signal: AbortSignal): Promise<ConsumeVerdict> {
    const claimed = await this.#claimed(delivery);
    if (claimed === null) {
      this.#log.info({ messageId: delivery.envelope.id }, 'skipping a message with no task to run');
      return { kind: 'ack' };
    }
    const { task, submission } = claimed;
    const now = this.#o.clock.now();
    await this.#records.update(
      task.id,
      submission,
      (r) => ({ ...r, state: 'running', startedAt: now }),
      () => ({
        id: task.id,
        agent: this.#o.agent,
        submission,
        state: 'running',
        createdAt: now,
        startedAt: now,
      }),
    );
    this.#current = task.id;
    let outcome: TaskOutcome;
    try {
      outcome = await this.#o.execute(task, signal);
    } catch (err) {
      this.#log.error({ err, taskId: task.id }, 'task execution failed');
      const detail = err instanceof Error ? err.message : String(err);
      outcome = { kind: 'done', doc: errorDoc(this.#o.agent, `${CONNECTION_ERROR_PREFIX}${detail}`) };
    } finally {
      this.#current = null;
    }
    // The host is stopping (or the lease was lost): the restart rules apply.
    if (outcome.kind === 'canceled') return { kind: 'abandon' };
    if (outcome.kind === 'crashed') {
      this.#crashed.set(delivery.deliveryId, { claimed, reason: outcome.reason });
      return { kind: 'nack', reason: outcome.reason };
    }
    await this.#finish(claimed, outcome.doc);
    return { kind: 'ack' };
  }

  /** After a crashed task's nack: queued again for its retry, or reported as given up. */
  async #afterSettled(delivery: Delivery, settlement: Settlement): Promise<void> {
    const crash = this.#crashed.get(delivery.deliveryId);
    this.#crashed.delete(delivery.deliveryId);
    if (crash === undefined || settlement.kind !== 'nacked') return;
    const { claimed, reason } = crash;
    const { task, submission } = claimed;
    const { outcome } = settlement.outcome;
    this.#log.warn({ taskId: task.id, reason, outcome }, 'agent crashed during a task');
    if (outcome === 'retry') {
      await this.#records.update(task.id, submission, (r) => ({ ...r, state: 'queued' }));
      return;
    }
    await this.#finish(claimed, this.#o.onGaveUp(task, reason));
  }

  async #finish(claimed: Claimed, doc: ResultDoc | ErrorDoc): Promise<void> {
    const { task, submission } = claimed;
    const now = this.#o.clock.now();
    await this.#records.update(task.id, submission, (r) => ({
      ...r,
      state: 'done',
      finishedAt: now,
      result: { ...doc },
    }));
    // The record is stored: the sender can have its reply before the input is cleaned up.
    this.#waiters.get(submission)?.(doc);
    this.#waiters.delete(submission);
    if (claimed.hasStoredInput === true) await this.#records.dropInput(submission);
    if (claimed.replyTo === undefined) return;
    await this.#o.bus
      .send(
        yadonResultEnvelope({ agent: this.#o.agent, to: claimed.replyTo, taskMessageId: submission, doc }),
      )
      .catch((err: unknown) => this.#log.error({ err, taskId: task.id }, 'could not send the result back'));
  }
}
