import { isAbsolute, resolve } from 'node:path';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { errorDoc } from './result-doc.js';
import { CONNECTION_ERROR_PREFIX, type AgentRequest } from './agent-request.js';
import { generateTaskId } from './task-id.js';
import { cancelledDoc, type TaskQueue } from './task-queue.js';

/** A reply document as written to the socket. */
export type ReplyDoc = Readonly<Record<string, unknown>>;

/** Collaborators of {@link AgentEndpoint}. */
export interface AgentEndpointOptions {
  /** The agent's name (`yadoran`, `yadon-<n>`): `from` of every reply. */
  readonly name: string;
  readonly queue: TaskQueue;
  /** The default project directory (the host's work_dir). */
  readonly workDir: string;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The manager's `workers` map for its status reply; absent for workers. */
  readonly probeWorkers?: () => Promise<Record<string, string>>;
  /** Source of the 4 hex digits of generated ids (tests). */
  readonly randomHex?: () => string;
}

const MAX_ID_DRAWS = 32;

/**
 * Answers one agent's parsed requests (spec yadon.md 3): a `task` is queued and answered with its
 * result when it finishes; `status` and `get_result` are answered at once, also while a task runs.
 * Never rejects: an internal failure becomes the `接続処理エラー:` reply.
 */
export class AgentEndpoint {
  readonly name: string;
  readonly #o: AgentEndpointOptions;

  constructor(options: AgentEndpointOptions) {
    this.name = options.name;
    this.#o = options;
  }

  /** The reply to one request. */
  async handle(request: AgentRequest): Promise<ReplyDoc> {
    try {
      switch (request.kind) {
        case 'status':
          return await this.#status();
        case 'get_result':
          return await this.#getResult(request.id);
        case 'task':
          return await this.#task(request);
      }
    } catch (err) {
      this.#o.logger.error({ err, agentId: this.name }, 'request failed');
      const detail = err instanceof Error ? err.message : String(err);
      return errorDoc(this.name, `${CONNECTION_ERROR_PREFIX}${detail}`);
    }
  }

  async #status(): Promise<ReplyDoc> {
    const current = this.#o.queue.currentTask();
    const reply = {
      type: 'status_response',
      from: this.name,
      state: current === null ? 'idle' : 'busy',
      current_task: current,
    };
    if (this.#o.probeWorkers === undefined) return reply;
    return { ...reply, workers: await this.#o.probeWorkers() };
  }

  async #getResult(id: string): Promise<ReplyDoc> {
    const found = await this.#o.queue.lookup(id);
    switch (found.kind) {
      case 'done':
        return found.doc;
      case 'state':
        return { type: 'task_state', from: this.name, id, state: found.state };
      case 'interrupted':
        return errorDoc(this.name, `タスクは再起動により中断されました: ${id}`);
      case 'cancelled':
        return cancelledDoc(this.name, id);
      case 'unknown':
        return errorDoc(this.name, `不明なタスクID: ${id}`);
    }
  }

  /** A fresh `task-YYYYMMDD-HHMMSS-xxxx` id that the store does not know yet. */
  async #newTaskId(): Promise<string> {
    let id = generateTaskId(this.#o.clock.now(), this.#o.randomHex);
    for (let i = 0; i < MAX_ID_DRAWS && (await this.#o.queue.lookup(id)).kind !== 'unknown'; i++) {
      id = generateTaskId(this.#o.clock.now(), this.#o.randomHex);
    }
    return id;
  }

  async #task(request: Extract<AgentRequest, { kind: 'task' }>): Promise<ReplyDoc> {
    const id = request.id ?? (await this.#newTaskId());
    const dir = request.projectDir;
    const projectDir =
      dir === undefined ? this.#o.workDir : isAbsolute(dir) ? dir : resolve(this.#o.workDir, dir);
    const { reply } = await this.#o.queue.submit({ id, instruction: request.instruction, projectDir });
    return reply;
  }
}
