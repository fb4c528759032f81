import { z } from 'zod';
import type { KvState } from '../../bus/bus.types.js';
import type { BusEvent } from '../../core/events.js';
import { MusubiError, isMusubiError } from '../../core/errors.js';
import type { AgentUsage } from '../agent-runner.js';

/** Token and cost ceilings of one team: totals over every run, and per single run. */
export interface BudgetLimits {
  readonly maxTokens?: number;
  readonly maxCostUsd?: number;
  readonly maxRunTokens?: number;
  readonly maxRunCostUsd?: number;
}

/** What an agent has spent so far in a team (one KV row `budget/<team>/<agent>`). */
export interface AgentSpend {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly costUsd: number;
  readonly runs: number;
}

/** The narrow event port budgets publish to (`bus.publish` satisfies it). */
export interface BudgetEvents {
  publish(event: BusEvent): Promise<unknown>;
}

/** Options of {@link BudgetGuard}. */
export interface BudgetGuardOptions {
  readonly kv: Pick<KvState, 'kvGet' | 'kvSet' | 'kvList'>;
  readonly events: BudgetEvents;
  readonly team: string;
  readonly limits: BudgetLimits;
}

const spendSchema = z.object({
  inputTokens: z.number().nonnegative(),
  outputTokens: z.number().nonnegative(),
  costUsd: z.number().nonnegative(),
  runs: z.number().int().nonnegative(),
});

const ZERO: AgentSpend = { inputTokens: 0, outputTokens: 0, costUsd: 0, runs: 0 };
const MAX_CAS_ATTEMPTS = 20;

function parseSpend(value: unknown): AgentSpend {
  const parsed = spendSchema.safeParse(value);
  // A corrupt row must not reset the budget silently to zero spend… nor block the team forever:
  // it counts as zero and the next record overwrites it with a valid row.
  return parsed.success ? parsed.data : ZERO;
}

/**
 * Enforces a team's token and cost budget. Per-agent totals live in the store's KV space
 * (`budget/<team>/<agent>`, compare-and-set updates), so they survive a hub restart and are shared by
 * every hub on the same store. None of the seed systems has budgets; this is musubi's addition.
 */
export class BudgetGuard {
  readonly #options: BudgetGuardOptions;

  constructor(options: BudgetGuardOptions) {
    this.#options = options;
  }

  /** The ceilings this guard enforces. */
  get limits(): BudgetLimits {
    return this.#options.limits;
  }

  /** The team's totals over all its agents. */
  async teamSpend(): Promise<AgentSpend> {
    const rows = await this.#options.kv.kvList(`budget/${this.#options.team}/`);
    return rows
      .map((r) => parseSpend(r.value))
      .reduce(
        (a, b) => ({
          inputTokens: a.inputTokens + b.inputTokens,
          outputTokens: a.outputTokens + b.outputTokens,
          costUsd: a.costUsd + b.costUsd,
          runs: a.runs + b.runs,
        }),
        ZERO,
      );
  }

  /** Cost left before the team ceiling, or undefined when there is no cost ceiling. */
  async remainingCostUsd(): Promise<number | undefined> {
    const { maxCostUsd } = this.#options.limits;
    return maxCostUsd === undefined ? undefined : Math.max(0, maxCostUsd - (await this.teamSpend()).costUsd);
  }

  /**
   * Resolves when `agent` may start a run; otherwise publishes `budget.refused` and throws
   * BUDGET_EXCEEDED. Call it before any process starts.
   */
  async assertCanStart(agent: string): Promise<void> {
    const { maxTokens, maxCostUsd } = this.#options.limits;
    if (maxTokens === undefined && maxCostUsd === undefined) return;
    const spent = await this.teamSpend();
    const tokens = spent.inputTokens + spent.outputTokens;
    const isOverTokens = maxTokens !== undefined && tokens >= maxTokens;
    const isOverCost = maxCostUsd !== undefined && spent.costUsd >= maxCostUsd;
    if (!isOverTokens && !isOverCost) return;
    const data = {
      team: this.#options.team,
      agent,
      spentTokens: tokens,
      spentCostUsd: spent.costUsd,
      maxTokens: maxTokens ?? null,
      maxCostUsd: maxCostUsd ?? null,
    };
    await this.#options.events.publish({ type: 'budget.refused', data });
    const what = isOverTokens
      ? `${tokens} of ${maxTokens} tokens`
      : `$${spent.costUsd.toFixed(4)} of $${maxCostUsd}`;
    throw new MusubiError(
      'BUDGET_EXCEEDED',
      `team '${this.#options.team}' has spent its budget (${what}); run of '${agent}' refused`,
      { details: data },
    );
  }

  /**
   * Adds one run's usage to `agent`'s totals (compare-and-set, retried on conflict) and publishes
   * `budget.spent`, plus `budget.run_exceeded` when the run alone passed a per-run ceiling.
   * Resolves the agent's new totals.
   */
  async record(agent: string, usage: AgentUsage): Promise<AgentSpend> {
    const key = `budget/${this.#options.team}/${agent}`;
    for (let attempt = 0; ; attempt++) {
      const entry = await this.#options.kv.kvGet(key);
      const prev = entry === null ? ZERO : parseSpend(entry.value);
      const next: AgentSpend = {
        inputTokens: prev.inputTokens + usage.inputTokens,
        outputTokens: prev.outputTokens + usage.outputTokens,
        costUsd: prev.costUsd + usage.costUsd,
        runs: prev.runs + 1,
      };
      try {
        await this.#options.kv.kvSet(key, next, { expectedRevision: entry?.revision ?? 0 });
      } catch (err) {
        if (isMusubiError(err, 'STORE_CONFLICT') && attempt < MAX_CAS_ATTEMPTS) continue;
        throw err;
      }
      await this.#publishSpend(agent, usage, next);
      return next;
    }
  }

  async #publishSpend(agent: string, usage: AgentUsage, total: AgentSpend): Promise<void> {
    const team = this.#options.team;
    await this.#options.events.publish({ type: 'budget.spent', data: { team, agent, ...usage, total } });
    const { maxRunTokens, maxRunCostUsd } = this.#options.limits;
    const runTokens = usage.inputTokens + usage.outputTokens;
    if (
      (maxRunTokens !== undefined && runTokens > maxRunTokens) ||
      (maxRunCostUsd !== undefined && usage.costUsd > maxRunCostUsd)
    ) {
      await this.#options.events.publish({
        type: 'budget.run_exceeded',
        data: {
          team,
          agent,
          tokens: runTokens,
          costUsd: usage.costUsd,
          maxRunTokens: maxRunTokens ?? null,
          maxRunCostUsd: maxRunCostUsd ?? null,
        },
      });
    }
  }
}
