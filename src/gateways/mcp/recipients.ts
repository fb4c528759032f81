import type { McpToolContext } from './mcp-tool-context.js';

/**
 * Everyone a broadcast without an explicit list reaches: every agent in the directory plus every
 * mailbox that holds messages, except the sender itself, sorted by name. Offline agents are included:
 * their mail waits in their mailbox.
 */
export async function everyoneElse(ctx: Pick<McpToolContext, 'agent' | 'agents' | 'bus'>): Promise<string[]> {
  const [agents, mailboxes] = await Promise.all([ctx.agents.list(), ctx.bus.listMailboxes()]);
  const names = new Set([...agents.map((a) => a.name), ...mailboxes.map((m) => m.mailbox)]);
  names.delete(ctx.agent);
  return [...names].sort();
}
