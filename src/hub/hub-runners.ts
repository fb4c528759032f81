import type { AgentBackend, AgentRunner } from '../agents/agent-runner.js';
import { BudgetGuard } from '../agents/budget/budget-guard.js';
import { ConcurrencyLimiter } from '../agents/concurrency/concurrency-limiter.js';
import { createAgentRunner } from '../agents/create-agent-runner.js';
import { ChildReaper } from '../agents/process/child-reaper.js';
import { knownSecrets } from '../agents/secrets/known-secrets.js';
import { withSecretMask } from '../agents/secrets/masked-runner.js';
import type { Bus } from '../bus/bus.types.js';
import { TurnLog } from '../agents/turns/turn-log.js';
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.schema.js';
import type { IdGenerator } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import { MusubiError } from '../core/errors.js';
import { SecretMask } from '../core/secret-mask.js';
import {
  flagAlias,
  planRunner,
  type AgentIdentity,
  type RunnerFlags,
  type RunnerPlan,
} from './runner-plan.js';

/** Options of {@link createHubRunners}. */
export interface HubRunnersOptions {
  readonly config: Config;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** CLI backends whose binary is installed (see `installedBackends`). */
  readonly installed: ReadonlySet<AgentBackend>;
  /** Where team budgets are counted (the store's KV) and reported; needed once an agent has a budget. */
  readonly bus?: Pick<Bus, 'kv' | 'publish'>;
  /** A backend and model named on the command line, for every agent. */
  readonly flags?: RunnerFlags;
  /** Wraps each agent's runner once, when it is built (the demo's progress observers and injected fault). */
  readonly decorate?: (agent: string, runner: AgentRunner) => AgentRunner;
  /**
   * Records every turn (summary, transcript, live events) in the bus's store; needs `bus`. Without it
   * turns are not recorded (commands that run one turn and print it).
   */
  readonly recordTurns?: { readonly clock: Clock; readonly ids: IdGenerator; readonly logger: Logger };
  /** Secrets of this start that are in neither config nor env (the dashboard's fresh token). */
  readonly extraSecrets?: readonly string[];
}

/** The runners of one hub: one per agent, sharing a child reaper and per-backend concurrency limits. */
export interface HubRunners {
  /** The runner of `agent` (built once, then cached): its {@link planOf} plan, decorated. */
  runnerFor(agent: string, identity?: AgentIdentity): AgentRunner;
  /** The rules `agent`'s turns run by (`planRunner`); undefined: a turn of no configured agent. */
  planOf(agent: string | undefined, identity?: AgentIdentity): RunnerPlan;
  /** A runner for one plan, not cached (one-turn commands). */
  runnerOf(plan: RunnerPlan): AgentRunner;
  /** The one reaper that kills every live agent process group if the hub process exits. */
  readonly reaper: ChildReaper;
  /** Where every turn of these runners is recorded; undefined when turns are not recorded. */
  readonly turns: TurnLog | undefined;
  /**
   * The secrets of the config and of what agents inherit (`knownSecrets`): every runner's events,
   * results and errors are masked with it, and so is anything else the hub keeps of an agent's work
   * (a run's test output).
   */
  readonly secretMask: SecretMask;
}

/**
 * The one runner factory. Every gateway, team and command gets its runners here, so the selection and
 * environment rules hold everywhere, the per-backend concurrency limit (`agentConcurrency`, default 4)
 * holds across the whole hub, a team's budget (`teams.<team>.budget`) covers its agents whatever
 * protocol they speak, and no secret an agent prints (an API key in an auth error) reaches the turn log,
 * a gateway or the terminal: each runner is masked (`withSecretMask`) below everything that records or
 * passes on what it reports. Throws AGENT_BACKEND_UNKNOWN at once for an unknown backend flag; `runnerFor`
 * and `planOf` throw it for an unknown backend in the config, `runnerOf` throws INTERNAL for a budgeted
 * plan when no bus was given.
 */
export function createHubRunners(options: HubRunnersOptions): HubRunners {
  const { config, env } = options;
  if (options.flags?.backend !== undefined) flagAlias(options.flags.backend);
  const reaper = new ChildReaper();
  const limiter = new ConcurrencyLimiter({ limits: config.agentConcurrency });
  const runners = new Map<string, AgentRunner>();
  const secretMask = new SecretMask([...knownSecrets({ config, env }), ...(options.extraSecrets ?? [])]);
  const record = options.recordTurns;
  const turns =
    record !== undefined && options.bus !== undefined
      ? new TurnLog({ kv: options.bus.kv, events: options.bus, ...record, secretMask })
      : undefined;
  const planOf = (agent: string | undefined, identity: AgentIdentity = {}): RunnerPlan =>
    planRunner({
      config,
      env,
      isInstalled: (b) => options.installed.has(b),
      agent,
      identity,
      ...(options.flags !== undefined && { flags: options.flags }),
    });
  const budgetOf = (plan: RunnerPlan): { guard: BudgetGuard; agent: string } | undefined => {
    if (plan.budget === undefined || plan.agent === undefined) return undefined;
    const bus = options.bus;
    if (bus === undefined) {
      throw new MusubiError('INTERNAL', `the budget of team ${plan.budget.team} needs the hub's bus`);
    }
    const { team, limits } = plan.budget;
    return { guard: new BudgetGuard({ kv: bus.kv, events: bus, team, limits }), agent: plan.agent };
  };
  const runnerOf = (plan: RunnerPlan): AgentRunner => {
    const budget = budgetOf(plan);
    const built = createAgentRunner({
      backend: plan.backend,
      env,
      reaper,
      limiter,
      settings: plan.settings,
      ...(plan.model !== undefined && { model: plan.model }),
      ...(plan.systemPrompt !== undefined && { systemPrompt: plan.systemPrompt }),
      ...(plan.passEnv !== undefined && { passEnv: plan.passEnv }),
      ...(plan.extraEnv !== undefined && { extraEnv: plan.extraEnv }),
      ...(budget !== undefined && { budget }),
    });
    const runner = withSecretMask(built, secretMask);
    if (turns === undefined) return runner;
    const team = plan.budget?.team;
    return turns.recorded(plan.agent ?? plan.backend, runner, team === undefined ? {} : { team });
  };
  return {
    reaper,
    turns,
    secretMask,
    planOf,
    runnerOf,
    runnerFor(agent, identity = {}) {
      const cached = runners.get(agent);
      if (cached !== undefined) return cached;
      const built = runnerOf(planOf(agent, identity));
      const runner = options.decorate?.(agent, built) ?? built;
      runners.set(agent, runner);
      return runner;
    },
  };
}
