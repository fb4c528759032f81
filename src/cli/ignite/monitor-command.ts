import { MusubiError } from '../../core/errors.js';
import type { IgniteSettings } from '../../gateways/ignite/ignite-settings.js';
import type { CliContext } from '../cli-context.js';

/** Flags of `musubi ignite monitor`. */
export interface MonitorFlags {
  readonly session?: string;
  readonly workspace?: string;
  readonly interval?: string;
  /** Forces one agent backend for every agent (e.g. `scripted` for a demo). */
  readonly backend?: string;
}

/** The progress display line: plain when NO_COLOR is set, TERM is dumb or stdout is no TTY (3.8). */
export function formatProgressLine(
  line: string,
  isFinal: boolean,
  env: Readonly<Record<string, string | undefined>>,
  isTty: boolean,
): string {
  const isPlain = (env['NO_COLOR'] ?? '') !== '' || env['TERM'] === 'dumb' || !isTty;
  return isPlain ? `${line}\n` : `\x1b[${isFinal ? '32' : '36'}m${line}\x1b[0m\n`;
}

/** Loads the monitor settings of a runtime dir: defaults < system.yaml < environment < flags. */
async function monitorSettings(
  runtimeDir: string,
  env: Readonly<Record<string, string | undefined>>,
  flags: MonitorFlags,
): Promise<IgniteSettings> {
  const { loadMonitorSettings } = await import('../../gateways/ignite/monitor-settings.js');
  return loadMonitorSettings({
    runtimeDir,
    env,
    flags: {
      ...(flags.interval !== undefined && { intervalSeconds: flags.interval }),
      ...(flags.session !== undefined && { session: flags.session }),
    },
  });
}

/**
 * `musubi ignite monitor [-s ID] [-w DIR] [-i SECONDS]` (spec 6.3): runs the hub with the queue monitor
 * (the IGNITE gateway, not bridged) in the foreground until SIGTERM/SIGINT (exit 128 + signal), reloads
 * settings on SIGHUP, exits 1 when another monitor holds the runtime dir or the leader session stays
 * missing. The bus store is the monitor's (`monitorStoreUrl`); `--backend` runs every agent on one backend.
 */
export async function runMonitor(ctx: CliContext, flags: MonitorFlags): Promise<void> {
  const [
    { resolveRuntimeDir, resolveWorkspace },
    { MONITOR_LOCKED_MESSAGE },
    { startConfiguredHub },
    { installedBackends },
    { monitorStoreUrl },
    { systemPrompts },
    clockMod,
    idsMod,
  ] = await Promise.all([
    import('../../gateways/ignite/ignite-paths.js'),
    import('../../gateways/ignite/ignite-gateway.js'),
    import('../../hub/start-configured-hub.js'),
    import('../../agents/selection/installed-backends.js'),
    import('./monitor-store.js'),
    import('./role-prompts.js'),
    import('../../core/clock.js'),
    import('../../core/ids.js'),
  ]);
  const workspace = resolveWorkspace({
    ...(flags.workspace !== undefined && { flag: flags.workspace }),
    env: ctx.env,
    cwd: process.cwd(),
    isMonitor: true,
  });
  const runtimeDir = resolveRuntimeDir(workspace, ctx.env);
  const settings = await monitorSettings(runtimeDir, ctx.env, flags);
  const config = await ctx.loadConfig();
  const clock = clockMod.createSystemClock();
  const logger = ctx.logger(config);
  let exitCode = 0;
  let resolveDone: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  let hub;
  try {
    hub = await startConfiguredHub({
      config: { ...config, store: await monitorStoreUrl(ctx, runtimeDir) },
      cwd: process.cwd(),
      env: ctx.env,
      logger,
      clock,
      ids: idsMod.createIdGenerator(clock),
      installed: await installedBackends(ctx.env),
      ...(flags.backend !== undefined && { runnerFlags: { backend: flags.backend } }),
      gateways: {
        ignite: {
          workspace,
          runtimeDir,
          settings,
          systemPromptFor: systemPrompts(runtimeDir),
          onProgress: (p) =>
            ctx.stdout.write(formatProgressLine(p.line, p.isFinal, ctx.env, process.stdout.isTTY === true)),
          onFatal: () => {
            exitCode = 1;
            resolveDone();
          },
          isBridged: false,
        },
      },
    });
  } catch (err) {
    if (err instanceof MusubiError && err.message === MONITOR_LOCKED_MESSAGE) {
      ctx.stderr.write(`${MONITOR_LOCKED_MESSAGE}\n`);
      ctx.setExitCode(1);
      return;
    }
    throw err;
  }
  const gateway = hub.byKind.ignite;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (signal === 'SIGHUP') {
      void monitorSettings(runtimeDir, ctx.env, flags).then(
        (next) => gateway?.reload(next),
        (err: unknown) => logger.error({ err }, 'reload failed; settings unchanged'),
      );
      return;
    }
    exitCode = 128 + (signal === 'SIGINT' ? 2 : 15);
    resolveDone();
  };
  for (const s of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(s, onSignal);
  // The gateway's own timers and watchers never hold the process open; the foreground monitor does.
  const keepAlive = setInterval(() => undefined, 1 << 30);
  await done;
  clearInterval(keepAlive);
  for (const s of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.off(s, onSignal);
  await hub.close();
  ctx.setExitCode(exitCode);
}
