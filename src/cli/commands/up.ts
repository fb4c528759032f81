import type { Command } from 'commander';
import type { CliContext } from '../cli-context.js';

/** Registers `musubi up`: start the hub (store, bus, enabled gateways) until SIGINT or SIGTERM. */
export function registerUpCommand(program: Command, ctx: CliContext): void {
  program
    .command('up')
    .description('start the hub: store, bus and the gateways enabled in config; stops on SIGINT/SIGTERM')
    .action(async () => {
      const config = await ctx.loadConfig();
      const [
        { startHub },
        { buildGateways },
        { createSystemClock },
        { createIdGenerator },
        { redactStoreUrl },
      ] = await Promise.all([
        import('../../hub/hub.js'),
        import('../../hub/build-gateways.js'),
        import('../../core/clock.js'),
        import('../../core/ids.js'),
        import('../../hub/open-store.js'),
      ]);
      const logger = ctx.logger(config);
      const clock = createSystemClock();
      const hub = await startHub({
        config,
        cwd: process.cwd(),
        logger,
        clock,
        ids: createIdGenerator(clock),
        gateways: buildGateways,
      });
      ctx.stdout.write(
        `musubi hub up (store ${redactStoreUrl(config.store)}); ${hub.gateways.length} gateway(s). Ctrl-C stops.\n`,
      );
      for (const g of hub.gateways) ctx.stdout.write(`  ${g.name}: ${JSON.stringify(g.address())}\n`);
      await new Promise<void>((resolve) => {
        const stop = (): void => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          resolve();
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
      ctx.stdout.write('musubi hub stopping\n');
      await hub.close();
    });
}
