import { pino } from 'pino';

/** Log levels, least to most severe. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

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
  /** File descriptor to write JSON lines to; stderr (2) by default so stdout stays for command output. */
  readonly fd?: number;
}

/** The default logger: one JSON object per line on stderr (pino, synchronous writes). */
export function createLogger(options: CreateLoggerOptions = {}): Logger {
  return pino(
    { level: options.level ?? 'info', base: null, timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination({ fd: options.fd ?? 2, sync: true }),
  );
}

/** A logger that drops everything: for CLI commands that print their own output, and for benchmarks. */
export function createSilentLogger(): Logger {
  return pino({ level: 'silent' });
}
