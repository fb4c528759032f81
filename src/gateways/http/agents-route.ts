import type { AgentsReply } from './api-schemas.js';
import { z } from 'zod';
import type { AgentRecord } from '../../bus/agent-directory.js';
import type { RouteContext } from './route-context.js';

/** Tokens and cost, summed over runs (the budget guard's per-agent rows). */
export interface Spend {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly costUsd: number;
  readonly runs: number;
}

/** One agent card: the directory record plus what it has spent across every team. */
export type AgentCard = AgentRecord & { readonly spend: Spend };

const spendSchema = z.object({
  inputTokens: z.number().nonnegative(),
  outputTokens: z.number().nonnegative(),
  costUsd: z.number().nonnegative(),
  runs: z.number().int().nonnegative(),
});

const ZERO: Spend = { inputTokens: 0, outputTokens: 0, costUsd: 0, runs: 0 };

function add(a: Spend, b: Spend): Spend {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    costUsd: a.costUsd + b.costUsd,
    runs: a.runs + b.runs,
  };
}

/** Per-agent spend from the `budget/<team>/<agent>` rows; rows that fail the schema count as nothing. */
async function spendByAgent(ctx: RouteContext): Promise<Map<string, Spend>> {
  const byAgent = new Map<string, Spend>();
  for (const entry of await ctx.bus.kv.kvList('budget/')) {
    const agent = entry.key.split('/')[2];
    const spend = spendSchema.safeParse(entry.value);
    if (agent === undefined || !spend.success) continue;
    byAgent.set(agent, add(byAgent.get(agent) ?? ZERO, spend.data));
  }
  return byAgent;
}

/**
 * `GET /api/agents`: `{ agents: AgentCard[], totals: Spend }`. Agents come from the agent directory
 * (every protocol); `totals` also counts spend of agents the directory does not know.
 */
export function registerAgentsRoute(ctx: RouteContext): void {
  ctx.app.get('/api/agents', async (): Promise<AgentsReply> => {
    const [records, spend] = await Promise.all([ctx.agents.list(), spendByAgent(ctx)]);
    const agents: AgentCard[] = records.map((r) => ({ ...r, spend: spend.get(r.name) ?? ZERO }));
    const totals = [...spend.values()].reduce(add, ZERO);
    return { agents, totals };
  });
}
