import type { AgentBackend, AgentRunner } from '../agents/agent-runner.js';
import { BudgetGuard } from '../agents/budget/budget-guard.js';
import { ConcurrencyLimiter } from '../agents/concurrency/concurrency-limiter.js';
import { createAgentRunner } from '../agents/create-agent-runner.js';
import { ChildReaper } from '../agents/process/child-reaper.js';
import type { ModelTier } from '../agents/selection/backend-aliases.js';
import { agentEnvOf } from '../agents/selection/agent-env.js';
import { selectBackend } from '../agents/selection/select-backend.js';
import type { Bus } from '../bus/bus.types.js';
import type { Config } from '../core/config.schema.js';

/** Who an agent is, for backend selection. */
export interface AgentIdentity {
  readonly role?: string;
  readonly tier?: ModelTier;
  /** yadon worker n (for `YADON_<n>_BACKEND`). */
  readonly workerNumber?: number;
}

/** Options of {@link createHubRunners}. */
export interface HubRunnersOptions {
  readonly config: Config;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly bus: Pick<Bus, 'kv' | 'publish'>;
  /** CLI backends whose binary is installed (see `installedBackends`). */
  readonly installed: ReadonlySet<AgentBackend>;
}

/** The runners of one hub: one per agent, sharing a child reaper and per-backend concurrency limits. */
export interface HubRunners {
  /** The runner of `agent` (built once, then cached): selection rules, its config entry, team budget. */
  runnerFor(agent: string, identity?: AgentIdentity): AgentRunner;
  /** The backend chosen for `agent` (for the agent directory and start-up warnings). */
  backendOf(agent: string, identity?: AgentIdentity): AgentBackend;
  /** The one reaper that kills every live agent process group if the hub process exits. */
  readonly reaper: ChildReaper;
}

/**
 * Builds the hub's agent runners. Every gateway and team gets its runners here, so the per-backend
 * concurrency limit (config `agentConcurrency`, default 4) holds across the whole hub and a team's budget
 * (config `teams.<team>.budget`) covers its agents whatever protocol they speak.
 */
export function createHubRunners(options: HubRunnersOptions): HubRunners {
  const { config, env } = options;
  const reaper = new ChildReaper();
  const limiter = new ConcurrencyLimiter({ limits: config.agentConcurrency });
  const runners = new Map<string, AgentRunner>();
  const select = (agent: string, identity: AgentIdentity) => {
    const role = identity.role ?? config.agents[agent]?.role;
    return selectBackend({
      agent,
      config,
      env,
      isInstalled: (b) => options.installed.has(b),
      ...(identity.tier !== undefined && { tier: identity.tier }),
      ...(identity.workerNumber !== undefined && { workerNumber: identity.workerNumber }),
      ...(role !== undefined && { role }),
    });
  };
  const budgetOf = (agent: string): { guard: BudgetGuard; agent: string } | undefined => {
    const team = Object.entries(config.teams).find(([, t]) => t.agents.includes(agent) && t.budget);
    const budget = team?.[1].budget;
    if (team === undefined || budget === undefined) return undefined;
    // Only the ceilings that are set: the guard's limits have no `undefined` members.
    const limits = Object.fromEntries(Object.entries(budget).filter(([, v]) => v !== undefined));
    const guard = new BudgetGuard({ kv: options.bus.kv, events: options.bus, team: team[0], limits });
    return { guard, agent };
  };
  return {
    reaper,
    backendOf: (agent, identity = {}) => select(agent, identity).backend,
    runnerFor(agent, identity = {}) {
      const cached = runners.get(agent);
      if (cached !== undefined) return cached;
      const selection = select(agent, identity);
      const entry = config.agents[agent];
      const budget = budgetOf(agent);
      const runner = createAgentRunner({
        backend: selection.backend,
        env,
        reaper,
        limiter,
        ...(selection.model !== undefined && { model: selection.model }),
        ...(entry?.systemPrompt !== undefined && { systemPrompt: entry.systemPrompt }),
        ...agentEnvOf(config, selection.backend, entry),
        ...(budget !== undefined && { budget }),
        settings: {
          ...(entry?.permissionMode !== undefined && { permissionMode: entry.permissionMode }),
          ...(entry?.sandbox !== undefined && { sandbox: entry.sandbox }),
          ...(entry?.maxTurns !== undefined && { maxTurns: entry.maxTurns }),
        },
      });
      runners.set(agent, runner);
      return runner;
    },
  };
}
