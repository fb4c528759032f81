import { z } from 'zod';
import { MusubiError } from '../../core/errors.js';

/** Defaults of the queue monitor (spec/ignite.md 4, 6.3), in milliseconds unless named otherwise. */
export const IGNITE_DEFAULTS = {
  pollIntervalMs: 10_000,
  parallelMax: 4,
  heartbeatIntervalMs: 10_000,
  progressIntervalMs: 30_000,
  missingSessionGraceMs: 60_000,
  missingSessionThreshold: 3,
  progressMaxChars: 400,
  dlqMaxRetries: 3,
  taskTimeoutMs: 300_000,
  retryBaseMs: 5_000,
  retryMaxMs: 300_000,
  maxTurnMs: 3_600_000,
  stableMs: 500,
  sendLockTimeoutMs: 600_000,
  leaderGateCheckMs: 1_000,
} as const;

const ms = z.number().nonnegative().finite();
const positiveMs = z.number().positive().finite();

/** Every setting of the queue monitor, validated; durations in milliseconds. */
export const igniteSettingsSchema = z.strictObject({
  pollIntervalMs: positiveMs,
  parallelMax: z.number().int().min(1).max(256),
  heartbeatIntervalMs: positiveMs,
  progressIntervalMs: positiveMs,
  missingSessionGraceMs: ms,
  missingSessionThreshold: z.number().int().min(1),
  progressMaxChars: z.number().int().min(4),
  dlqMaxRetries: z.number().int().min(0).max(100),
  taskTimeoutMs: positiveMs,
  retryBaseMs: ms,
  retryMaxMs: ms,
  maxTurnMs: positiveMs,
  /** A file modified less than this long ago waits (foreign writers that do not rename atomically). */
  stableMs: ms,
  sendLockTimeoutMs: ms,
  leaderGateCheckMs: positiveMs,
  /** The IGNITE session name written into the status files. */
  session: z.string(),
  /** File-system events on (default); off leaves only the periodic rescan. */
  isWatching: z.boolean(),
});

/** The validated settings of one queue monitor. */
export type IgniteSettings = z.infer<typeof igniteSettingsSchema>;

/** The settings `musubi.yaml` may give under `gateways.ignite` (the ones `system.yaml` has too). */
export type IgniteConfigSettings = {
  readonly [K in 'pollIntervalMs' | 'parallelMax' | 'maxTurnMs' | 'taskTimeoutMs']?: number | undefined;
};

/** Sources of {@link loadIgniteSettings}, in increasing precedence after the defaults. */
export interface IgniteSettingsSources {
  /** The parsed `system.yaml` (any shape; unknown keys are ignored, known ones are checked). */
  readonly systemYaml?: unknown;
  /** `gateways.ignite` of musubi.yaml under `musubi up`: above system.yaml, below the environment. */
  readonly musubiConfig?: IgniteConfigSettings;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly flags?: { readonly intervalSeconds?: string; readonly session?: string };
}

/** Seconds variables (decimals allowed, so tests can use short times) and their settings. */
const SECONDS_ENV: ReadonlyArray<readonly [string, keyof IgniteSettings]> = [
  ['QUEUE_POLL_INTERVAL', 'pollIntervalMs'],
  ['QUEUE_HEARTBEAT_INTERVAL', 'heartbeatIntervalMs'],
  ['QUEUE_PROGRESS_INTERVAL', 'progressIntervalMs'],
  ['QUEUE_MISSING_SESSION_GRACE', 'missingSessionGraceMs'],
  ['RETRY_TIMEOUT', 'taskTimeoutMs'],
  ['RETRY_BASE_DELAY', 'retryBaseMs'],
  ['RETRY_MAX_DELAY', 'retryMaxMs'],
  ['QUEUE_MAX_TURN', 'maxTurnMs'],
  ['QUEUE_STABLE_DELAY', 'stableMs'],
  ['QUEUE_SEND_LOCK_TIMEOUT', 'sendLockTimeoutMs'],
];
const INT_ENV: ReadonlyArray<readonly [string, keyof IgniteSettings]> = [
  ['QUEUE_PARALLEL_MAX', 'parallelMax'],
  ['QUEUE_MISSING_SESSION_THRESHOLD', 'missingSessionThreshold'],
  ['QUEUE_PROGRESS_MAX_CHARS', 'progressMaxChars'],
  ['DLQ_MAX_RETRIES', 'dlqMaxRetries'],
];

function number(source: string, raw: string, isInt: boolean): number {
  const text = raw.trim();
  if (!(isInt ? /^\d+$/ : /^\d+(\.\d+)?$/).test(text)) {
    throw new MusubiError(
      'CONFIG_INVALID',
      `${source} must be a non-negative ${isInt ? 'integer' : 'number'}, got ${JSON.stringify(raw)}`,
    );
  }
  return Number(text);
}

const yamlSchema = z.looseObject({
  queue: z
    .looseObject({
      poll_interval: z.number().positive().optional(),
      parallel_max: z.number().int().min(1).optional(),
      max_turn: z.number().positive().optional(),
    })
    .optional(),
  defaults: z.looseObject({ task_timeout: z.number().min(30).max(3600).optional() }).optional(),
});

function fromYaml(systemYaml: unknown): Partial<IgniteSettings> {
  if (systemYaml === undefined || systemYaml === null) return {};
  const parsed = yamlSchema.safeParse(systemYaml);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new MusubiError('CONFIG_INVALID', `system.yaml: ${issues.join('; ')}`, { details: { issues } });
  }
  const { queue, defaults } = parsed.data;
  return {
    ...(queue?.poll_interval !== undefined && { pollIntervalMs: queue.poll_interval * 1000 }),
    ...(queue?.parallel_max !== undefined && { parallelMax: queue.parallel_max }),
    ...(queue?.max_turn !== undefined && { maxTurnMs: queue.max_turn * 1000 }),
    ...(defaults?.task_timeout !== undefined && { taskTimeoutMs: defaults.task_timeout * 1000 }),
  };
}

/**
 * Resolves the monitor settings: defaults < system.yaml < musubi.yaml < environment < flags (spec 6.3,
 * deviation 14); musubi.yaml is only a source under `musubi up`, flags only under `musubi ignite monitor`.
 * Environment seconds may carry decimals. Throws CONFIG_INVALID naming the variable or key at fault.
 */
export function loadIgniteSettings(sources: IgniteSettingsSources): IgniteSettings {
  const merged: Record<string, unknown> = {
    ...IGNITE_DEFAULTS,
    session: '',
    isWatching: true,
    ...fromYaml(sources.systemYaml),
  };
  for (const [key, value] of Object.entries(sources.musubiConfig ?? {})) {
    if (value !== undefined) merged[key] = value;
  }
  for (const [name, key] of SECONDS_ENV) {
    const raw = sources.env[name];
    if (raw !== undefined && raw !== '') merged[key] = number(name, raw, false) * 1000;
  }
  for (const [name, key] of INT_ENV) {
    const raw = sources.env[name];
    if (raw !== undefined && raw !== '') merged[key] = number(name, raw, true);
  }
  const session = sources.env['IGNITE_SESSION'];
  if (session !== undefined && session !== '') merged['session'] = session;
  if (sources.flags?.intervalSeconds !== undefined)
    merged['pollIntervalMs'] = number('--interval', sources.flags.intervalSeconds, false) * 1000;
  if (sources.flags?.session !== undefined) merged['session'] = sources.flags.session;
  const result = igniteSettingsSchema.safeParse(merged);
  if (!result.success) {
    const issues = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new MusubiError('CONFIG_INVALID', `invalid IGNITE settings: ${issues.join('; ')}`, {
      details: { issues },
    });
  }
  return result.data;
}
