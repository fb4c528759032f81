import { createRequire } from 'node:module';
import { pino } from 'pino';
import type PinoPretty from 'pino-pretty';

/** Log levels, least to most severe. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** How log entries are written: one readable line each (for a terminal) or one JSON object per line. */
export const LOG_FORMATS = ['pretty', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

type LogFn = {
  (msg: string): void;
  (fields: Record<string, unknown>, msg?: string): void;
};

/**
 * The Logger port: levels plus `child(bindings)`. Components take one child at construction
 * (`logger.child({ component: 'bus' })`) and never import a global logger. pino satisfies it.
 */
export interface Logger {
  trace: LogFn;
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  fatal: LogFn;
  child(bindings: Record<string, unknown>): Logger;
}

/** Options for {@link createLogger}. */
export interface CreateLoggerOptions {
  readonly level?: LogLevel;
  /** File descriptor to write to; stderr (2) by default so stdout stays for command output. */
  readonly fd?: number;
  /** `json` (the default) or `pretty` (readable lines, for a person at a terminal). */
  readonly format?: LogFormat;
  /** Colours in `pretty` lines (off by default: the caller knows whether the fd is a colour terminal). */
  readonly isColored?: boolean;
}

const require = createRequire(import.meta.url);

/**
 * A pino destination that turns each JSON line into a readable one, synchronously: pino-pretty's
 * formatter over a sync fd writer, not its stream or a worker transport, so a command that exits right
 * after logging (a dead-lettering `bus nack`) loses no line. pino-pretty is loaded only when asked for,
 * so the JSON path (hooks, daemons, CI) does not pay for it at start-up.
 */
function prettyDestination(fd: number, isColored: boolean): { write(line: string): void } {
  const { prettyFactory } = require('pino-pretty') as typeof PinoPretty;
  const format = prettyFactory({
    colorize: isColored,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'component',
    messageFormat: '{if component}{component}: {end}{msg}',
  });
  const out = pino.destination({ fd, sync: true });
  return { write: (line) => void out.write(format(line)) };
}

/** The default logger: one JSON object per line on stderr, or readable lines; pino, synchronous writes. */
export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const fd = options.fd ?? 2;
  return pino(
    { level: options.level ?? 'info', base: null, timestamp: pino.stdTimeFunctions.isoTime },
    options.format === 'pretty'
      ? prettyDestination(fd, options.isColored === true)
      : pino.destination({ fd, sync: true }),
  );
}

/** A logger that drops everything: for CLI commands that print their own output, and for benchmarks. */
export function createSilentLogger(): Logger {
  return pino({ level: 'silent' });
}
