import type { Bus } from '../bus/bus.types.js';
import type { Config } from '../core/config.schema.js';
import type { Logger } from '../core/logger.js';

/** Global options every command sees (`musubi --store ... --config ... <command> --json`). */
export interface GlobalOptions {
  readonly store?: string;
  readonly config?: string;
  readonly logLevel?: string;
  readonly logFormat?: string;
}

/** The hub's bus, opened for one command (`openHub`); `close()` closes task registry, bus and store. */
export interface OpenedBus extends AsyncDisposable {
  readonly bus: Bus;
  readonly config: Config;
  close(): Promise<void>;
}

/**
 * What command modules receive from the CLI entry. Commands throw MusubiError on failure; the entry
 * prints `musubi: <CODE>: <message>` to stderr and exits 1 (2 for USAGE_INVALID).
 */
export interface CliContext {
  /** The global options as parsed (read lazily: commander parses them before actions run). */
  globalOptions(): GlobalOptions;
  /** Config merged from defaults < musubi.yaml (or --config) < environment < global flags. */
  loadConfig(): Promise<Config>;
  /** Opens the hub without gateways: the configured store and the bus over it. */
  openBus(): Promise<OpenedBus>;
  /** A logger writing to stderr at the configured level: readable lines on a terminal, else JSON lines. */
  logger(config: Config): Logger;
  readonly env: NodeJS.ProcessEnv;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly stdin: NodeJS.ReadableStream;
  /** Sets the process exit code without exiting (so streams flush). */
  setExitCode(code: number): void;
}
