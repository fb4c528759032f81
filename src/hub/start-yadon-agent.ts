import { dirname, join } from 'node:path';
import type { AgentBackend, AgentRunner } from '../agents/agent-runner.js';
import { AgentDirectory } from '../bus/agent-directory.js';
import type { Logger } from '../core/logger.js';
import { AgentEndpoint } from '../gateways/yadon/agent-endpoint.js';
import { AgentSocketServer } from '../gateways/yadon/agent-socket-server.js';
import type { Bubble } from '../gateways/yadon/bubble-text.js';
import { writeInstructionFiles } from '../gateways/yadon/instruction-files.js';
import { createSocketSubtaskDispatcher } from '../gateways/yadon/socket-subtask-dispatcher.js';
import { TaskQueue } from '../gateways/yadon/task-queue.js';
import { probeWorkers } from '../gateways/yadon/worker-probe.js';
import {
  gaveUpResult,
  yadonManagerExecute,
  yadonWorkerExecute,
  type YadonExecute,
} from '../gateways/yadon/yadon-team.js';
import { yadonManager, yadonWorker } from './agent-identities.js';
import { createHubRunners } from './hub-runners.js';
import { threePhaseTeams } from './team-builders.js';
import { openHub, type OpenHubOptions } from './hub.js';

/** Options of {@link startYadonAgent}. */
export interface StartYadonAgentOptions extends OpenHubOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly installed: ReadonlySet<AgentBackend>;
  /** The manager, or worker `number`. */
  readonly role: 'manager' | 'worker';
  readonly number: number;
  /** Any socket path; the instruction files go beside it. */
  readonly socket: string;
  readonly workDir: string;
  /** The socket directory whose workers the manager dispatches to, and their count. */
  readonly socketDir: string;
  readonly workerCount: number;
}

/** One yadon agent serving its socket. */
export interface YadonAgent extends AsyncDisposable {
  readonly name: string;
  readonly backend: AgentBackend;
  /** Stops accepting, lets the running task settle, then closes the hub. Idempotent. */
  close(): Promise<void>;
}

/** What the agent does with one task: the manager runs the three-phase team, a worker one turn. */
async function executeOf(
  o: StartYadonAgentOptions,
  runner: AgentRunner,
  logger: Logger,
  onBubble: (bubble: Bubble) => void,
): Promise<YadonExecute> {
  const files = await writeInstructionFiles(join(dirname(o.socket), 'yadon-instructions'));
  if (o.role === 'worker') {
    return yadonWorkerExecute({
      runner,
      workerNumber: o.number,
      instructionsFile: files['yadon.md'],
      onBubble,
    });
  }
  return yadonManagerExecute({
    team: threePhaseTeams(runner, logger),
    workerCount: o.workerCount,
    dispatcher: createSocketSubtaskDispatcher({ socketDir: o.socketDir, clock: o.clock }),
    instructionsFile: files['yadoran.md'],
    onBubble,
  });
}

/**
 * Starts `musubi yadon serve-agent`: one yadon agent (the manager or a worker) on an arbitrary socket
 * path over the hub's bus, task registry and agent directory, its runner from the hub's one factory;
 * the manager dispatches to the workers of `socketDir`. Rejects with GATEWAY_ADDRESS_IN_USE when the
 * socket is served (or with the runner factory's error), after closing the hub.
 */
export async function startYadonAgent(o: StartYadonAgentOptions): Promise<YadonAgent> {
  const { name, identity } = o.role === 'manager' ? yadonManager() : yadonWorker(o.number);
  const hub = await openHub(o);
  const { bus, tasks } = hub;
  const { clock, socketDir } = o;
  const logger = o.logger.child({ component: 'yadon-serve-agent', agentId: name });
  const onBubble = (bubble: Bubble): void =>
    void bus.publish({ type: 'agent.bubble', data: { agent: name, ...bubble } }).catch(() => undefined);
  let runner: AgentRunner;
  let server: AgentSocketServer;
  let queue: TaskQueue;
  try {
    runner = createHubRunners({
      config: o.config,
      env: o.env,
      installed: o.installed,
      bus,
      recordTurns: { clock, ids: o.ids, logger },
    }).runnerFor(name, identity);
    queue = new TaskQueue({
      bus,
      registry: tasks,
      directory: new AgentDirectory({ bus, clock }),
      role: o.role,
      clock,
      ids: o.ids,
      logger,
      agent: name,
      defaultProjectDir: o.workDir,
      execute: await executeOf(o, runner, logger, onBubble),
      onGaveUp: (task, reason) => gaveUpResult(name, task, reason),
    });
    const endpoint = new AgentEndpoint({
      name,
      queue,
      workDir: o.workDir,
      clock,
      logger,
      ...(o.role === 'manager' && {
        probeWorkers: () => probeWorkers({ socketDir, workerCount: o.workerCount, clock }),
      }),
    });
    server = new AgentSocketServer({ path: o.socket, handler: endpoint, clock, logger });
    await server.start();
  } catch (err) {
    await hub.close();
    throw err;
  }
  await queue.start();
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      const closed = server.close();
      await queue.close();
      await closed;
      await hub.close();
    })());
  return { name, backend: runner.backend, close, [Symbol.asyncDispose]: close };
}
