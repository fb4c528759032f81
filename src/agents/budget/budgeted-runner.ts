import type { AgentRunInput, AgentRunner, AgentRunResult } from '../agent-runner.js';
import type { BudgetGuard } from './budget-guard.js';

/**
 * Wraps a runner with a team budget: a turn is refused with BUDGET_EXCEEDED (and a `budget.refused`
 * event) before any process starts once the team's budget is spent; the usage of every finished turn
 * that reports one is added to `agent`'s totals in the store.
 */
export function withBudget(
  runner: AgentRunner,
  options: { readonly guard: BudgetGuard; readonly agent: string },
): AgentRunner {
  return {
    backend: runner.backend,
    available: () => runner.available(),
    async run(input: AgentRunInput): Promise<AgentRunResult> {
      await options.guard.assertCanStart(options.agent);
      const result = await runner.run(input);
      if (result.usage !== undefined) await options.guard.record(options.agent, result.usage);
      return result;
    },
  };
}
