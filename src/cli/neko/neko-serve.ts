import { installedBackends } from '../../agents/selection/installed-backends.js';
import { createSystemClock } from '../../core/clock.js';
import { createIdGenerator } from '../../core/ids.js';
import { nekoSetup } from '../../hub/gateway-setups.js';
import { startConfiguredHub } from '../../hub/start-configured-hub.js';
import type { CliContext } from '../cli-context.js';
import { untilStopSignal } from '../stop-signals.js';

/**
 * `musubi neko serve`: the hub with the N.E.K.O. gateway alone over the configured store, until
 * SIGINT/SIGTERM. `--port` replaces the HTTP port, also after a config reload; the channels take no bus
 * mail (the gateway is not bridged).
 */
export async function serveCommand(
  ctx: CliContext,
  flags: { port?: number; fresh?: boolean },
): Promise<void> {
  const config = await ctx.loadConfig();
  const cwd = process.cwd();
  const settingsOf = (c: typeof config) => {
    const { settings } = nekoSetup(c, ctx.env, cwd);
    return flags.port === undefined ? settings : { ...settings, httpPort: flags.port };
  };
  const settings = settingsOf(config);
  const clock = createSystemClock();
  const hub = await startConfiguredHub({
    config,
    cwd,
    env: ctx.env,
    logger: ctx.logger(config),
    clock,
    ids: createIdGenerator(clock),
    installed: await installedBackends(ctx.env),
    gateways: {
      neko: {
        settings,
        isFresh: flags.fresh === true,
        reloadSettings: async () => settingsOf(await ctx.loadConfig()),
        isBridged: false,
      },
    },
  });
  try {
    const address = hub.byKind.neko?.address();
    const http = address?.kind === 'tcp' ? `http://${address.host}:${address.port}` : '';
    const { sessionPub, analyzePush, agentPush } = settings.zmq;
    // Listening before saying so: a Ctrl-C right after the line stops the server cleanly.
    const stopped = untilStopSignal();
    ctx.stdout.write(
      `N.E.K.O. agent server up: ${http}; ZeroMQ 127.0.0.1:${sessionPub} (SUB), :${analyzePush} (PULL), :${agentPush} (PUSH). Ctrl-C stops.\n`,
    );
    await stopped;
    ctx.stdout.write('N.E.K.O. agent server stopping\n');
  } finally {
    await hub.close();
  }
}
