import type { TaskRecord } from '../../tasks/task-record.js';
import type { Channel, ChannelGroup, ChannelTask } from './channel.js';
import { executeTask, type ExecutionDeps } from './task-execution.js';
import { KeyedSerialQueue } from '../../core/serial-queue.js';

/** Runs ended by end_all or stop get this long to finish before the caller moves on. */
export const RUN_DRAIN_MS = 10_000;

/** What to create and run: one task on one channel. */
export interface DispatchPlan {
  readonly channel: Channel;
  /** The task `type` on the wire (`computer_use`, `plugin_direct`, ...). */
  readonly type: string;
  readonly params: Record<string, unknown>;
  readonly task: Omit<ChannelTask, 'id'>;
  readonly meta: Record<string, unknown>;
}

/** Collaborators of {@link Dispatcher}. */
export interface DispatcherOptions extends Omit<ExecutionDeps, 'stopSignal'> {
  readonly owner: string;
  readonly isGroupEnabled: (group: ChannelGroup) => boolean;
  /** The duplicate check of exclusive channels; resolves true for a duplicate. */
  readonly isDuplicate: (plan: DispatchPlan, active: readonly TaskRecord[]) => Promise<boolean>;
}

interface Queued {
  readonly taskId: string;
  readonly task: ChannelTask;
}

/**
 * Creates tasks and runs them by their channel's concurrency (spec neko.md 4.3): `exclusive` — duplicate
 * check, `queued`, one FIFO scheduler per channel that re-checks the group flag before each task;
 * `mutex` — `queued`, then one run at a time per channel with a re-check after the lock; `unlimited` —
 * `running` at once. Runs continue after `dispatch` resolves.
 */
export class Dispatcher {
  readonly #o: DispatcherOptions;
  readonly #stop = new AbortController();
  readonly #queues = new Map<string, Queued[]>();
  readonly #draining = new Set<string>();
  readonly #mutexes = new KeyedSerialQueue<string>();
  readonly #runs = new Set<Promise<void>>();

  constructor(options: DispatcherOptions) {
    this.#o = options;
  }

  /** Creates the task and starts or queues it; null when the duplicate check skipped it. */
  async dispatch(plan: DispatchPlan): Promise<TaskRecord | null> {
    const { channel } = plan;
    if (channel.concurrency === 'exclusive') {
      const active = await this.#o.registry.list({ owner: this.#o.owner, states: ['queued', 'running'] });
      const mine = active.filter((t) => t.session === plan.task.sessionKey);
      if (await this.#o.isDuplicate(plan, mine)) return null;
    }
    const record = await this.#o.registry.create({
      owner: this.#o.owner,
      kind: plan.type,
      state: channel.concurrency === 'unlimited' ? 'running' : 'queued',
      channel: channel.id,
      session: plan.task.sessionKey,
      title: plan.task.instruction.slice(0, 200),
      description: plan.task.instruction,
      params: plan.params,
      meta: plan.meta,
    });
    const task: ChannelTask = { ...plan.task, id: record.id };
    if (channel.concurrency === 'unlimited') this.#track(this.#execute(channel, task));
    else if (channel.concurrency === 'mutex') this.#track(this.#runUnderMutex(channel, task));
    else this.#enqueue(channel, { taskId: record.id, task });
    return record;
  }

  /** Cancels every queued task of the group's exclusive queues with `<group> disabled before dispatch`. */
  async drainGroup(group: ChannelGroup): Promise<void> {
    for (const [channelId, queue] of this.#queues) {
      if (queue.length === 0 || !this.#groupOf(channelId, group)) continue;
      const items = queue.splice(0);
      for (const item of items) {
        await this.#o.registry.cancel(item.taskId, { error: `${group} disabled before dispatch` });
      }
    }
  }

  /** Forgets every queued task (end_all cancels them in the registry) and waits for runs, at most 10 s. */
  async endAll(): Promise<void> {
    for (const queue of this.#queues.values()) queue.splice(0);
    await this.#settleRuns();
  }

  /** Aborts every run and waits for them (at most 10 s). Idempotent. */
  async stop(): Promise<void> {
    this.#stop.abort(new Error('executor stopping'));
    for (const queue of this.#queues.values()) queue.splice(0);
    await this.#settleRuns();
  }

  readonly #channelGroups = new Map<string, ChannelGroup>();

  #groupOf(channelId: string, group: ChannelGroup): boolean {
    return this.#channelGroups.get(channelId) === group;
  }

  #enqueue(channel: Channel, item: Queued): void {
    this.#channelGroups.set(channel.id, channel.group);
    const queue = this.#queues.get(channel.id) ?? [];
    this.#queues.set(channel.id, queue);
    queue.push(item);
    if (!this.#draining.has(channel.id)) this.#track(this.#schedule(channel, queue));
  }

  /** The one scheduler of an exclusive channel: strictly one task after another. */
  async #schedule(channel: Channel, queue: Queued[]): Promise<void> {
    this.#draining.add(channel.id);
    try {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
        if (this.#stop.signal.aborted) return;
        if (!this.#o.isGroupEnabled(channel.group)) {
          queue.unshift(item);
          await this.drainGroup(channel.group);
          return;
        }
        if ((await this.#o.registry.start(item.taskId)) === null) continue; // cancelled while queued
        await this.#execute(channel, item.task);
      }
    } finally {
      this.#draining.delete(channel.id);
    }
  }

  #runUnderMutex(channel: Channel, task: ChannelTask): Promise<void> {
    return this.#mutexes.run(channel.id, () => this.#dispatchOne(channel, task));
  }

  async #dispatchOne(channel: Channel, task: ChannelTask): Promise<void> {
    if (this.#stop.signal.aborted) return;
    const current = await this.#o.registry.get(task.id);
    const isUsable =
      current?.state === 'queued' &&
      this.#o.isGroupEnabled(channel.group) &&
      (await channel.isAvailable()).ready;
    if (!isUsable) {
      await this.#o.registry.cancel(task.id, { error: `${channel.group} unavailable before dispatch` });
      return;
    }
    if ((await this.#o.registry.start(task.id)) === null) return;
    await this.#execute(channel, task);
  }

  #execute(channel: Channel, task: ChannelTask): Promise<void> {
    return executeTask({ ...this.#o, stopSignal: this.#stop.signal }, channel, task).catch((err: unknown) =>
      this.#o.logger.error({ err, taskId: task.id }, 'task execution failed'),
    );
  }

  #track(run: Promise<void>): void {
    const tracked = run
      .catch((err: unknown) => this.#o.logger.error({ err }, 'dispatch run failed'))
      .finally(() => this.#runs.delete(tracked));
    this.#runs.add(tracked);
  }

  async #settleRuns(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, RUN_DRAIN_MS);
      timer.unref();
    });
    await Promise.race([Promise.allSettled([...this.#runs]), timeout]);
    clearTimeout(timer);
  }
}
