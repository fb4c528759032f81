import type { EnvelopeInput } from '../../core/envelope.js';
import type { McpToolContext } from './mcp-tool-context.js';
import { everyoneElse } from './recipients.js';
import type { ToolValue } from './tool-outcome.js';

/**
 * Sends one message (one id) from the agent to each of `to`, or to everyone else when `to` is
 * undefined (see {@link everyoneElse}). Resolves the tool value `{ id, recipients, duplicates }`;
 * with nobody to reach it sends nothing and resolves `{ id: null, recipients: [], duplicates: [] }`.
 * Rejects MAILBOX_NAME_INVALID or ENVELOPE_INVALID before anything is sent.
 */
export async function fanOut(
  ctx: Pick<McpToolContext, 'agent' | 'agents' | 'bus'>,
  message: Omit<EnvelopeInput, 'to' | 'from'>,
  to: readonly string[] | undefined,
): Promise<ToolValue> {
  const recipients = to === undefined ? await everyoneElse(ctx) : [...new Set(to)];
  const results = await ctx.bus.broadcast({ ...message, from: ctx.agent }, recipients);
  const first = results[0];
  return {
    id: first === undefined ? null : first.envelope.id,
    recipients: results.map((r) => r.envelope.to),
    duplicates: results.filter((r) => r.isDuplicate).map((r) => r.envelope.to),
  };
}
