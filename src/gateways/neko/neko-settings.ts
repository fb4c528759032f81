import { isAbsolute, resolve } from 'node:path';
import { nekoConfigSchema, type NekoChannelConfig, type NekoConfig } from '../../core/neko-config.schema.js';

/** Where the three ZeroMQ sockets of main listen (host is always 127.0.0.1). */
export interface NekoZmqPorts {
  readonly sessionPub: number;
  readonly analyzePush: number;
  readonly agentPush: number;
}

/** The `neko` config with environment overrides applied and paths made absolute. */
export interface NekoSettings {
  readonly httpHost: string;
  readonly httpPort: number;
  readonly zmq: NekoZmqPorts;
  readonly assessor?: { readonly agent: string; readonly timeoutMs: number };
  readonly workDir: string;
  readonly priority?: readonly string[];
  readonly isProactiveEnabled: boolean;
  readonly enableOnStart: boolean;
  readonly heartbeatMs: number;
  readonly channels: readonly NekoChannelConfig[];
  /** Plugin entry timeout (NEKO_PLUGIN_EXECUTION_TIMEOUT seconds); null = none; undefined = 30 s. */
  readonly pluginTimeoutMs?: number | null;
  /** False when NEKO_DISABLE_AGENT_AUTO_RESTORE=1. */
  readonly isAutoRestoreEnabled: boolean;
}

/** A port from the environment: used only when it is an integer in 1..65535 (spec 2.1). */
export function envPort(raw: string | undefined, fallback: number): number {
  if (raw === undefined || !/^\s*\d+\s*$/.test(raw)) return fallback;
  const n = Number(raw);
  return n >= 1 && n <= 65535 ? n : fallback;
}

function pluginTimeout(raw: string | undefined): number | null | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  if (/^(null|none)$/i.test(raw.trim())) return null;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds)) return undefined;
  return seconds <= 0 ? null : seconds * 1000;
}

/**
 * Resolves the `neko` config section (defaults when absent) against the environment: NEKO_ZMQ_SESSION_PUB_PORT,
 * NEKO_ZMQ_ANALYZE_PUSH_PORT, NEKO_ZMQ_AGENT_PUSH_PORT, NEKO_PLUGIN_EXECUTION_TIMEOUT and
 * NEKO_DISABLE_AGENT_AUTO_RESTORE. Relative paths are taken from `cwd`. Part of config loading: the only
 * place the N.E.K.O. gateway reads the environment.
 */
export function resolveNekoSettings(
  config: NekoConfig | undefined,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
): NekoSettings {
  const c = config ?? nekoConfigSchema.parse({});
  const workDir = isAbsolute(c.workDir) ? c.workDir : resolve(cwd, c.workDir);
  const timeout = pluginTimeout(env['NEKO_PLUGIN_EXECUTION_TIMEOUT']);
  return {
    httpHost: c.httpHost,
    httpPort: c.httpPort,
    zmq: {
      sessionPub: envPort(env['NEKO_ZMQ_SESSION_PUB_PORT'], c.zmq.sessionPubPort),
      analyzePush: envPort(env['NEKO_ZMQ_ANALYZE_PUSH_PORT'], c.zmq.analyzePushPort),
      agentPush: envPort(env['NEKO_ZMQ_AGENT_PUSH_PORT'], c.zmq.agentPushPort),
    },
    ...(c.assessor !== undefined && { assessor: c.assessor }),
    workDir,
    ...(c.priority !== undefined && { priority: c.priority }),
    isProactiveEnabled: c.proactive,
    enableOnStart: c.enableOnStart,
    heartbeatMs: c.heartbeatMs,
    channels: c.channels,
    ...(timeout !== undefined && { pluginTimeoutMs: timeout }),
    isAutoRestoreEnabled: env['NEKO_DISABLE_AGENT_AUTO_RESTORE'] !== '1',
  };
}
