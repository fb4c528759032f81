import { existsSync } from 'node:fs';
import type { AgentRunInput, AgentRunner, AgentRunResult } from '../../agents/agent-runner.js';
import type { ChildReaper } from '../../agents/process/child-reaper.js';
import type { Config } from '../../core/config.schema.js';
import { instructionsFor } from '../../teams/org/org-instructions.js';
import { roleOf } from '../../teams/org/org-roles.js';
import { sendToolFor } from './workspace-init.js';

/** What {@link lazyRunner} needs to pick and build one agent's runner. */
export interface LazyRunnerOptions {
  readonly agent: string;
  readonly config: Config;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly reaper: ChildReaper;
  /** Forces a backend (flag); otherwise the selection rules apply to the agent, then its role. */
  readonly backend?: string;
}

/**
 * The runner of one IGNITE agent, chosen on first use: `agents.<name>` in config, else `agents.<role>`
 * (`ignitian_3` -> `ignitian`), else the selection rules (LLM_BACKEND, the first installed CLI, scripted).
 */
export function lazyRunner(options: LazyRunnerOptions): AgentRunner {
  let runner: Promise<AgentRunner> | undefined;
  let resolved: AgentRunner | undefined;
  const get = (): Promise<AgentRunner> =>
    (runner ??= (async () => {
      const [{ resolveAgentChoice }, { createAgentRunner }] = await Promise.all([
        import('../../agents/selection/resolve-agent-choice.js'),
        import('../../agents/create-agent-runner.js'),
      ]);
      const role = roleOf(options.agent) ?? options.agent;
      const name = options.config.agents[options.agent] !== undefined ? options.agent : role;
      const choice = await resolveAgentChoice({
        config: options.config,
        env: options.env,
        agent: name,
        ...(options.backend !== undefined && { backend: options.backend }),
      });
      resolved = createAgentRunner({ ...choice, env: options.env, reaper: options.reaper });
      return resolved;
    })());
  return {
    // Reports `scripted` until the first turn has picked the real backend.
    get backend() {
      return resolved?.backend ?? 'scripted';
    },
    run: async (input: AgentRunInput): Promise<AgentRunResult> => (await get()).run(input),
    available: async () => (await get()).available(),
  };
}

/** The role instructions of each agent of a runtime dir (system prompt of every turn). */
export function systemPrompts(runtimeDir: string): (agent: string) => string | undefined {
  const wrapper = sendToolFor(runtimeDir);
  const hasWrappers = existsSync(wrapper);
  const tools = hasWrappers
    ? { send: wrapper, mime: `${runtimeDir}/bin/ignite_mime` }
    : { send: 'musubi ignite send', mime: 'musubi ignite mime' };
  return (agent) => instructionsFor(agent, tools);
}
