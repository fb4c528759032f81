import type { AgentRunner } from '../../agents/agent-runner.js';
import type { Bus } from '../../bus/bus.types.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { IgnitePaths } from './ignite-paths.js';
import type { IgniteSettings } from './ignite-settings.js';
import type { QueueMirror } from './queue-mirror.js';

/** One line for the progress display (spec/ignite.md 3.8), plain text; the sink decides about colour. */
export interface ProgressLine {
  readonly agent: string;
  readonly line: string;
  readonly isFinal: boolean;
}

/**
 * What the parts of one queue monitor share. Built once by the gateway; `settings()` returns the
 * current settings (they change on reload).
 */
export interface MonitorContext {
  readonly bus: Bus;
  readonly mirror: QueueMirror;
  readonly paths: IgnitePaths;
  readonly workspace: string;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly pid: number;
  /** Uniform in [0, 1): backoff jitter. */
  readonly random: () => number;
  /** Deliveries with this many attempts are re-sent under a new id instead of nacked (the bus's limit). */
  readonly busMaxAttempts: number;
  settings(): IgniteSettings;
  /** Epoch milliseconds with a sub-millisecond fraction (file-name stamps). */
  preciseNow(): number;
  /** The runner of one agent (never called for names without an agent index). */
  runnerFor(agent: string): AgentRunner;
  /** Role instructions passed as the system prompt of each turn, if any. */
  systemPromptFor?(agent: string): string | undefined;
  /** Receives progress_update display lines. */
  onProgress(line: ProgressLine): void;
  /** Publishes a `gateway.ignite.<what>` event; failures are logged, never thrown. */
  publish(what: string, data: Record<string, unknown>): void;
  /** Tells discovery that the monitor itself just wrote `name` completely (no stability wait). */
  markComplete(agent: string, name: string): void;
  /** Runs `fn` exclusively with other file operations of the same agent. */
  lane<T>(agent: string, fn: () => Promise<T>): Promise<T>;
  /** Moves a retrying file back into its queue root at `atMs` (spec 4.6). */
  scheduleMoveBack(agent: string, name: string, atMs: number): void;
  /**
   * True when `agent` is attached through another gateway: its files are handed to its mailbox instead
   * of delivered here (hand-off.ts). Resolves false when that cannot be read.
   */
  isAttachedElsewhere(agent: string): Promise<boolean>;
}
