import type { AgentBackend } from '../agent-runner.js';

/** The three model tiers of the yadon organisation. */
export type ModelTier = 'coordinator' | 'manager' | 'worker';

/** A backend name as users write it (`LLM_BACKEND=claude-opus`): the runner it uses and its tier models. */
export interface BackendAlias {
  readonly backend: AgentBackend;
  readonly models?: Readonly<Record<ModelTier, string>>;
}

/**
 * The backend names users may write, with yadon-agents' model tiers (spec yadon.md 4.5) plus `codex`
 * and `scripted`. `claude-opus` runs claude with opus at every tier.
 */
export const BACKEND_ALIASES: Readonly<Record<string, BackendAlias>> = {
  claude: { backend: 'claude', models: { coordinator: 'opus', manager: 'sonnet', worker: 'haiku' } },
  'claude-opus': { backend: 'claude', models: { coordinator: 'opus', manager: 'opus', worker: 'opus' } },
  gemini: {
    backend: 'gemini',
    // gemini's own aliases (0.61: pro, flash), which follow the models the account may use.
    models: { coordinator: 'pro', manager: 'flash', worker: 'flash' },
  },
  copilot: {
    backend: 'copilot',
    // Names in copilot 1.0.102's built-in catalogue (gpt-5.2-mini is not one).
    models: { coordinator: 'gpt-5.2', manager: 'gpt-5.4-mini', worker: 'gpt-5.4-mini' },
  },
  // No tier models: opencode's own config chooses its provider and model (1.18 has no `kimi` provider).
  opencode: { backend: 'opencode' },
  codex: { backend: 'codex' },
  scripted: { backend: 'scripted' },
};

/** The alias for a user-written name (trimmed, lower-cased), or undefined when unknown or empty. */
export function lookupAlias(
  name: string | undefined,
): (BackendAlias & { readonly name: string }) | undefined {
  const key = (name ?? '').trim().toLowerCase();
  const alias = Object.hasOwn(BACKEND_ALIASES, key) ? BACKEND_ALIASES[key] : undefined;
  return alias === undefined ? undefined : { ...alias, name: key };
}
