import type { Config } from '../../core/config.schema.js';
import type { AgentBackend } from '../agent-runner.js';

/** The environment settings of one agent's runner. */
export interface AgentEnvSettings {
  /** Names and prefixes inherited beyond the allowlist. */
  readonly passEnv?: readonly string[];
  /** Literal additions. */
  readonly extraEnv?: Readonly<Record<string, string>>;
}

/**
 * The environment settings of an agent on `backend`: the backend's defaults (`backends.<backend>`) with
 * the agent's own entry (`agents.<name>`) on top: passEnv lists are joined, env values of the agent win.
 */
export function agentEnvOf(
  config: Partial<Pick<Config, 'backends'>>,
  backend: AgentBackend,
  entry: Pick<Config['agents'][string], 'passEnv' | 'env'> | undefined,
): AgentEnvSettings {
  const defaults = config.backends?.[backend];
  const passEnv = [...(defaults?.passEnv ?? []), ...(entry?.passEnv ?? [])];
  const hasEnv = defaults?.env !== undefined || entry?.env !== undefined;
  return {
    ...(passEnv.length > 0 && { passEnv: [...new Set(passEnv)] }),
    ...(hasEnv && { extraEnv: { ...defaults?.env, ...entry?.env } }),
  };
}
