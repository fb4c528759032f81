import type { AgentActivity, AgentsReply } from './api-schemas.js';
import { z } from 'zod';
import type { AgentRecord } from '../../bus/agent-directory.js';
import type { TurnSummary } from '../../agents/turns/turn-record.js';
import { agentActivity } from './agent-activity.js';
import type { RouteContext } from './route-context.js';

/** Turns looked at for each agent's state: the newest per agent among these. */
const RECENT_TURNS = 1000;

/** Tokens and cost, summed over runs (the budget guard's per-agent rows). */
export interface Spend {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly costUsd: number;
  readonly runs: number;
}

/** One agent card: the directory record, what it has spent across every team and what it is doing. */
export type AgentCard = AgentRecord & { readonly spend: Spend; readonly activity?: AgentActivity };

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

/** Tokens and cost per agent summed over `turns` (each turn one run). */
function turnSpend(turns: readonly TurnSummary[]): Map<string, Spend> {
  const byAgent = new Map<string, Spend>();
  for (const t of turns) {
    const one: Spend = { ...t.usage, runs: 1 };
    byAgent.set(t.agent, add(byAgent.get(t.agent) ?? ZERO, one));
  }
  return byAgent;
}

/**
 * `GET /api/agents`: `{ agents: AgentCard[], totals: Spend }`. Agents come from the agent directory
 * (every protocol); `totals` also counts spend of agents the directory does not know. Spend is the
 * budget rows' where a team budget counts the agent, else the sum over its recorded turns (the newest
 * 1,000 turns of the hub). Each card's `activity` comes from the agent's newest recorded turn and its
 * directory state.
 */
export function registerAgentsRoute(ctx: RouteContext): void {
  ctx.app.get('/api/agents', async (): Promise<AgentsReply> => {
    const [records, spend, turns] = await Promise.all([
      ctx.agents.list(),
      spendByAgent(ctx),
      ctx.turns?.list({ limit: RECENT_TURNS }) ?? Promise.resolve([]),
    ]);
    const newest = new Map<string, TurnSummary>();
    for (const t of turns) if (!newest.has(t.agent)) newest.set(t.agent, t);
    // An agent no team budget counts is counted from its recorded turns.
    for (const [agent, used] of turnSpend(turns)) if (!spend.has(agent)) spend.set(agent, used);
    const now = ctx.clock.now();
    const agents: AgentCard[] = records.map((r) => ({
      ...r,
      spend: spend.get(r.name) ?? ZERO,
      activity: agentActivity(r, newest.get(r.name), now),
    }));
    const totals = [...spend.values()].reduce(add, ZERO);
    return { agents, totals };
  });
}
