import { dirname, join } from 'node:path';
import { createAgentRunner } from '../../agents/create-agent-runner.js';
import { agentEnvOf } from '../../agents/selection/agent-env.js';
import { ChildReaper } from '../../agents/process/child-reaper.js';
import { installedBackends } from '../../agents/selection/resolve-agent-choice.js';
import { selectBackend } from '../../agents/selection/select-backend.js';
import { createSystemClock } from '../../core/clock.js';
import { isMusubiError, MusubiError } from '../../core/errors.js';
import { createIdGenerator } from '../../core/ids.js';
import { AgentEndpoint } from '../../gateways/yadon/agent-endpoint.js';
import { AgentSocketServer } from '../../gateways/yadon/agent-socket-server.js';
import { writeInstructionFiles } from '../../gateways/yadon/instruction-files.js';
import { createSocketSubtaskDispatcher } from '../../gateways/yadon/socket-subtask-dispatcher.js';
import { TaskQueue, type TaskQueueOptions } from '../../gateways/yadon/task-queue.js';
import { probeWorkers } from '../../gateways/yadon/worker-probe.js';
import {
  MANAGER_NAME,
  resolveSocketDir,
  resolveWorkerCount,
  workerName,
} from '../../gateways/yadon/yadon-paths.js';
import type { Bubble } from '../../teams/three-phase/bubble-text.js';
import { resultDoc, summarize } from '../../teams/three-phase/result-doc.js';
import { ThreePhaseTeam } from '../../teams/three-phase/three-phase-team.js';
import { runWorkerTurn } from '../../teams/three-phase/worker-turn.js';
import type { CliContext } from '../cli-context.js';
import { refusalLines } from './run-host.js';

/** Options of `musubi yadon serve-agent`. */
export interface ServeAgentOptions {
  readonly role: 'worker' | 'manager';
  readonly number?: number;
  readonly socket: string;
  readonly workDir: string;
}

/**
 * `musubi yadon serve-agent`: serves one agent (a worker n or the manager) on an arbitrary socket path,
 * with the same behaviour as inside the host; the manager dispatches to the workers of the socket
 * directory. Runs until SIGINT/SIGTERM; resolves the exit code (1 when the socket is in use).
 */
export async function serveAgentCommand(ctx: CliContext, options: ServeAgentOptions): Promise<number> {
  if (options.role === 'worker' && (options.number === undefined || options.number < 1)) {
    throw new MusubiError('USAGE_INVALID', 'serve-agent --role worker needs --number N (N >= 1)');
  }
  const n = options.number ?? 1;
  const name = options.role === 'manager' ? MANAGER_NAME : workerName(n);
  const socketDir = resolveSocketDir(ctx.env);
  const opened = await ctx.openBus();
  const { bus, config } = opened;
  const logger = ctx.logger(config).child({ component: 'yadon-serve-agent', agentId: name });
  const clock = createSystemClock();
  const installed = await installedBackends(ctx.env);
  const selection = selectBackend({
    agent: name,
    tier: options.role,
    config,
    env: ctx.env,
    isInstalled: (b) => installed.has(b),
    ...(options.role === 'worker' && { workerNumber: n }),
  });
  const runner = createAgentRunner({
    backend: selection.backend,
    env: ctx.env,
    reaper: new ChildReaper(),
    ...(selection.model !== undefined && { model: selection.model }),
    ...agentEnvOf(config, selection.backend, config.agents[name]),
  });
  const files = await writeInstructionFiles(join(dirname(options.socket), 'yadon-instructions'));
  const onBubble = (bubble: Bubble): void =>
    void bus.publish({ type: 'agent.bubble', data: { agent: name, ...bubble } }).catch(() => undefined);
  const count = resolveWorkerCount(ctx.env);
  const execute: TaskQueueOptions['execute'] =
    options.role === 'manager'
      ? (task, signal) =>
          new ThreePhaseTeam({
            managerRunner: runner,
            workerCount: count,
            dispatcher: createSocketSubtaskDispatcher({ socketDir, clock }),
            instructionsFile: files['yadoran.md'],
            onBubble,
            logger,
          }).runJob(task, signal)
      : (task, signal) =>
          runWorkerTurn(
            { runner, workerNumber: n, instructionsFile: files['yadon.md'], onBubble },
            task,
            signal,
          );
  const queue = new TaskQueue({
    bus,
    clock,
    ids: createIdGenerator(clock),
    logger,
    agent: name,
    defaultProjectDir: options.workDir,
    execute,
    onGaveUp: (task, reason) => {
      const output = `エージェントが異常終了しました (${reason})`;
      return resultDoc({
        id: task.id,
        from: name,
        status: 'error',
        payload: { output, summary: summarize(output) },
      });
    },
  });
  const endpoint = new AgentEndpoint({
    name,
    queue,
    workDir: options.workDir,
    clock,
    logger,
    ...(options.role === 'manager' && {
      probeWorkers: () => probeWorkers({ socketDir, workerCount: count, clock }),
    }),
  });
  const server = new AgentSocketServer({ path: options.socket, handler: endpoint, clock, logger });
  try {
    await server.start();
  } catch (err) {
    await opened.close();
    if (!isMusubiError(err, 'GATEWAY_ADDRESS_IN_USE')) throw err;
    ctx.stderr.write(refusalLines(options.socket));
    return 1;
  }
  await queue.start();
  ctx.stdout.write(`${name} listening on ${options.socket} (${selection.backend})\n`);
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  const closed = server.close();
  await queue.close();
  await closed;
  await opened.close();
  return 0;
}
