import { join } from 'node:path';
import type { AgentRunner } from '../../agents/agent-runner.js';
import type { Bus } from '../../bus/bus.types.js';
import type { Clock } from '../../core/clock.js';
import { MusubiError } from '../../core/errors.js';
import type { IdGenerator } from '../../core/ids.js';
import type { Logger } from '../../core/logger.js';
import type { ThreePhaseTeamFactory } from '../../teams/three-phase/three-phase-team.js';
import type { Bubble } from './bubble-text.js';
import type { Gateway, GatewayAddress } from '../gateway.js';
import { AgentEndpoint } from './agent-endpoint.js';
import type { YadonAgentDirectory } from './agent-presence.js';
import type { AgentRequest } from './agent-request.js';
import { AgentSocketServer } from './agent-socket-server.js';
import { writeInstructionFiles } from './instruction-files.js';
import { PetSocketServer } from './pet-socket-server.js';
import { ensureSocketDir } from './socket-dir.js';
import { createSocketSubtaskDispatcher, type DispatchTimings } from './socket-subtask-dispatcher.js';
import type { YadonTaskRegistry } from './task-ledger.js';
import { TaskQueue, type TaskQueueOptions } from './task-queue.js';
import { probeWorkers } from './worker-probe.js';
import { gaveUpResult, yadonManagerExecute, yadonWorkerExecute } from './yadon-team.js';
import { agentSocketPath, MANAGER_NAME, petSocketPath, workerName } from './yadon-paths.js';

/** Timings and limits; every default is the spec's (yadon.md 2.3 and 2.5). Tests shorten them. */
export interface YadonTimings {
  readonly workerLlmMs?: number;
  readonly decompositionMs?: number;
  readonly requestInactivityMs?: number;
  readonly maxRequestBytes?: number;
  readonly statusProbeMs?: number;
  readonly dispatch?: DispatchTimings;
}

/** Collaborators and settings of {@link createYadonGateway}. */
export interface YadonGatewayOptions {
  readonly bus: Bus;
  /**
   * The task registry every yadon task is a row of (owner `yadon`, one per submission): shown by the
   * dashboard and `/api/tasks`, and cancelling a row stops its agent turn, also from another process
   * on the same store. The hub's one registry.
   */
  readonly registry: YadonTaskRegistry;
  /** The agent directory yadoran and yadon-1..N are listed in (protocol `yadon`); the hub's one. */
  readonly directory: YadonAgentDirectory;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  /** The socket directory (`resolveSocketDir(env)`); created 0700 when missing. */
  readonly socketDir: string;
  /** N, already clamped to 1..8 (`resolveWorkerCount(env)`). */
  readonly workerCount: number;
  /** The default project directory of tasks without `project_dir` (`yadon start`'s work_dir). */
  readonly workDir: string;
  /** Builds the manager's three-phase team (the hub's, its decomposition turns on the manager-tier runner). */
  readonly managerTeam: ThreePhaseTeamFactory;
  /** Worker n's runner: its own backend and worker-tier model. */
  readonly workerRunner: (n: number) => AgentRunner;
  /** Where the agent instruction files go; default `<socketDir>/yadon-instructions`. */
  readonly instructionsDir?: string;
  /** Lease of a claimed task (extended while it runs); default 60 s. */
  readonly leaseMs?: number;
  readonly timings?: YadonTimings;
}

interface Closable {
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The yadon-agents gateway (spec yadon.md): the manager's and N workers' agent sockets plus N+1 pet
 * sockets in `socketDir`, all 0600, none ever taken over from a live server. Each agent's tasks queue
 * in its bus mailbox (`yadoran`, `yadon-<n>`); the manager runs the three-phase team and dispatches
 * subtasks over the workers' sockets. Bubbles are published as `agent.bubble` events. Every task is a
 * row of the task registry and every agent is listed in the agent directory (see the options).
 *
 * `start()` binds every socket first (rejecting with GATEWAY_ADDRESS_IN_USE or GATEWAY_UNAVAILABLE and
 * closing what it bound), then applies the restart rules to earlier task records and starts the agents;
 * requests arriving meanwhile wait. `stop()` stops accepting, cancels running agent turns, answers
 * waiting clients, marks what was still queued or running as interrupted, lists the agents as
 * offline and unlinks only its own sockets. The bus, registry and directory are the caller's to close.
 */
export function createYadonGateway(options: YadonGatewayOptions): Gateway {
  const { bus, clock, socketDir, workerCount } = options;
  const log = options.logger.child({ component: 'gateway.yadon' });
  const timings = options.timings ?? {};
  const servers: Closable[] = [];
  const queues: TaskQueue[] = [];
  let started: Promise<void> | undefined;
  let stopping: Promise<void> | undefined;

  const onBubble = (agent: string) => (bubble: Bubble) => {
    bus
      .publish({ type: 'agent.bubble', data: { agent, ...bubble } })
      .catch((err: unknown) => log.warn({ err }, 'bubble event not published'));
  };

  const queueFor = (
    agent: string,
    role: TaskQueueOptions['role'],
    execute: TaskQueueOptions['execute'],
  ): TaskQueue => {
    const queue = new TaskQueue({
      bus,
      registry: options.registry,
      directory: options.directory,
      role,
      clock,
      ids: options.ids,
      logger: log,
      agent,
      defaultProjectDir: options.workDir,
      execute,
      onGaveUp: (task, reason) => gaveUpResult(agent, task, reason),
      ...(options.leaseMs !== undefined && { leaseMs: options.leaseMs }),
    });
    queues.push(queue);
    return queue;
  };

  const agentServer = (endpoint: AgentEndpoint, ready: Promise<void>): AgentSocketServer =>
    new AgentSocketServer({
      path: agentSocketPath(socketDir, endpoint.name),
      handler: {
        name: endpoint.name,
        handle: async (request: AgentRequest) => (await ready, endpoint.handle(request)),
      },
      clock,
      logger: log,
      ...(timings.maxRequestBytes !== undefined && { maxRequestBytes: timings.maxRequestBytes }),
      ...(timings.requestInactivityMs !== undefined && { inactivityMs: timings.requestInactivityMs }),
    });

  const build = async (ready: Promise<void>): Promise<void> => {
    const files = await writeInstructionFiles(
      options.instructionsDir ?? join(socketDir, 'yadon-instructions'),
    );
    const manager = yadonManagerExecute({
      team: options.managerTeam,
      workerCount,
      dispatcher: createSocketSubtaskDispatcher({
        socketDir,
        clock,
        ...(timings.dispatch !== undefined && { timings: timings.dispatch }),
      }),
      instructionsFile: files['yadoran.md'],
      onBubble: onBubble(MANAGER_NAME),
      ...(timings.decompositionMs !== undefined && { decompositionTimeoutMs: timings.decompositionMs }),
    });
    const endpoints = [
      new AgentEndpoint({
        name: MANAGER_NAME,
        queue: queueFor(MANAGER_NAME, 'manager', manager),
        workDir: options.workDir,
        clock,
        logger: log,
        probeWorkers: () =>
          probeWorkers({
            socketDir,
            workerCount,
            clock,
            ...(timings.statusProbeMs !== undefined && { timeoutMs: timings.statusProbeMs }),
          }),
      }),
    ];
    for (let n = 1; n <= workerCount; n++) {
      const worker = yadonWorkerExecute({
        runner: options.workerRunner(n),
        workerNumber: n,
        instructionsFile: files['yadon.md'],
        onBubble: onBubble(workerName(n)),
        ...(timings.workerLlmMs !== undefined && { timeoutMs: timings.workerLlmMs }),
      });
      const queue = queueFor(workerName(n), 'worker', worker);
      endpoints.push(
        new AgentEndpoint({ name: workerName(n), queue, workDir: options.workDir, clock, logger: log }),
      );
    }
    servers.push(...endpoints.map((e) => agentServer(e, ready)));
    for (const pet of [MANAGER_NAME, ...Array.from({ length: workerCount }, (_, i) => String(i + 1))]) {
      const agent = pet === MANAGER_NAME ? pet : workerName(Number(pet));
      servers.push(
        new PetSocketServer({
          path: petSocketPath(socketDir, pet),
          pet,
          clock,
          logger: log,
          onBubble: onBubble(agent),
        }),
      );
    }
    for (const server of servers) await server.start();
  };

  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      await started?.catch(() => undefined);
      const serversClosed = Promise.allSettled(servers.map((s) => s.close()));
      await Promise.allSettled(queues.map((q) => q.close()));
      const failures = [...(await serversClosed)].filter((r) => r.status === 'rejected');
      log.info({ socketDir }, 'yadon gateway stopped');
      if (failures.length > 0)
        throw new AggregateError(
          failures.map((f) => f.reason),
          'yadon gateway stop had failures',
        );
    })();
    return stopping;
  };

  const gateway: Gateway = {
    name: 'yadon',
    start(): Promise<void> {
      if (started !== undefined)
        throw new MusubiError('GATEWAY_UNAVAILABLE', 'yadon gateway already started');
      let open: () => void = () => undefined;
      let fail: (err: unknown) => void = () => undefined;
      const ready = new Promise<void>((resolve, reject) => ((open = resolve), (fail = reject)));
      ready.catch(() => undefined); // requests observe it themselves
      started = (async () => {
        try {
          await ensureSocketDir(socketDir);
          await build(ready);
          for (const queue of queues) await queue.start();
          open();
          log.info({ socketDir, workerCount, workDir: options.workDir }, 'yadon gateway listening');
        } catch (err) {
          fail(err);
          await Promise.allSettled(servers.map((s) => s.close()));
          await Promise.allSettled(queues.map((q) => q.close()));
          throw err;
        }
      })();
      return started;
    },
    address(): GatewayAddress {
      if (started === undefined) throw new MusubiError('GATEWAY_UNAVAILABLE', 'yadon gateway not started');
      return { kind: 'unix', path: agentSocketPath(socketDir, MANAGER_NAME) };
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
  return gateway;
}
