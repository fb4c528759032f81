import type { Command } from 'commander';
import { defaultHttpConfig, type Config } from '../../core/config.schema.js';
import type { CliContext } from '../cli-context.js';
import { parseNonNegativeInt } from '../option-parsers.js';
import { untilStopSignal } from '../stop-signals.js';

/** Shown once when the API is served without a token, on stderr where an operator looks. */
const NO_TOKEN_WARNING =
  'musubi: warning: --no-token: every user of this machine can drive this hub (start runs, read every ' +
  'transcript); use it only on a machine with one user\n';

/** The config with the flags of `musubi up` applied: `--http-port`, `--no-token`. */
function withHttpFlags(config: Config, flags: { httpPort?: number; token?: boolean }): Config {
  if (flags.httpPort === undefined && flags.token !== false) return config;
  const http = config.gateways.http ?? defaultHttpConfig();
  return {
    ...config,
    gateways: {
      ...config.gateways,
      http: {
        ...http,
        enabled: true,
        ...(flags.httpPort !== undefined && { port: flags.httpPort }),
        ...(flags.token === false && { auth: 'none' as const, token: undefined }),
      },
    },
  };
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
    .option(
      '--no-token',
      'serve the dashboard API without a token (every local user can then drive the hub; warned)',
    )
    .action(async (flags: { httpPort?: number; token?: boolean }) => {
      const config = withHttpFlags(await ctx.loadConfig(), flags);
      if (config.gateways.http?.auth === 'none') ctx.stderr.write(NO_TOKEN_WARNING);
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
      // Listening before saying so: a Ctrl-C right after the line stops the hub cleanly.
      const stopped = untilStopSignal();
      ctx.stdout.write(
        `musubi hub up (store ${storeMod.redactStoreUrl(config.store)}); ${hub.gateways.length} gateway(s). Ctrl-C stops.\n`,
      );
      for (const g of hub.gateways) {
        const address = g.address();
        const shown =
          address.kind === 'tcp' ? `${address.host}:${address.port}` : `${address.kind} ${address.path}`;
        ctx.stdout.write(`  ${g.name}: ${shown}\n`);
        // Printed once, as Jupyter does: the token in it logs the browser in (a cookie), then leaves the URL.
        if (g === hub.byKind.http) ctx.stdout.write(`  dashboard: ${hub.byKind.http.loginUrl()}\n`);
      }
      await stopped;
      ctx.stdout.write('musubi hub stopping\n');
      await hub.close();
    });
}
