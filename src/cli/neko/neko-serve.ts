import { ChildReaper } from '../../agents/process/child-reaper.js';
import { AgentDirectory } from '../../bus/agent-directory.js';
import { createSystemClock } from '../../core/clock.js';
import { createNekoGateway } from '../../gateways/neko/neko-gateway.js';
import { resolveNekoSettings } from '../../gateways/neko/neko-settings.js';
import { TaskRegistry } from '../../tasks/task-registry.js';
import type { CliContext } from '../cli-context.js';
import { nekoRunnerFor } from './neko-runners.js';

function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

/** `musubi neko serve`: the N.E.K.O. gateway alone over the configured store, until SIGINT/SIGTERM. */
export async function serveCommand(
  ctx: CliContext,
  flags: { port?: number; fresh?: boolean },
): Promise<void> {
  const opened = await ctx.openBus();
  const { bus, config } = opened;
  const logger = ctx.logger(config);
  const clock = createSystemClock();
  const registry = new TaskRegistry({ bus, clock, logger });
  const reaper = new ChildReaper();
  const settingsOf = (neko: typeof config.neko) => {
    const resolved = resolveNekoSettings(neko, ctx.env, process.cwd());
    return flags.port === undefined ? resolved : { ...resolved, httpPort: flags.port };
  };
  const settings = settingsOf(config.neko);
  const gateway = createNekoGateway({
    bus,
    registry,
    logger,
    clock,
    settings,
    runnerFor: nekoRunnerFor(config, ctx.env, reaper),
    env: ctx.env,
    reaper,
    directory: new AgentDirectory({ bus, clock }),
    isFresh: flags.fresh === true,
    reloadSettings: async () => settingsOf((await ctx.loadConfig()).neko),
  });
  try {
    await gateway.start();
    const address = gateway.address();
    const http = address.kind === 'tcp' ? `http://${address.host}:${address.port}` : '';
    const { sessionPub, analyzePush, agentPush } = settings.zmq;
    ctx.stdout.write(
      `N.E.K.O. agent server up: ${http}; ZeroMQ 127.0.0.1:${sessionPub} (SUB), :${analyzePush} (PULL), :${agentPush} (PUSH). Ctrl-C stops.\n`,
    );
    await untilSignal();
    ctx.stdout.write('N.E.K.O. agent server stopping\n');
  } finally {
    await gateway.stop();
    await registry.close();
    await opened.close();
  }
}
