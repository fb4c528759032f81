import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { MailboxCounts } from '../../store/store.js';
import type { McpToolContext } from './mcp-tool-context.js';
import { toolOutcome, type ToolValue } from './tool-outcome.js';

const DESCRIPTION = `Show the team: every agent musubi knows (whatever protocol it is attached through) with its mailbox counts, plus mailboxes that hold mail but belong to no known agent.
When to call: to find out who you can send to, who is busy or offline, and where messages are piling up.
Returns { you, agents, otherMailboxes }. Each agent has name, protocol (mcp, agent-sync, yadon, ignite, neko, http, bus), state (idle | busy | waiting | offline | error), optional role, team, backend, currentTask and bubble, lastSeen, and mailbox { ready, delayed, leased, deadLetters }.
Takes no input. Errors: only unexpected store failures (INTERNAL, STORE_UNAVAILABLE).`;

type Counts = Pick<MailboxCounts, 'ready' | 'delayed' | 'leased' | 'deadLetters'>;

const EMPTY: Counts = { ready: 0, delayed: 0, leased: 0, deadLetters: 0 };

function countsOf(m: MailboxCounts | undefined): Counts {
  return m === undefined
    ? EMPTY
    : { ready: m.ready, delayed: m.delayed, leased: m.leased, deadLetters: m.deadLetters };
}

async function teamStatus(ctx: McpToolContext): Promise<ToolValue> {
  const [agents, mailboxes] = await Promise.all([ctx.agents.list(), ctx.bus.listMailboxes()]);
  const byName = new Map(mailboxes.map((m) => [m.mailbox, m]));
  return {
    you: ctx.agent,
    agents: agents.map((a) => ({
      ...a,
      lastSeen: new Date(a.lastSeen).toISOString(),
      mailbox: countsOf(byName.get(a.name)),
    })),
    otherMailboxes: mailboxes
      .filter((m) => !agents.some((a) => a.name === m.mailbox))
      .map((m) => ({ name: m.mailbox, ...countsOf(m) })),
  };
}

/** Registers `status`: the agent directory joined with mailbox counts. */
export function registerStatusTool(server: McpServer, ctx: McpToolContext): void {
  server.registerTool(
    'status',
    {
      title: 'Team status',
      description: DESCRIPTION,
      inputSchema: {},
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    () => toolOutcome('status', ctx.logger, () => teamStatus(ctx)),
  );
}
