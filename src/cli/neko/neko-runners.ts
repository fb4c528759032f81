import type { AgentRunner } from '../../agents/agent-runner.js';
import { createAgentRunner } from '../../agents/create-agent-runner.js';
import { agentEnvOf } from '../../agents/selection/agent-env.js';
import type { ChildReaper } from '../../agents/process/child-reaper.js';
import { lookupAlias } from '../../agents/selection/backend-aliases.js';
import type { Config } from '../../core/config.schema.js';
import { MusubiError } from '../../core/errors.js';

/**
 * Runners for `musubi neko serve`: a name is an `agents.<name>` entry of the config (its backend,
 * model, system prompt and env) or a backend name (`claude`, `claude-opus`, `codex`, `scripted`, …).
 * Unknown → AGENT_BACKEND_UNKNOWN. Each name gets one runner.
 */
export function nekoRunnerFor(
  config: Config,
  env: Readonly<Record<string, string | undefined>>,
  reaper: ChildReaper,
): (name: string) => AgentRunner {
  const runners = new Map<string, AgentRunner>();
  return (name) => {
    const cached = runners.get(name);
    if (cached !== undefined) return cached;
    const entry = Object.hasOwn(config.agents, name) ? config.agents[name] : undefined;
    const alias = lookupAlias(entry?.backend ?? name);
    if (alias === undefined) {
      throw new MusubiError(
        'AGENT_BACKEND_UNKNOWN',
        `neko: '${name}' is neither a configured agent nor a backend`,
      );
    }
    const model = entry?.model ?? alias.models?.manager;
    const runner = createAgentRunner({
      backend: alias.backend,
      env,
      reaper,
      ...(model !== undefined && { model }),
      ...(entry?.systemPrompt !== undefined && { systemPrompt: entry.systemPrompt }),
      ...agentEnvOf(config, alias.backend, entry),
    });
    runners.set(name, runner);
    return runner;
  };
}
