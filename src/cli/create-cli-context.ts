import type { Command } from 'commander';
import { createSystemClock } from '../core/clock.js';
import type { Config } from '../core/config.schema.js';
import { MusubiError } from '../core/errors.js';
import { createLogger, LOG_FORMATS, type LogFormat, type Logger } from '../core/logger.js';
import { createIdGenerator } from '../core/ids.js';
import type { CliContext, GlobalOptions, OpenedBus } from './cli-context.js';

function isLogFormat(value: string): value is LogFormat {
  return (LOG_FORMATS as readonly string[]).includes(value);
}

/**
 * `--log-format`, else MUSUBI_LOG_FORMAT, else readable lines when stderr (where logs go) is a terminal
 * and JSON lines otherwise (pipes, files, CI, agents' hooks).
 */
function resolveLogFormat(options: {
  readonly flag: string | undefined;
  readonly env: NodeJS.ProcessEnv;
  readonly isTty: boolean;
}): LogFormat {
  const fromEnv = options.env['MUSUBI_LOG_FORMAT'];
  const chosen = options.flag ?? (fromEnv === '' ? undefined : fromEnv);
  if (chosen === undefined) return options.isTty ? 'pretty' : 'json';
  if (isLogFormat(chosen)) return chosen;
  const source = options.flag === undefined ? 'environment variable MUSUBI_LOG_FORMAT' : '--log-format';
  throw new MusubiError(
    'CONFIG_INVALID',
    `${source} must be one of ${LOG_FORMATS.join(', ')}, got ${JSON.stringify(chosen)}`,
  );
}

/** The CLI context of the real process: real env, stdio and store. `bindProgram` wires global flags. */
export function createCliContext(): CliContext & { bindProgram(program: Command): void } {
  let program: Command | undefined;
  const globalOptions = (): GlobalOptions => {
    const opts =
      program?.opts<{ store?: string; config?: string; logLevel?: string; logFormat?: string }>() ?? {};
    return {
      ...(opts.store === undefined ? {} : { store: opts.store }),
      ...(opts.config === undefined ? {} : { config: opts.config }),
      ...(opts.logLevel === undefined ? {} : { logLevel: opts.logLevel }),
      ...(opts.logFormat === undefined ? {} : { logFormat: opts.logFormat }),
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
  const logger = (config: Config): Logger => {
    const isTty = process.stderr.isTTY === true;
    const format = resolveLogFormat({ flag: globalOptions().logFormat, env: process.env, isTty });
    const isColored = isTty && process.env['NO_COLOR'] === undefined && process.env['TERM'] !== 'dumb';
    return createLogger({ level: config.log.level, format, isColored });
  };
  const openBus = async (): Promise<OpenedBus> => {
    const config = await loadConfig();
    const { openHub } = await import('../hub/hub.js');
    const clock = createSystemClock();
    const hub = await openHub({
      config,
      cwd: process.cwd(),
      logger: logger(config),
      clock,
      ids: createIdGenerator(clock),
    });
    return { bus: hub.bus, config, close: hub.close, [Symbol.asyncDispose]: hub.close };
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
