import { installedBackends } from '../../agents/selection/installed-backends.js';
import { createSystemClock } from '../../core/clock.js';
import { isMusubiError, MusubiError } from '../../core/errors.js';
import { createIdGenerator } from '../../core/ids.js';
import { resolveSocketDir, resolveWorkerCount } from '../../gateways/yadon/yadon-paths.js';
import { startYadonAgent } from '../../hub/start-yadon-agent.js';
import type { CliContext } from '../cli-context.js';
import { refusalLines } from './run-host.js';
import { untilStopSignal } from '../stop-signals.js';

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
  const config = await ctx.loadConfig();
  const clock = createSystemClock();
  let agent;
  try {
    agent = await startYadonAgent({
      config,
      cwd: process.cwd(),
      logger: ctx.logger(config),
      clock,
      ids: createIdGenerator(clock),
      env: ctx.env,
      installed: await installedBackends(ctx.env),
      role: options.role,
      number: options.number ?? 1,
      socket: options.socket,
      workDir: options.workDir,
      socketDir: resolveSocketDir(ctx.env),
      workerCount: resolveWorkerCount(ctx.env),
    });
  } catch (err) {
    if (!isMusubiError(err, 'GATEWAY_ADDRESS_IN_USE')) throw err;
    ctx.stderr.write(refusalLines(options.socket));
    return 1;
  }
  ctx.stdout.write(`${agent.name} listening on ${options.socket} (${agent.backend})\n`);
  await untilStopSignal();
  await agent.close();
  return 0;
}
