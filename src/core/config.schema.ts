import { z } from 'zod';
import { LOG_LEVELS } from './logger.js';
import { MAILBOX_NAME_PATTERN } from './names.js';
import { nekoConfigSchema } from './neko-config.schema.js';

/** Defaults, as named constants: config merges defaults < file < env < flags. */
export const DEFAULT_STORE_URL = 'sqlite:.musubi/bus.db';
export const DEFAULT_LEASE_MS = 30_000;
export const DEFAULT_RETRY_BASE_MS = 5_000;
export const DEFAULT_RETRY_CAP_MS = 300_000;
export const DEFAULT_MAX_ATTEMPTS = 3;
export const DEFAULT_POLL_INTERVAL_MS = 25;
export const DEFAULT_HTTP_PORT = 7420;
/** Runs the dashboard's `POST /api/runs` may have going at once. */
export const DEFAULT_MAX_CONCURRENT_RUNS = 2;

const agentName = z.string().regex(MAILBOX_NAME_PATTERN, 'invalid agent name');
const port = z.number().int().min(0).max(65535);

const retrySchema = z
  .strictObject({
    baseMs: z.number().int().nonnegative().default(DEFAULT_RETRY_BASE_MS),
    capMs: z.number().int().nonnegative().default(DEFAULT_RETRY_CAP_MS),
    maxAttempts: z.number().int().min(1).max(1000).default(DEFAULT_MAX_ATTEMPTS),
  })
  .refine((r) => r.capMs >= r.baseMs, { message: 'retry.capMs must be >= retry.baseMs', path: ['capMs'] });

const busSchema = z.strictObject({
  leaseMs: z.number().int().min(1).default(DEFAULT_LEASE_MS),
  retry: retrySchema.default({
    baseMs: DEFAULT_RETRY_BASE_MS,
    capMs: DEFAULT_RETRY_CAP_MS,
    maxAttempts: DEFAULT_MAX_ATTEMPTS,
  }),
  /** How often a waiting receive re-checks a store another process writes to (SQLite). */
  pollIntervalMs: z.number().int().min(1).max(60_000).default(DEFAULT_POLL_INTERVAL_MS),
});

const listenerSchema = z.strictObject({
  enabled: z.boolean().default(false),
  host: z.string().default('127.0.0.1'),
  port: port,
});

/** True for a host name or address that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(host);
}

// The dashboard token travels in a cookie and an Authorization header: a safe alphabet, long enough to guess never.
const httpTokenSchema = z
  .string()
  .regex(/^[A-Za-z0-9._~+/=-]{16,512}$/, 'token must be 16-512 characters of A-Z a-z 0-9 . _ ~ + / = -');

const httpSchema = listenerSchema
  .extend({
    // The dashboard is on unless turned off: naming only a port or token must not switch it off.
    enabled: z.boolean().default(true),
    port: port.default(DEFAULT_HTTP_PORT),
    /** The hub's secret; unset, each start makes a fresh one (left in the user's token folder). */
    token: httpTokenSchema.optional(),
    /**
     * `none` serves the API to anyone on this machine without a token (`musubi up --no-token`): only for a
     * machine with one user, and warned about at start.
     */
    auth: z.enum(['token', 'none']).default('token'),
    /** Required (with `token`) to bind beyond loopback: the dashboard and the API reach the network. */
    networkAccess: z.boolean().default(false),
    /** Runs started from the page (`POST /api/runs`) at once; one more is refused with 429. */
    maxConcurrentRuns: z.number().int().min(1).max(64).default(DEFAULT_MAX_CONCURRENT_RUNS),
  })
  .refine((h) => h.auth === 'token' || h.token === undefined, {
    message: 'gateways.http.auth: none contradicts gateways.http.token',
    path: ['auth'],
  })
  .refine((h) => h.auth === 'token' || isLoopbackHost(h.host), {
    message: 'gateways.http.auth: none is only allowed on loopback',
    path: ['auth'],
  })
  .refine((h) => isLoopbackHost(h.host) || h.token !== undefined, {
    message: 'binding the HTTP gateway beyond loopback requires gateways.http.token',
    path: ['token'],
  })
  .refine((h) => isLoopbackHost(h.host) || h.networkAccess, {
    message:
      'binding the HTTP gateway beyond loopback puts the dashboard and its API (send, cancel, dead letters) ' +
      'on the network: set gateways.http.networkAccess: true to do it',
    path: ['networkAccess'],
  });

/** `gateways.http` as the schema fills it in when musubi.yaml says nothing of it. */
export function defaultHttpConfig(): z.output<typeof httpSchema> {
  return httpSchema.parse({});
}

/** Why an agent_sync bind beyond loopback needs its own setting: the protocol has no authentication. */
export const AGENT_SYNC_NETWORK_RISK =
  'agent_sync has no authentication: anyone who can reach the port can read every mailbox and drive the session';

const agentSyncSchema = listenerSchema
  .extend({
    port: port.default(9800),
    /** Required to bind beyond loopback (see {@link AGENT_SYNC_NETWORK_RISK}). */
    unauthenticatedNetworkAccess: z.boolean().default(false),
  })
  .refine((a) => isLoopbackHost(a.host) || a.unauthenticatedNetworkAccess, {
    message: `${AGENT_SYNC_NETWORK_RISK}; set gateways.agentSync.unauthenticatedNetworkAccess: true to bind beyond loopback anyway`,
    path: ['unauthenticatedNetworkAccess'],
  });

const gatewaysSchema = z.strictObject({
  /** The dashboard and REST API; `musubi up` serves it unless `enabled: false`. */
  http: httpSchema.optional(),
  agentSync: agentSyncSchema.optional(),
  /** yadon-agents sockets; unset fields follow the yadon environment (YADON_SOCKET_DIR, YADON_COUNT). */
  yadon: z
    .strictObject({
      enabled: z.boolean().default(false),
      socketDir: z.string().min(1).optional(),
      workers: z.number().int().min(1).max(8).optional(),
      workDir: z.string().min(1).optional(),
    })
    .optional(),
  /**
   * IGNITE's queue monitor over a workspace (default: IGNITE_WORKSPACE, else the working directory). The
   * monitor settings below override the workspace's system.yaml; IGNITE's environment variables override
   * them (docs/ignite.md).
   */
  ignite: z
    .strictObject({
      enabled: z.boolean().default(false),
      workspace: z.string().min(1).optional(),
      workers: z.number().int().min(1).max(64).optional(),
      /** system.yaml `queue.poll_interval`: the safety-net rescan. */
      pollIntervalMs: z.number().int().positive().optional(),
      /** system.yaml `queue.parallel_max`: agents served in parallel. */
      parallelMax: z.number().int().min(1).max(256).optional(),
      /** system.yaml `queue.max_turn`: a running turn is stopped after this long. */
      maxTurnMs: z.number().int().positive().optional(),
      /** system.yaml `defaults.task_timeout`: the lease of a claimed message. */
      taskTimeoutMs: z.number().int().positive().optional(),
    })
    .optional(),
});

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'invalid environment variable name');
/** An environment variable name, or a prefix ending in `*` (`AWS_*`). */
const envPattern = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*\*?$/, 'invalid environment variable name or prefix (NAME or PREFIX_*)');

const agentSchema = z.strictObject({
  /** Absent: the agent's role entry, then the first installed CLI, else `scripted` decide. */
  backend: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  role: z.string().min(1).optional(),
  systemPrompt: z.string().optional(),
  cwd: z.string().optional(),
  timeoutMs: z.number().int().positive().optional(),
  /** claude `--permission-mode` (`bypass` = `--dangerously-skip-permissions`, the default); see docs/agents.md. */
  permissionMode: z.string().min(1).optional(),
  /** codex `--sandbox`. */
  sandbox: z.enum(['read-only', 'workspace-write', 'danger-full-access']).optional(),
  /** claude `--max-turns`. */
  maxTurns: z.number().int().positive().optional(),
  /** Explicit environment additions for the agent process (everything else is allowlisted). */
  env: z.record(envName, z.string()).optional(),
  /** More variables the agent inherits from musubi's environment (names, or prefixes ending in `*`). */
  passEnv: z.array(envPattern).optional(),
});

/** Settings every agent on one backend gets (`backends.<claude|codex|…>`), `agent run --backend` included. */
const backendDefaultsSchema = z.strictObject({
  passEnv: z.array(envPattern).optional(),
  env: z.record(envName, z.string()).optional(),
});

const teamSchema = z.strictObject({
  pattern: z.enum(['three-phase', 'org', 'rounds', 'executor']),
  agents: z.array(agentName).min(1),
  budget: z
    .strictObject({
      maxTokens: z.number().int().positive().optional(),
      maxCostUsd: z.number().positive().optional(),
      /** Per-run ceilings: a turn reporting more is flagged over budget (claude also gets --max-budget-usd). */
      maxRunTokens: z.number().int().positive().optional(),
      maxRunCostUsd: z.number().positive().optional(),
    })
    .optional(),
});

/** The schema of `musubi.yaml`. Unknown keys are rejected so typos surface at start-up. */
export const configSchema = z.strictObject({
  store: z.string().min(1).default(DEFAULT_STORE_URL),
  log: z.strictObject({ level: z.enum(LOG_LEVELS).default('info') }).default({ level: 'info' }),
  bus: busSchema.default({
    leaseMs: DEFAULT_LEASE_MS,
    retry: { baseMs: DEFAULT_RETRY_BASE_MS, capMs: DEFAULT_RETRY_CAP_MS, maxAttempts: DEFAULT_MAX_ATTEMPTS },
    pollIntervalMs: DEFAULT_POLL_INTERVAL_MS,
  }),
  gateways: gatewaysSchema.default({}),
  agents: z.record(agentName, agentSchema).default({}),
  /** Per-backend defaults (passEnv, env) applied to every agent on that backend. */
  backends: z
    .partialRecord(
      z.enum(['claude', 'codex', 'gemini', 'copilot', 'opencode', 'scripted']),
      backendDefaultsSchema,
    )
    .default({}),
  teams: z.record(agentName, teamSchema).default({}),
  /** Concurrent turns per agent backend (default 4 each), so a big team does not trip rate limits. */
  agentConcurrency: z.record(z.string(), z.number().int().min(1).max(256)).default({}),
  /** musubi as N.E.K.O.'s agent server (docs/neko.md); absent = not configured. */
  neko: nekoConfigSchema.optional(),
  /**
   * A NATS store's JetStream settings. `replicas`: copies of the journal stream and KV bucket (1-5; the
   * store URL's `replicas=` wins). Absent: 3 on a cluster of at least 3 servers, else 1. Raising it
   * raises existing streams at the next start; it is never lowered.
   */
  jetstream: z.strictObject({ replicas: z.number().int().min(1).max(5).optional() }).optional(),
});

/** A validated musubi configuration with every default filled in. */
export type Config = z.infer<typeof configSchema>;
/** Configuration as written in a file (everything optional). */
export type ConfigInput = z.input<typeof configSchema>;
