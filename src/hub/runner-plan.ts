import { AGENT_BACKENDS, type AgentBackend } from '../agents/agent-runner.js';
import type { BudgetLimits } from '../agents/budget/budget-guard.js';
import type { CliSettings } from '../agents/cli/cli-backend.js';
import { DEFAULT_CONCURRENCY } from '../agents/concurrency/concurrency-limiter.js';
import { agentEnvOf } from '../agents/selection/agent-env.js';
import { lookupAlias, type ModelTier } from '../agents/selection/backend-aliases.js';
import { selectBackend, type BackendSelection } from '../agents/selection/select-backend.js';
import type { Config } from '../core/config.schema.js';
import { MusubiError } from '../core/errors.js';

/** Who an agent is, for backend selection. */
export interface AgentIdentity {
  readonly role?: string;
  readonly tier?: ModelTier;
  /** yadon worker n (for `YADON_<n>_BACKEND`). */
  readonly workerNumber?: number;
}

/**
 * A backend and model named on the command line (`agent run --backend/--model`, `ignite monitor
 * --backend`, `demo --agent`): they win over every selection rule, for every agent of the process.
 */
export interface RunnerFlags {
  readonly backend?: string;
  readonly model?: string;
}

/** Everything that decides how one agent's turns run; {@link planRunner} derives it from config. */
export interface RunnerPlan {
  /** The configured agent; undefined for a turn of no agent (`musubi agent run` without --agent). */
  readonly agent?: string;
  readonly backend: AgentBackend;
  /** Undefined: the CLI's own default model. */
  readonly model?: string;
  /** What chose the backend: `flag`, `env LLM_BACKEND`, `config agents.<name>`, `default (…)`… */
  readonly source: string;
  readonly systemPrompt?: string;
  /** Permission mode, sandbox and max turns of the agent's config entry. */
  readonly settings: CliSettings;
  readonly passEnv?: readonly string[];
  readonly extraEnv?: Readonly<Record<string, string>>;
  /** The entry's working directory (`agents.<name>.cwd`). */
  readonly cwd?: string;
  /** Turns at once on this backend across the whole hub (`agentConcurrency`, default 4). */
  readonly concurrency: number;
  /** The budget of the first team listing the agent (`teams.<team>.budget`), if any. */
  readonly budget?: { readonly team: string; readonly limits: BudgetLimits };
}

/** Inputs of {@link planRunner}. */
export interface PlanRunnerInput {
  readonly config: Config;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Whether a CLI backend's binary is installed (the default choice). */
  readonly isInstalled: (backend: AgentBackend) => boolean;
  readonly agent: string | undefined;
  readonly identity?: AgentIdentity;
  readonly flags?: RunnerFlags;
}

type AgentEntry = Config['agents'][string];

function entryOf(config: Config, name: string | undefined): AgentEntry | undefined {
  return name !== undefined && Object.hasOwn(config.agents, name) ? config.agents[name] : undefined;
}

/** The backend alias a flag names; AGENT_BACKEND_UNKNOWN for any other name. */
export function flagAlias(name: string): NonNullable<ReturnType<typeof lookupAlias>> {
  const alias = lookupAlias(name);
  if (alias === undefined) {
    throw new MusubiError(
      'AGENT_BACKEND_UNKNOWN',
      `unknown agent backend '${name}' (known: ${AGENT_BACKENDS.join(', ')}, claude-opus)`,
      { details: { backend: name } },
    );
  }
  return alias;
}

function flagSelection(
  name: string,
  tier: ModelTier | undefined,
  entry: AgentEntry | undefined,
): BackendSelection {
  const alias = flagAlias(name);
  // A plain backend name keeps the CLI's own default model unless the agent has a model tier (the demo's
  // members); a tier alias (claude-opus) always names one.
  const tierModel =
    tier !== undefined
      ? alias.models?.[tier]
      : alias.name === alias.backend
        ? undefined
        : alias.models?.worker;
  const model = entry?.model ?? tierModel;
  return { backend: alias.backend, source: 'flag', ...(model !== undefined && { model }) };
}

function teamBudget(config: Config, agent: string | undefined): RunnerPlan['budget'] {
  if (agent === undefined) return undefined;
  const team = Object.entries(config.teams).find(([, t]) => t.agents.includes(agent) && t.budget);
  const budget = team?.[1].budget;
  if (team === undefined || budget === undefined) return undefined;
  // Only the ceilings that are set: the guard's limits have no `undefined` members.
  const limits = Object.fromEntries(Object.entries(budget).filter(([, v]) => v !== undefined));
  return { team: team[0], limits };
}

/**
 * The rules of one agent's runner, the same for every command and gateway:
 * - backend and model: a flag's backend (with the flag's model, else the entry's, else — for an agent
 *   with a tier — the tier model), else `selectBackend` (YADON_<n>_BACKEND, LLM_BACKEND,
 *   `agents.<agent>`, `agents.<role>`, the agent's name when it is a backend name, the first installed
 *   CLI, scripted), a flag's model winning;
 * - system prompt, permission mode, sandbox, max turns and working directory from `agents.<agent>`, else
 *   `agents.<role>`; environment from `backends.<backend>` with that entry on top (`agentEnvOf`);
 * - the backend's concurrency limit and the agent's team budget.
 * Throws AGENT_BACKEND_UNKNOWN for an unknown backend in a flag or the config.
 */
export function planRunner(input: PlanRunnerInput): RunnerPlan {
  const { config, agent, identity = {}, flags = {} } = input;
  const role = identity.role ?? entryOf(config, agent)?.role;
  const entry = entryOf(config, agent) ?? entryOf(config, role);
  const selection =
    flags.backend !== undefined
      ? flagSelection(flags.backend, identity.tier, entry)
      : selectBackend({
          // A turn of no agent: only the environment and the installed CLIs choose.
          agent: agent ?? '',
          config: agent === undefined ? { agents: {} } : config,
          env: input.env,
          isInstalled: input.isInstalled,
          ...(identity.tier !== undefined && { tier: identity.tier }),
          ...(identity.workerNumber !== undefined && { workerNumber: identity.workerNumber }),
          ...(role !== undefined && { role }),
        });
  const model = flags.model ?? selection.model;
  const budget = teamBudget(config, agent);
  return {
    backend: selection.backend,
    source: selection.source,
    ...(agent !== undefined && { agent }),
    ...(model !== undefined && { model }),
    ...(entry?.systemPrompt !== undefined && { systemPrompt: entry.systemPrompt }),
    settings: {
      ...(entry?.permissionMode !== undefined && { permissionMode: entry.permissionMode }),
      ...(entry?.sandbox !== undefined && { sandbox: entry.sandbox }),
      ...(entry?.maxTurns !== undefined && { maxTurns: entry.maxTurns }),
    },
    ...agentEnvOf(config, selection.backend, entry),
    ...(entry?.cwd !== undefined && { cwd: entry.cwd }),
    concurrency: config.agentConcurrency[selection.backend] ?? DEFAULT_CONCURRENCY,
    ...(budget !== undefined && { budget }),
  };
}
