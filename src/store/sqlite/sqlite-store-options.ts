import type { Clock } from '../../core/clock.js';
import { positiveOption } from './sqlite-connection.js';

const DEFAULT_POLL_INTERVAL_MS = 25;
const DEFAULT_EVENT_RETENTION = 100_000;

/** Options for {@link SqliteStore.open}. */
export interface SqliteStoreOptions {
  /** The database file; its folder must exist. Other processes may open the same file. */
  readonly path: string;
  readonly clock: Clock;
  /**
   * fsync policy (PRAGMA synchronous, WAL mode). `normal` (default): a COMMIT writes the WAL but does
   * not fsync it; fsync happens only at checkpoints (the WAL before its pages are copied back, then
   * the database file), which a helper thread runs every 256 committed writes (SqliteCheckpointer).
   * So every write whose promise resolved survives a crash or kill -9 of the process, but writes
   * committed since the last checkpoint may be lost on power loss or an OS crash (the file stays
   * consistent). `full`: every COMMIT also fsyncs the WAL, so resolved writes survive power loss too;
   * with group commit that is one fsync per batch, not per operation.
   */
  readonly synchronous?: 'normal' | 'full';
  /** How often to look for commits by other connections while anyone listens or follows (default 25). */
  readonly pollIntervalMs?: number;
  /** How many newest events (and KV changes) to keep (default 100,000). */
  readonly eventRetention?: number;
}

/** {@link SqliteStoreOptions} with defaults filled in; throws CONFIG_INVALID for a bad number. */
export function resolveSqliteOptions(options: SqliteStoreOptions): {
  readonly pollIntervalMs: number;
  readonly eventRetention: number;
  readonly synchronous: 'normal' | 'full';
} {
  return {
    pollIntervalMs: positiveOption('pollIntervalMs', options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS),
    eventRetention: positiveOption('eventRetention', options.eventRetention ?? DEFAULT_EVENT_RETENTION),
    synchronous: options.synchronous ?? 'normal',
  };
}
