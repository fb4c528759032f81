import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentRunner } from '../../agents/agent-runner.js';
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
 * `musubi ignite monitor [-s ID] [-w DIR] [-i SECONDS]` (spec 6.3): runs the queue monitor in the
 * foreground until SIGTERM/SIGINT (exit 128 + signal), reloads settings on SIGHUP, exits 1 when another
 * monitor holds the runtime dir or the leader session stays missing. The bus store is the configured one
 * when a store is named (--store, MUSUBI_STORE, a config file), else `<rt>/state/bus.db`.
 */
export async function runMonitor(ctx: CliContext, flags: MonitorFlags): Promise<void> {
  const [
    { resolveRuntimeDir, resolveWorkspace },
    { createIgniteGateway, MONITOR_LOCKED_MESSAGE },
    { openStore },
    { createBus },
    clockMod,
    idsMod,
    { ChildReaper },
  ] = await Promise.all([
    import('../../gateways/ignite/ignite-paths.js'),
    import('../../gateways/ignite/ignite-gateway.js'),
    import('../../hub/open-store.js'),
    import('../../bus/bus.js'),
    import('../../core/clock.js'),
    import('../../core/ids.js'),
    import('../../agents/process/child-reaper.js'),
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
  const g = ctx.globalOptions();
  const isStoreNamed =
    g.store !== undefined ||
    (ctx.env['MUSUBI_STORE'] ?? '') !== '' ||
    g.config !== undefined ||
    existsSync(join(process.cwd(), 'musubi.yaml'));
  const clock = clockMod.createSystemClock();
  const logger = ctx.logger(config);
  const store = await openStore({
    url: isStoreNamed ? config.store : `sqlite:${join(runtimeDir, 'state', 'bus.db')}`,
    cwd: process.cwd(),
    clock,
    pollIntervalMs: config.bus.pollIntervalMs,
  });
  const bus = createBus({
    store,
    clock,
    ids: idsMod.createIdGenerator(clock),
    logger: logger.child({ component: 'bus' }),
    config: config.bus,
  });
  const reaper = new ChildReaper();
  const { lazyRunner, systemPrompts } = await import('./agent-runners.js');
  const prompts = systemPrompts(runtimeDir);
  let exitCode = 0;
  let resolveDone: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const gateway = createIgniteGateway({
    bus,
    logger,
    clock,
    workspace,
    runtimeDir,
    settings,
    busMaxAttempts: config.bus.retry.maxAttempts,
    runnerFor: (agent): AgentRunner =>
      lazyRunner({
        agent,
        config,
        env: ctx.env,
        reaper,
        ...(flags.backend !== undefined && { backend: flags.backend }),
      }),
    systemPromptFor: prompts,
    onProgress: (p) =>
      ctx.stdout.write(formatProgressLine(p.line, p.isFinal, ctx.env, process.stdout.isTTY === true)),
    onFatal: () => {
      exitCode = 1;
      resolveDone();
    },
  });
  try {
    await gateway.start();
  } catch (err) {
    await bus.close();
    await store.close();
    if (err instanceof MusubiError && err.message === MONITOR_LOCKED_MESSAGE) {
      ctx.stderr.write(`${MONITOR_LOCKED_MESSAGE}\n`);
      ctx.setExitCode(1);
      return;
    }
    throw err;
  }
  const onSignal = (signal: NodeJS.Signals): void => {
    if (signal === 'SIGHUP') {
      void monitorSettings(runtimeDir, ctx.env, flags).then(
        (next) => gateway.reload(next),
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
  await gateway.stop();
  await bus.close();
  await store.close();
  ctx.setExitCode(exitCode);
}
