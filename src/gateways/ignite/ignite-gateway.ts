import { randomBytes } from 'node:crypto';
import { mkdir, readdir } from 'node:fs/promises';
import type { AgentRunner } from '../../agents/agent-runner.js';
import type { Bus } from '../../bus/bus.types.js';
import type { Clock, Timer } from '../../core/clock.js';
import { DEFAULT_MAX_ATTEMPTS } from '../../core/config.schema.js';
import { MusubiError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { Gateway, GatewayAddress } from '../gateway.js';
import { isMailboxName } from '../../core/names.js';
import { agentIndex, FIXED_AGENTS, isQueueAgentDir } from './agent-names.js';
import { AgentWorker } from './agent-worker.js';
import { IgnitePaths, isQueueFileName } from './ignite-paths.js';
import type { IgniteSettings } from './ignite-settings.js';
import { LeaderGate } from './leader-gate.js';
import type { MonitorContext, ProgressLine } from './monitor-context.js';
import { MonitorStatus, type QueueCounts } from './monitor-status.js';
import { ProgressDisplay } from './progress-display.js';
import { QueueDiscovery } from './queue-discovery.js';
import { moveNoReplace, readHeaders } from './queue-file-io.js';
import { QueueMirror } from './queue-mirror.js';
import { SlotPool } from './slot-pool.js';
import { acquireMonitorLock, type MonitorLock } from './state-locks.js';
import { reconcileAgent } from './startup-reconcile.js';

/** The message a second monitor on the same runtime dir logs before exiting 1 (spec 4.8). */
export const MONITOR_LOCKED_MESSAGE = 'queue_monitor は既に稼働中です（flock取得失敗）';

/** Collaborators and settings of {@link createIgniteGateway}. */
export interface IgniteGatewayOptions {
  readonly bus: Bus;
  readonly logger: Logger;
  readonly clock: Clock;
  /** The IGNITE workspace: agents' turns run here. */
  readonly workspace: string;
  /** The runtime dir (`<workspace>/.ignite` usually; see resolveRuntimeDir). */
  readonly runtimeDir: string;
  readonly settings: IgniteSettings;
  /** The runner of one agent (built by the hub from config; called once per agent and cached). */
  readonly runnerFor: (agent: string) => AgentRunner;
  /** Role instructions passed as each turn's system prompt (the org team's texts), if any. */
  readonly systemPromptFor?: (agent: string) => string | undefined;
  /** progress_update display lines; default: logged at info. */
  readonly onProgress?: (line: ProgressLine) => void;
  /** Called once if the monitor must give up (leader session missing past the grace period). */
  readonly onFatal?: (error: MusubiError) => void;
  /** `ignitian_1`..`ignitian_<workers>` folders created at start (besides the six fixed ones). */
  readonly workers?: number;
  /** The bus's `retry.maxAttempts` (config `bus.retry.maxAttempts`); default 3. */
  readonly busMaxAttempts?: number;
  /** Jitter source in [0, 1); default Math.random. */
  readonly random?: () => number;
  readonly pid?: number;
  /**
   * True when an agent is attached through another gateway (bridging/attachment.ts over the agent
   * directory): its files then go to its bus mailbox instead of an IGNITE turn. Default: never.
   */
  readonly isAttachedElsewhere?: (agent: string) => Promise<boolean>;
}

/** The IGNITE gateway: a Gateway plus reload and a status snapshot. */
export interface IgniteGateway extends Gateway {
  /** Applies new settings (SIGHUP): poll interval, parallelism, task timeout, health settings. */
  reload(settings: IgniteSettings): void;
  /** Queue counts per agent (pending in the root, in flight, retrying, delivered since start). */
  counts(): QueueCounts[];
}

/**
 * Creates IGNITE's queue monitor as a gateway (spec/ignite.md 4): file queues in, agent turns out, with
 * the bus underneath — every queued file is mirrored as an envelope in the recipient's mailbox and the
 * monitor's claims, leases, retries and dead letters are bus operations, while the files stay
 * authoritative for IGNITE's own tools. Bus messages other gateways send to an IGNITE agent are written
 * into its queue as MIME files. `start()` rejects with GATEWAY_UNAVAILABLE when another monitor holds
 * the runtime dir. `stop()` stops claiming, lets running turns finish, then releases everything.
 */
export function createIgniteGateway(options: IgniteGatewayOptions): IgniteGateway {
  const logger = options.logger.child({ component: 'gateway.ignite' });
  const paths = new IgnitePaths(options.runtimeDir);
  let settings = options.settings;
  const runners = new Map<string, AgentRunner>();
  const lanes = new Map<string, Promise<unknown>>();
  const moveBacks = new Map<string, Timer>();
  const workers = new Map<string, AgentWorker>();
  const slots = new SlotPool(settings.parallelMax);
  const progress = new ProgressDisplay({ maxChars: settings.progressMaxChars });
  let lock: MonitorLock | null = null;
  let stopping: Promise<void> | undefined;
  let isStarted = false;

  const ctx: MonitorContext = {
    bus: options.bus,
    mirror: new QueueMirror({ bus: options.bus }),
    paths,
    workspace: options.workspace,
    clock: options.clock,
    logger,
    pid: options.pid ?? process.pid,
    random: options.random ?? Math.random,
    busMaxAttempts: options.busMaxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    settings: () => settings,
    preciseNow: () => options.clock.now() + (performance.now() % 1),
    runnerFor: (agent) => {
      let runner = runners.get(agent);
      if (runner === undefined) runners.set(agent, (runner = options.runnerFor(agent)));
      return runner;
    },
    ...(options.systemPromptFor !== undefined && { systemPromptFor: options.systemPromptFor }),
    onProgress: options.onProgress ?? ((p) => logger.info({ agent: p.agent, final: p.isFinal }, p.line)),
    publish: (what, data) => {
      void options.bus
        .publish({ type: `gateway.ignite.${what}`, data })
        .catch((err: unknown) => logger.debug({ err }, 'event not published'));
    },
    markComplete: (agent, name) => discovery.markComplete(agent, name),
    isAttachedElsewhere: async (agent) =>
      (await options.isAttachedElsewhere?.(agent).catch((err: unknown) => {
        logger.warn({ agent, err }, 'cannot tell where the agent is attached; delivering here');
        return false;
      })) ?? false,
    lane: (agent, fn) => {
      const run = (lanes.get(agent) ?? Promise.resolve()).then(fn, fn);
      lanes.set(
        agent,
        run.catch(() => undefined),
      );
      return run;
    },
    scheduleMoveBack: (agent, name, atMs) => {
      const key = `${agent}/${name}`;
      moveBacks.get(key)?.cancel();
      moveBacks.set(
        key,
        options.clock.setTimer(
          () =>
            void moveBack(agent, name, key).catch((err: unknown) =>
              logger.error(
                { agent, file: name, err },
                'cannot move the retrying file back; left in processed/',
              ),
            ),
          Math.max(0, atMs - options.clock.now()),
        ),
      );
    },
  };

  const moveBack = (agent: string, name: string, key: string): Promise<unknown> =>
    ctx.lane(agent, async () => {
      moveBacks.delete(key);
      if (!isQueueFileName(name)) return; // never a path outside the agent's folders
      const from = `${paths.processed(agent)}/${name}`;
      const status = (await readHeaders(from).catch(() => null))?.get('X-IGNITE-Status');
      if (status !== 'retrying') return;
      if ((await moveNoReplace(from, `${paths.agentRoot(agent)}/${name}`)) === 'moved')
        discovery.markComplete(agent, name);
    });

  const gate = new LeaderGate({
    stateDir: paths.state,
    clock: options.clock,
    checkMs: settings.leaderGateCheckMs,
    graceMs: settings.missingSessionGraceMs,
    threshold: settings.missingSessionThreshold,
    onGiveUp: () => {
      const err = new MusubiError(
        'GATEWAY_UNAVAILABLE',
        'leader session (.agent_session_0) missing; queue monitor gives up',
      );
      logger.error(err.message);
      options.onFatal?.(err);
    },
  });

  const reconciled = new Set<string>();
  const reconcile = async (agent: string): Promise<void> => {
    if (reconciled.has(agent)) return;
    reconciled.add(agent);
    await reconcileAgent(ctx, agent).catch((err: unknown) =>
      logger.error({ agent, err }, 'start-up reconciliation failed'),
    );
  };
  const startWorker = (agent: string): void => {
    if (workers.has(agent) || stopping !== undefined) return;
    const worker = new AgentWorker({ ctx, agent, slots, gate, progress });
    workers.set(agent, worker);
    void reconcile(agent).then(() => {
      if (stopping === undefined) worker.start();
    });
  };
  const discovery = new QueueDiscovery({ ctx, onAgent: startWorker });

  const counts = (): QueueCounts[] =>
    [...workers.values()].map((w) => ({
      name: w.agent,
      pending: discovery.pendingCount(w.agent),
      processing: w.isBusy ? 1 : 0,
      retrying: [...moveBacks.keys()].filter((k) => k.startsWith(`${w.agent}/`)).length,
      delivered: w.delivered,
    }));
  const status = new MonitorStatus({
    ctx,
    resumeToken: randomBytes(8).toString('hex'),
    counts,
    agents: () =>
      [...workers.values()].map((w) => ({ name: w.agent, index: agentIndex(w.agent), busy: w.isBusy })),
  });

  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      discovery.close();
      gate.close();
      await Promise.all([...workers.values()].map((w) => w.stop()));
      for (const t of moveBacks.values()) t.cancel();
      await Promise.allSettled([...lanes.values()]);
      await status.close();
      await lock?.release();
      logger.info('ignite queue monitor stopped');
    })();
    return stopping;
  };

  return {
    name: 'ignite',
    async start(): Promise<void> {
      if (isStarted) throw new MusubiError('GATEWAY_UNAVAILABLE', 'ignite gateway already started');
      isStarted = true;
      const agents = [
        ...FIXED_AGENTS,
        ...Array.from({ length: options.workers ?? 0 }, (_, i) => `ignitian_${i + 1}`),
      ];
      for (const dir of [
        paths.state,
        paths.logs,
        paths.deadLetter,
        ...agents.map((a) => paths.agentRoot(a)),
      ]) {
        await mkdir(dir, { recursive: true, mode: 0o700 });
      }
      lock = await acquireMonitorLock(
        paths.runtimeDir,
        paths.stateFile('queue_monitor.lock'),
        paths.stateFile('queue_monitor.sock'),
      );
      if (lock === null)
        throw new MusubiError('GATEWAY_UNAVAILABLE', MONITOR_LOCKED_MESSAGE, {
          details: { runtimeDir: paths.runtimeDir },
        });
      await gate.start();
      // Live mirrors first, so the first scan does not mirror a queued file a second time.
      const dirs = await readdir(paths.queue, { withFileTypes: true });
      for (const d of dirs)
        if (d.isDirectory() && isQueueAgentDir(d.name) && isMailboxName(d.name)) await reconcile(d.name);
      await discovery.start();
      status.start();
      logger.info(
        { runtimeDir: paths.runtimeDir, agents: discovery.agents() },
        'ignite queue monitor started',
      );
    },
    address: (): GatewayAddress => ({ kind: 'dir', path: paths.queue }),
    stop,
    [Symbol.asyncDispose]: stop,
    reload(next: IgniteSettings): void {
      settings = next;
      slots.resize(next.parallelMax);
      logger.info(
        {
          pollIntervalMs: next.pollIntervalMs,
          parallelMax: next.parallelMax,
          taskTimeoutMs: next.taskTimeoutMs,
        },
        'settings reloaded',
      );
    },
    counts,
  };
}
