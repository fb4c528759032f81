import type { AgentBackend, AgentRunner } from './agent-runner.js';
import { withBudget } from './budget/budgeted-runner.js';
import type { BudgetGuard } from './budget/budget-guard.js';
import { CliAgentRunner } from './cli/cli-agent-runner.js';
import type { CliSettings } from './cli/cli-backend.js';
import { CLI_BACKENDS } from './cli/cli-backends.js';
import type { ConcurrencyLimiter } from './concurrency/concurrency-limiter.js';
import { withConcurrencyLimit } from './concurrency/limited-runner.js';
import type { ChildReaper } from './process/child-reaper.js';
import { ScriptedRunner } from './scripted/scripted-runner.js';

/** Options of {@link createAgentRunner}. */
export interface CreateAgentRunnerOptions {
  readonly backend: AgentBackend;
  /** The environment the allowlist picks from (the daemon's own). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** One per hub: a single exit hook covers every live process group. */
  readonly reaper: ChildReaper;
  readonly model?: string;
  readonly systemPrompt?: string;
  readonly settings?: CliSettings;
  readonly extraEnv?: Readonly<Record<string, string>>;
  /** More names (or `PREFIX_*`) to inherit (config `passEnv`; see `agentEnvOf`). */
  readonly passEnv?: readonly string[];
  /** Run the agent's processes as this user (needs root). */
  readonly runAs?: { readonly uid: number; readonly gid: number };
  readonly outputCapBytes?: number;
  readonly graceMs?: number;
  /** Shared per-backend limit; omitted = unlimited. */
  readonly limiter?: ConcurrencyLimiter;
  /** Team budget of the agent; omitted = no budget. */
  readonly budget?: { readonly guard: BudgetGuard; readonly agent: string };
}

/**
 * Builds the runner of one agent: the backend's runner, then the budget check (outermost, so a refused
 * turn never waits for a slot), then the concurrency limit. Only hub/, the CLI and tests call this.
 */
export function createAgentRunner(options: CreateAgentRunnerOptions): AgentRunner {
  const common = {
    env: options.env,
    reaper: options.reaper,
    ...(options.extraEnv !== undefined && { extraEnv: options.extraEnv }),
    ...(options.passEnv !== undefined && { passEnv: options.passEnv }),
    ...(options.outputCapBytes !== undefined && { outputCapBytes: options.outputCapBytes }),
    ...(options.graceMs !== undefined && { graceMs: options.graceMs }),
  };
  // A CLI that can enforce a cost ceiling itself (claude --max-budget-usd) gets the per-run one.
  const maxRunCostUsd = options.budget?.guard.limits.maxRunCostUsd;
  const settings: CliSettings | undefined =
    maxRunCostUsd === undefined ? options.settings : { ...options.settings, maxBudgetUsd: maxRunCostUsd };
  let runner: AgentRunner =
    options.backend === 'scripted'
      ? new ScriptedRunner(common)
      : new CliAgentRunner({
          ...common,
          backend: CLI_BACKENDS[options.backend],
          ...(options.model !== undefined && { model: options.model }),
          ...(options.systemPrompt !== undefined && { systemPrompt: options.systemPrompt }),
          ...(settings !== undefined && { settings }),
          ...(options.runAs !== undefined && { runAs: options.runAs }),
        });
  if (options.limiter !== undefined) runner = withConcurrencyLimit(runner, options.limiter);
  if (options.budget !== undefined) runner = withBudget(runner, options.budget);
  return runner;
}
