import type { KvState } from '../../bus/bus.types.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { TaskRecord } from '../../tasks/task-record.js';
import type { CancelOutcome, TaskRegistry } from '../../tasks/task-registry.js';
import { analyzeTurn } from './analyze-turn.js';
import type { Channel, ChannelAvailability, ChannelGroup } from './channel.js';
import { ENDPOINT_NOT_CONFIGURED, type Gate } from './control-state.js';
import { Dispatcher, type DispatchPlan } from './dispatcher.js';
import { isDuplicateTask } from './duplicate-check.js';
import { FlagControl } from './flag-control.js';
import { restoreIntent, type RestoreProbeTimings } from './intent-restore.js';
import type { LlmSettings } from './llm-call.js';
import { hasDeterministicSignal, pluginDirectPlan, type PluginDirectCall } from './plugin-direct.js';
import { SessionMemory } from './session-memory.js';
import { applyTaskChange } from './task-change-effects.js';
import type { ResultReport } from './task-execution.js';
import { admitTurn, type AnalyzeInput } from './turn-intake.js';
import { SerialQueue } from '../../core/serial-queue.js';

/** Prefix of the notification sent when the background analysis throws. */
export const ANALYSIS_CRASHED_PREFIX = '💥 Agent后台任务异常: ';

/** Where the executor reports what main must hear about; implemented by the N.E.K.O. gateway. */
export interface ExecutorEvents {
  /** A task changed: created, started, progress, deferred-completed or terminal (not deletions). */
  taskChanged(task: TaskRecord): void;
  /** A task finished with a result to deliver (not silent, not deferred); exactly once per task. */
  taskResult(task: TaskRecord, report: ResultReport): void;
  notification(sessionKey: string | null, text: string): void;
  /** Flags, master, capabilities or the registry changed: main should get a fresh snapshot. */
  stateChanged(): void;
}

/** Collaborators and settings of {@link ExecutorTeam}. */
export interface ExecutorTeamOptions {
  readonly registry: TaskRegistry;
  readonly kv: KvState;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Channels in priority order (the first `can_execute` channel wins). */
  readonly channels: readonly Channel[];
  /** The assessor LLM; null = the gate is not ready. */
  readonly llm: LlmSettings | null;
  readonly events: ExecutorEvents;
  /** Owner name of this executor's tasks and KV prefix (`executor/<owner>/`). Default `neko`. */
  readonly owner?: string;
  readonly isProactiveEnabled?: boolean;
  /** Restore persisted intent on the first restore signal (env NEKO_DISABLE_AGENT_AUTO_RESTORE=1 → false). */
  readonly isAutoRestoreEnabled?: boolean;
  readonly restoreProbes?: RestoreProbeTimings;
}

/**
 * The executor team (N.E.K.O.'s pattern): a finished turn is admitted (fingerprints, proactive budget,
 * pre-gate), assessed under ONE lock for the whole server, dispatched to a channel and tracked in the
 * shared task registry. Gateway-agnostic: it reports through {@link ExecutorEvents}.
 *
 * `start()` loads persisted state and applies the restart rules (their task changes are reported, so
 * start it once the wire is up); `stop()` aborts runs and waits at most 10 s; the registry is the
 * caller's to close.
 */
export class ExecutorTeam {
  readonly owner: string;
  readonly flags: FlagControl;
  readonly #o: ExecutorTeamOptions;
  readonly #sessions: SessionMemory;
  readonly #dispatcher: Dispatcher;
  readonly #unsubscribe: () => void;
  #channels: readonly Channel[];
  #llm: LlmSettings | null;
  readonly #stop = new AbortController();
  readonly #lock = new SerialQueue();
  #hasRestored = false;
  #isReady = false;

  constructor(options: ExecutorTeamOptions) {
    this.#o = options;
    this.owner = options.owner ?? 'neko';
    this.#channels = options.channels;
    this.#llm = options.llm;
    const log = options.logger.child({ component: 'team.executor' });
    const prefix = `executor/${this.owner}/`;
    this.#sessions = new SessionMemory({
      kv: options.kv,
      clock: options.clock,
      logger: log,
      prefix: `${prefix}sessions/`,
    });
    this.flags = new FlagControl({
      kv: options.kv,
      key: `${prefix}state`,
      clock: options.clock,
      logger: log,
      gate: () => this.gate(),
      channelCount: (group) => this.#channels.filter((c) => c.group === group).length,
      probe: (group) => this.availability(group),
      onChange: () => options.events.stateChanged(),
      onMasterOff: () => this.endAll(),
      onGroupOff: (group) =>
        void this.#dispatcher.drainGroup(group).catch((err: unknown) => log.warn({ err }, 'drain failed')),
    });
    this.#dispatcher = new Dispatcher({
      registry: options.registry,
      owner: this.owner,
      logger: log,
      isGroupEnabled: (group) => this.flags.isGroupEnabled(group),
      isDuplicate: (plan, active) => this.#isDuplicate(plan, active),
      onResult: (task, report) => options.events.taskResult(task, report),
    });
    this.#unsubscribe = options.registry.onChange((change) => {
      if (change.task.owner !== this.owner) return;
      applyTaskChange(change, {
        sessions: this.#sessions,
        channels: this.#channels,
        clock: options.clock,
        logger: log,
      });
      if (change.reason !== 'deleted' && change.reason !== 'deferred')
        options.events.taskChanged(change.task);
    });
  }

  /** True once `start()` finished (HTTP answers 503 before). */
  get isReady(): boolean {
    return this.#isReady;
  }

  /** The channels in priority order. */
  get channels(): readonly Channel[] {
    return this.#channels;
  }

  /** Loads flags, intent and session memory, then fails interrupted tasks (`Interrupted by restart`). */
  async start(): Promise<void> {
    await this.flags.load();
    await this.#sessions.load();
    await this.#o.registry.recover({ owner: this.owner });
    this.#isReady = true;
  }

  /** Forgets persisted flags, intent, sessions and this executor's tasks (`serve --fresh`). Call before start. */
  async reset(): Promise<void> {
    await this.#o.kv.kvDelete(`executor/${this.owner}/state`);
    await this.#sessions.clear();
    await this.#o.registry.clear({ owner: this.owner });
  }

  /** The gate: ready when an assessor LLM is configured. */
  gate(): Gate {
    return this.#llm === null
      ? { ready: false, reasons: [ENDPOINT_NOT_CONFIGURED] }
      : { ready: true, reasons: [] };
  }

  /** Probes every channel of `group`; ready when any is ready (no channel: not ready). Never rejects. */
  async availability(group: ChannelGroup): Promise<ChannelAvailability> {
    const channels = this.#channels.filter((c) => c.group === group);
    if (channels.length === 0) return { ready: false, reasons: ['no channel configured'] };
    const results = await Promise.all(channels.map((c) => this.probeChannel(c)));
    return results.some((r) => r.ready)
      ? { ready: true, reasons: [] }
      : { ready: false, reasons: results.flatMap((r) => r.reasons) };
  }

  /** One channel's availability; a throwing probe counts as not ready. */
  probeChannel(channel: Channel): Promise<ChannelAvailability> {
    return channel.isAvailable().catch((err: unknown) => ({
      ready: false,
      reasons: [err instanceof Error ? err.message : String(err)],
    }));
  }

  /**
   * Steps 2–6 of spec neko.md 4.1 (the ack is the gateway's). Never rejects: an unexpected error becomes
   * a `💥 Agent后台任务异常` notification. Resolves the created task, or null.
   */
  async analyze(input: AnalyzeInput): Promise<TaskRecord | null> {
    try {
      if (!this.flags.state.analyzerEnabled || this.#stop.signal.aborted) return null;
      const verdict = admitTurn(input, this.#sessions, {
        isProactiveEnabled: this.#o.isProactiveEnabled !== false,
        hasDeterministicSignal: (text) =>
          hasDeterministicSignal(this.#channels, this.flags.isGroupEnabled('user_plugin'), text),
      });
      if (!verdict.go) return null;
      return await this.#locked(() =>
        analyzeTurn(
          {
            flags: this.flags,
            channels: this.#channels,
            llm: this.#llm,
            sessions: this.#sessions,
            clock: this.#o.clock,
            dispatch: (plan) => this.#dispatcher.dispatch(plan),
            notify: (session, text) => this.#o.events.notification(session, text),
            signal: this.#stop.signal,
          },
          input,
          verdict,
        ),
      );
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.#o.events.notification(input.sessionKey, ANALYSIS_CRASHED_PREFIX + message);
      return null;
    }
  }

  /** `agent_intent_restore_signal`: resets the proactive budget on a new session; the first one restores intent. */
  async restoreSignal(sessionKey: string, isNewSession: boolean): Promise<void> {
    if (isNewSession) this.#sessions.update(sessionKey, (s) => ({ ...s, proactiveCount: 0 }));
    if (this.#hasRestored) return;
    this.#hasRestored = true;
    if (this.#o.isAutoRestoreEnabled === false) return;
    await restoreIntent(this.flags, {
      clock: this.#o.clock,
      probe: (group) => this.availability(group),
      ...(this.#o.restoreProbes !== undefined && { timings: this.#o.restoreProbes }),
    });
  }

  /** Cancels one of this executor's tasks (spec 4.4); other owners' tasks count as not found. */
  async cancel(id: string): Promise<CancelOutcome> {
    const task = await this.#o.registry.get(id);
    if (task?.owner !== this.owner) return { outcome: 'not_found' };
    return this.#o.registry.cancel(id);
  }

  /**
   * end_all (spec 4.4): cancel and report every active task first, then wait for runs (at most 10 s),
   * cancel again whatever slipped through, clear this executor's registry rows, fingerprints, proactive
   * counters and queues.
   */
  async endAll(): Promise<void> {
    const ended = await this.#o.registry.endAll({ owner: this.owner });
    await this.#dispatcher.endAll();
    await this.#o.registry.endAll({ owner: this.owner });
    await this.#o.registry.clear({ owner: this.owner });
    this.#sessions.resetTurns();
    if (ended.length > 0) this.#o.events.stateChanged();
  }

  /** Creates and starts a `plugin_direct` task (no duplicate check). The caller checked the switches. */
  async executePlugin(call: PluginDirectCall): Promise<TaskRecord | null> {
    const plan = pluginDirectPlan(this.#channels, call);
    return plan === null ? null : this.#dispatcher.dispatch(plan);
  }

  /**
   * Creates and starts a task its caller planned instead of the assessment (a bus message addressed to
   * a channel: gateways/neko/bus-intake.ts). Resolves null when the master switch or the channel's group
   * is off, or the duplicate check of an exclusive channel skipped it.
   */
  async dispatch(plan: DispatchPlan): Promise<TaskRecord | null> {
    if (!this.flags.state.analyzerEnabled || !this.flags.isGroupEnabled(plan.channel.group)) return null;
    return this.#dispatcher.dispatch(plan);
  }

  /** Switches channels and assessor after a configuration change and re-probes enabled groups. */
  reconfigure(update: { readonly channels?: readonly Channel[]; readonly llm?: LlmSettings | null }): void {
    if (update.channels !== undefined) this.#channels = update.channels;
    if (update.llm !== undefined) this.#llm = update.llm;
    this.flags.reprobe();
  }

  /** Active (queued or running) tasks of this executor, in creation order. */
  activeTasks(): Promise<TaskRecord[]> {
    return this.#o.registry.list({ owner: this.owner, states: ['queued', 'running'] });
  }

  /** Aborts runs (waiting at most 10 s) and flushes state writes. Idempotent; the registry stays open. */
  async stop(): Promise<void> {
    this.#stop.abort(new Error('executor stopping'));
    this.#unsubscribe();
    await this.#lock.idle();
    await this.#dispatcher.stop();
    await Promise.all([this.flags.flush(), this.#sessions.flush()]);
  }

  #locked<T>(work: () => Promise<T>): Promise<T> {
    return this.#lock.run(work);
  }

  async #isDuplicate(plan: DispatchPlan, active: readonly TaskRecord[]): Promise<boolean> {
    if (this.#llm === null) return false;
    const summaries = active.map((t) => ({ id: t.id, description: t.description ?? '' }));
    return isDuplicateTask(this.#llm, plan.task.instruction, summaries, this.#stop.signal);
  }
}
