import type { Command } from 'commander';
import { createSystemClock } from '../core/clock.js';
import type { Config } from '../core/config.schema.js';
import { createLogger, type Logger } from '../core/logger.js';
import { createIdGenerator } from '../core/ids.js';
import type { CliContext, GlobalOptions, OpenedBus } from './cli-context.js';

/** The CLI context of the real process: real env, stdio and store. `bindProgram` wires global flags. */
export function createCliContext(): CliContext & { bindProgram(program: Command): void } {
  let program: Command | undefined;
  const globalOptions = (): GlobalOptions => {
    const opts = program?.opts<{ store?: string; config?: string; logLevel?: string }>() ?? {};
    return {
      ...(opts.store === undefined ? {} : { store: opts.store }),
      ...(opts.config === undefined ? {} : { config: opts.config }),
      ...(opts.logLevel === undefined ? {} : { logLevel: opts.logLevel }),
    };
  };
  const loadConfig = async (): Promise<Config> => {
    const { loadConfig: load } = await import('../hub/load-config.js');
    const g = globalOptions();
    return load({
      cwd: process.cwd(),
      env: process.env,
      ...(g.config === undefined ? {} : { configPath: g.config }),
      flags: {
        ...(g.store === undefined ? {} : { store: g.store }),
        ...(g.logLevel === undefined ? {} : { logLevel: g.logLevel }),
      },
    });
  };
  const logger = (config: Config): Logger => createLogger({ level: config.log.level });
  const openBus = async (): Promise<OpenedBus> => {
    const config = await loadConfig();
    const [{ openStore }, { createBus }] = await Promise.all([
      import('../hub/open-store.js'),
      import('../bus/bus.js'),
    ]);
    const clock = createSystemClock();
    const store = await openStore({
      url: config.store,
      cwd: process.cwd(),
      clock,
      pollIntervalMs: config.bus.pollIntervalMs,
    });
    const bus = createBus({
      store,
      clock,
      ids: createIdGenerator(clock),
      logger: logger(config).child({ component: 'bus' }),
      config: config.bus,
    });
    let closing: Promise<void> | undefined;
    const close = (): Promise<void> => {
      closing ??= bus.close().finally(() => store.close());
      return closing;
    };
    return { bus, config, close, [Symbol.asyncDispose]: close };
  };
  return {
    bindProgram: (p) => void (program = p),
    globalOptions,
    loadConfig,
    openBus,
    logger,
    env: process.env,
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    setExitCode: (code) => void (process.exitCode = code),
  };
}
