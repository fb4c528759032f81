import type { Command } from 'commander';
import type { Config } from '../../core/config.schema.js';
import type { CliContext } from '../cli-context.js';
import { parseNonNegativeInt } from '../option-parsers.js';
import { untilStopSignal } from '../stop-signals.js';

function withHttpPort(config: Config, port: number | undefined): Config {
  if (port === undefined) return config;
  const http = config.gateways.http ?? { enabled: true, host: '127.0.0.1', port, networkAccess: false };
  return { ...config, gateways: { ...config.gateways, http: { ...http, enabled: true, port } } };
}

/** Registers `musubi up`: start the hub (store, bus, enabled gateways, dashboard) until SIGINT or SIGTERM. */
export function registerUpCommand(program: Command, ctx: CliContext): void {
  program
    .command('up')
    .description(
      'start the hub: store, bus, the gateways enabled in config and the dashboard; stops on SIGINT/SIGTERM',
    )
    .option(
      '--http-port <port>',
      'serve the dashboard on this port (0: any free port)',
      parseNonNegativeInt('--http-port'),
    )
    .action(async (flags: { httpPort?: number }) => {
      const config = withHttpPort(await ctx.loadConfig(), flags.httpPort);
      const [{ startConfiguredHub }, { installedBackends }, clockMod, idsMod, storeMod] = await Promise.all([
        import('../../hub/start-configured-hub.js'),
        import('../../agents/selection/installed-backends.js'),
        import('../../core/clock.js'),
        import('../../core/ids.js'),
        import('../../hub/open-store.js'),
      ]);
      const clock = clockMod.createSystemClock();
      const hub = await startConfiguredHub({
        config,
        cwd: process.cwd(),
        env: ctx.env,
        logger: ctx.logger(config),
        clock,
        ids: idsMod.createIdGenerator(clock),
        installed: await installedBackends(ctx.env),
      });
      ctx.stdout.write(
        `musubi hub up (store ${storeMod.redactStoreUrl(config.store)}); ${hub.gateways.length} gateway(s). Ctrl-C stops.\n`,
      );
      for (const g of hub.gateways) {
        const address = g.address();
        const shown =
          address.kind === 'tcp' ? `${address.host}:${address.port}` : `${address.kind} ${address.path}`;
        ctx.stdout.write(`  ${g.name}: ${shown}\n`);
        if ('url' in g && typeof g.url === 'function') ctx.stdout.write(`  dashboard: ${String(g.url())}\n`);
      }
      await untilStopSignal();
      ctx.stdout.write('musubi hub stopping\n');
      await hub.close();
    });
}
