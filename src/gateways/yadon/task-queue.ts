import type { Bus, ConsumeVerdict, Settlement } from '../../bus/bus.types.js';
import type { Clock } from '../../core/clock.js';
import { isMusubiError } from '../../core/errors.js';
import type { IdGenerator } from '../../core/ids.js';
import type { Logger } from '../../core/logger.js';
import type { Delivery } from '../../store/store.js';
import { errorDoc, type ErrorDoc, type ResultDoc, type TaskInput, type TaskOutcome } from './result-doc.js';
import { yadonResultEnvelope, yadonTaskOf } from '../bridging/index.js';
import { CONNECTION_ERROR_PREFIX } from './agent-request.js';
import { AgentPresence, type YadonAgentDirectory } from './agent-presence.js';
import { TaskLedger, type Admission, type TaskLookup, type YadonTaskRegistry } from './task-ledger.js';
import { decodeTaskMessage, encodeTaskMessage, SOCKET_TASK_TYPE } from './task-message.js';
import { DEFAULT_RETENTION_MS } from './task-records.js';

export type { TaskLookup } from './task-ledger.js';

/** The sender name of socket submissions on the bus. */
const SOCKET_SENDER = 'yadon-socket';
const DEFAULT_LEASE_MS = 60_000;

/** The reply to a task cancelled through the task registry, and `get_result`'s answer for it. */
export function cancelledDoc(agent: string, taskId: string): ErrorDoc {
  return errorDoc(agent, `タスクはキャンセルされました: ${taskId}`);
}

/** Collaborators and settings of {@link TaskQueue}. */
export interface TaskQueueOptions {
  readonly bus: Bus;
  /** Where every task of this agent is tracked, and cancelled from (the hub's one registry). */
  readonly registry: YadonTaskRegistry;
  /** Where this agent is listed for the dashboard and the other gateways. */
  readonly directory: YadonAgentDirectory;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly logger: Logger;
  /** The agent name, which is also its mailbox. */
  readonly agent: string;
  /** `manager`: its tasks are jobs, and cancelling one cancels its subtasks; `worker`: subtasks. */
  readonly role: 'manager' | 'worker';
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
 * attempts are used up (dead letter + escalation), reported through `onGaveUp` — never lost. Every
 * task is a task registry row ({@link TaskLedger}); cancelling the row (the dashboard, from any
 * process on the store) stops the running turn, and the sender gets the cancelled error. The agent is
 * listed in the agent directory while the queue runs. Messages of other types sent to the mailbox by
 * other gateways run as tasks too, their result going back to the sender's mailbox as a `result`
 * message (spec yadon.md 4.6).
 */
export class TaskQueue {
  readonly #o: TaskQueueOptions;
  readonly #log: Logger;
  readonly #ledger: TaskLedger;
  readonly #presence: AgentPresence;
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
    this.#ledger = new TaskLedger({
      registry: options.registry,
      kv: options.bus.kv,
      clock: options.clock,
      logger: this.#log,
      agent: options.agent,
      kind: options.role === 'manager' ? 'job' : 'subtask',
    });
    this.#presence = new AgentPresence({
      directory: options.directory,
      agent: options.agent,
      role: options.role,
      logger: this.#log,
    });
  }

  /** Applies the restart rules to earlier tasks, lists the agent as idle, then consumes the mailbox. */
  async start(): Promise<void> {
    const recovered = await this.#ledger.recover(this.#o.retentionMs ?? DEFAULT_RETENTION_MS);
    if (recovered.interrupted > 0) this.#log.warn(recovered, 'tasks interrupted by a restart');
    this.#presence.ready();
    this.#loop ??= this.#run();
  }

  /** The id of the task being executed, or null when idle. */
  currentTask(): string | null {
    return this.#current;
  }

  /** Where task `taskId` stands. */
  lookup(taskId: string): Promise<TaskLookup> {
    return this.#ledger.lookup(taskId);
  }

  /** Queues a task; resolves once it is stored, with a promise of its reply document. */
  async submit(task: TaskInput): Promise<{ readonly reply: Promise<ResultDoc | ErrorDoc> }> {
    const submission = this.#o.ids.next();
    const reply = new Promise<ResultDoc | ErrorDoc>((resolve) => this.#waiters.set(submission, resolve));
    const input = { id: task.id, instruction: task.instruction, projectDir: task.projectDir };
    const { body, isInputInline } = encodeTaskMessage(input);
    try {
      await this.#ledger.enqueue(submission, input, { isInputInline });
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

  /**
   * Stops consuming, aborts the running task, answers pending waiters and, if it started, marks what is
   * still queued or running as interrupted (the restart rules) and lists the agent as offline.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#stop.abort(new Error('yadon agent stopping'));
      await this.#loop;
      const stopping = errorDoc(this.#o.agent, `${CONNECTION_ERROR_PREFIX}agent host stopping`);
      for (const resolve of this.#waiters.values()) resolve(stopping);
      this.#waiters.clear();
      // Never started (its sockets were refused): the tasks and listing belong to the live host.
      if (this.#loop === undefined) return;
      await this.#ledger
        .stopped()
        .catch((err: unknown) => this.#log.warn({ err }, 'unfinished tasks not marked interrupted'));
      await this.#presence.offline();
    })();
    return this.#closing;
  }

  async #run(): Promise<void> {
    await this.#o.bus
      .consume(this.#o.agent, (delivery, { signal }) => this.#handle(delivery, signal), {
        signal: this.#stop.signal,
        leaseMs: this.#o.leaseMs ?? DEFAULT_LEASE_MS,
        onSettled: (delivery, settlement) => this.#afterSettled(delivery, settlement),
      })
      .catch((err: unknown) => {
        if (!isMusubiError(err, 'BUS_CLOSED')) throw err;
      });
  }

  /** The task a delivery carries and what to do with it, or null when it carries none. */
  async #claimed(delivery: Delivery): Promise<{ claimed: Claimed; admission: Admission } | null> {
    const envelope = delivery.envelope;
    const submission = envelope.id;
    if (envelope.type === SOCKET_TASK_TYPE) {
      const body = decodeTaskMessage(envelope.body);
      if (body === undefined) return null;
      const named = { id: body.taskId, instruction: '', projectDir: this.#o.defaultProjectDir };
      const admission = await this.#ledger.admit(submission);
      const hasStoredInput = body.input === undefined;
      if (admission !== 'run') return { claimed: { task: named, submission, hasStoredInput }, admission };
      const input = body.input ?? (await this.#ledger.input(submission));
      if (input === null) return null;
      return { claimed: { task: input, submission, hasStoredInput }, admission };
    }
    const task = yadonTaskOf(envelope, this.#o.defaultProjectDir);
    if (task === null) return null; // a reply addressed to this agent is not a task
    const admission = await this.#ledger.admit(submission, task);
    return { claimed: { task, submission, replyTo: envelope.from }, admission };
  }

  async #handle(delivery: Delivery, signal: AbortSignal): Promise<ConsumeVerdict> {
    const found = await this.#claimed(delivery);
    if (found?.admission === 'cancelled') {
      await this.#settleCancelled(found.claimed);
      return { kind: 'ack' };
    }
    if (found?.admission !== 'run') {
      this.#log.info({ messageId: delivery.envelope.id }, 'skipping a message with no task to run');
      return { kind: 'ack' };
    }
    const { claimed } = found;
    const { outcome, isCancelled } = await this.#execute(claimed, signal);
    if (outcome.kind === 'done') {
      await this.#finish(claimed, outcome.doc);
      return { kind: 'ack' };
    }
    if (isCancelled && !this.#stop.signal.aborted) {
      await this.#settleCancelled(claimed);
      return { kind: 'ack' };
    }
    // The host is stopping (or the lease was lost): the restart rules apply.
    if (outcome.kind === 'canceled') return { kind: 'abandon' };
    this.#crashed.set(delivery.deliveryId, { claimed, reason: outcome.reason });
    return { kind: 'nack', reason: outcome.reason };
  }

  /** Runs one task as busy, stopping it when the consumer stops or its registry row ends. */
  async #execute(
    claimed: Claimed,
    signal: AbortSignal,
  ): Promise<{ outcome: TaskOutcome; isCancelled: boolean }> {
    const { task, submission } = claimed;
    await this.#ledger.start(submission);
    const watching = new AbortController();
    const ended = this.#ledger.watchEnd(submission, watching.signal);
    const run = new AbortController();
    const stopRun = (): void => run.abort(signal.aborted ? signal.reason : ended.reason);
    signal.addEventListener('abort', stopRun, { once: true });
    ended.addEventListener('abort', stopRun, { once: true });
    this.#current = task.id;
    this.#presence.busy(task.id);
    let outcome: TaskOutcome;
    try {
      outcome = await this.#o.execute(task, run.signal);
    } catch (err) {
      this.#log.error({ err, taskId: task.id }, 'task execution failed');
      const detail = err instanceof Error ? err.message : String(err);
      outcome = { kind: 'done', doc: errorDoc(this.#o.agent, `${CONNECTION_ERROR_PREFIX}${detail}`) };
    } finally {
      this.#current = null;
      this.#presence.idle();
      signal.removeEventListener('abort', stopRun);
      ended.removeEventListener('abort', stopRun);
      watching.abort('task over');
    }
    return { outcome, isCancelled: ended.aborted };
  }

  /** After a crashed task's nack: its row waits for the retry, or it is reported as given up. */
  async #afterSettled(delivery: Delivery, settlement: Settlement): Promise<void> {
    const crash = this.#crashed.get(delivery.deliveryId);
    this.#crashed.delete(delivery.deliveryId);
    if (crash === undefined || settlement.kind !== 'nacked') return;
    const { claimed, reason } = crash;
    const { outcome } = settlement.outcome;
    this.#log.warn({ taskId: claimed.task.id, reason, outcome }, 'agent crashed during a task');
    if (outcome === 'retry') {
      await this.#ledger.retrying(claimed.submission, reason);
      return;
    }
    await this.#finish(claimed, this.#o.onGaveUp(claimed.task, reason));
  }

  async #finish(claimed: Claimed, doc: ResultDoc | ErrorDoc): Promise<void> {
    const { task, submission } = claimed;
    const ended = await this.#ledger.finish(task.id, submission, doc);
    await this.#reply(claimed, ended === 'cancelled' ? cancelledDoc(this.#o.agent, task.id) : doc);
    await this.#ledger.sweep().catch((err: unknown) => this.#log.warn({ err }, 'ended tasks not cleaned up'));
  }

  /** A task cancelled in the registry: recorded, its subtasks cancelled too, the sender told. */
  async #settleCancelled(claimed: Claimed): Promise<void> {
    const { task, submission } = claimed;
    this.#log.info({ taskId: task.id }, 'task cancelled');
    await this.#ledger.cancelled(task.id, submission);
    if (this.#o.role === 'manager') {
      const subtasks = await this.#ledger.cancelSubtasks(task.id);
      if (subtasks > 0) this.#log.info({ taskId: task.id, subtasks }, 'subtasks of the job cancelled');
    }
    await this.#reply(claimed, cancelledDoc(this.#o.agent, task.id));
  }

  /** Hands `doc` to the socket sender or back to the bus sender; the task's record is stored already. */
  async #reply(claimed: Claimed, doc: ResultDoc | ErrorDoc): Promise<void> {
    const { task, submission } = claimed;
    this.#waiters.get(submission)?.(doc);
    this.#waiters.delete(submission);
    if (claimed.hasStoredInput === true) await this.#ledger.dropInput(submission);
    if (claimed.replyTo === undefined) return;
    await this.#o.bus
      .send(
        yadonResultEnvelope({ agent: this.#o.agent, to: claimed.replyTo, taskMessageId: submission, doc }),
      )
      .catch((err: unknown) => this.#log.error({ err, taskId: task.id }, 'could not send the result back'));
  }
}
