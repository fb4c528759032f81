import type { Config } from '../../core/config.schema.js';
import { MusubiError } from '../../core/errors.js';
import type { AgentBackend } from '../agent-runner.js';
import { lookupAlias, type ModelTier } from './backend-aliases.js';

/** The order in which an installed CLI is picked when nothing is configured. */
const DEFAULT_ORDER: readonly AgentBackend[] = ['claude', 'codex', 'gemini', 'copilot', 'opencode'];

/** Inputs of {@link selectBackend}. */
export interface SelectBackendInput {
  /** The agent's name (a key of `config.agents`). */
  readonly agent: string;
  /** The agent's role; `config.agents.<role>` applies when the agent itself has no entry. */
  readonly role?: string;
  /** Which model tier the agent uses with a tiered backend (default `worker`). */
  readonly tier?: ModelTier;
  /** yadon worker number n: `YADON_<n>_BACKEND` applies. */
  readonly workerNumber?: number;
  readonly config: Pick<Config, 'agents'>;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Whether a CLI backend's binary is installed; used only for the default. */
  readonly isInstalled: (backend: AgentBackend) => boolean;
}

/** The chosen backend, its model (undefined = the CLI's own default) and where the choice came from. */
export interface BackendSelection {
  readonly backend: AgentBackend;
  readonly model?: string;
  readonly source: string;
}

function fromAlias(name: string | undefined, tier: ModelTier, source: string): BackendSelection | undefined {
  const alias = lookupAlias(name);
  if (alias === undefined) return undefined;
  const model = alias.models?.[tier];
  return { backend: alias.backend, source, ...(model !== undefined && { model }) };
}

function fromConfig(
  entry: Config['agents'][string] | undefined,
  tier: ModelTier,
  source: string,
): BackendSelection | undefined {
  // An entry without a backend (only env, model or role settings) does not choose one.
  if (entry?.backend === undefined) return undefined;
  const alias = lookupAlias(entry.backend);
  if (alias === undefined) {
    throw new MusubiError('AGENT_BACKEND_UNKNOWN', `${source}: unknown agent backend '${entry.backend}'`, {
      details: { backend: entry.backend },
    });
  }
  const model = entry.model ?? alias.models?.[tier];
  return { backend: alias.backend, source, ...(model !== undefined && { model }) };
}

/**
 * Picks the backend and model of one agent. Most specific first, environment before file at each level
 * (the config rule defaults < file < env < flags):
 * 1. `YADON_<n>_BACKEND` for yadon worker n, with that backend's OWN tier model;
 * 2. `LLM_BACKEND` (the seed systems' global switch);
 * 3. `config.agents.<agent>`, then `config.agents.<role>` (its `model`, else the backend's tier model);
 * 4. the agent's own name when it is a backend name (a N.E.K.O. channel's `agent: codex`), with its tier
 *    model;
 * 5. the first installed CLI of claude, codex, gemini, copilot, opencode; else `scripted`.
 * Unknown or empty environment values are ignored (as yadon-agents does); an unknown backend in the
 * config file throws AGENT_BACKEND_UNKNOWN.
 */
export function selectBackend(input: SelectBackendInput): BackendSelection {
  const tier = input.tier ?? 'worker';
  if (input.workerNumber !== undefined) {
    const name = `YADON_${input.workerNumber}_BACKEND`;
    const selection = fromAlias(input.env[name], 'worker', `env ${name}`);
    if (selection !== undefined) return selection;
  }
  const global = fromAlias(input.env['LLM_BACKEND'], tier, 'env LLM_BACKEND');
  if (global !== undefined) return global;
  const own = fromConfig(input.config.agents[input.agent], tier, `config agents.${input.agent}`);
  if (own !== undefined) return own;
  if (input.role !== undefined) {
    const byRole = fromConfig(input.config.agents[input.role], tier, `config agents.${input.role}`);
    if (byRole !== undefined) return byRole;
  }
  const byName = fromAlias(input.agent, tier, `agent name ${input.agent}`);
  if (byName !== undefined) return byName;
  const installed = DEFAULT_ORDER.find((b) => input.isInstalled(b));
  if (installed === undefined) return { backend: 'scripted', source: 'default (no agent CLI installed)' };
  const fallback = fromAlias(installed, tier, `default (first installed CLI)`);
  return fallback ?? { backend: installed, source: 'default (first installed CLI)' };
}
