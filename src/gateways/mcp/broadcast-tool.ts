import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { envelopeOptions, envelopeOptionsInput } from './envelope-options.js';
import { fanOut } from './fan-out.js';
import { bodyField, mailboxField, messageTypeField } from './input-fields.js';
import type { McpToolContext } from './mcp-tool-context.js';
import { toolOutcome } from './tool-outcome.js';

/** Most recipients one broadcast names. */
export const MAX_BROADCAST_RECIPIENTS = 256;

const DESCRIPTION = `Send the same message (one id) to several mailboxes at once; you are the sender.
When to call: to announce something to the team, or fan the same request out to named agents. Leave "to" out to reach every other known agent (every agent in the directory and every mailbox with mail), never yourself.
Each recipient gets its own copy to receive and ack.
Returns { id, recipients, duplicates }: the message id (null when nobody was reached), who got it, and who already had a message with that id.
Errors: MAILBOX_NAME_INVALID (a bad name in "to"; nothing is sent), ENVELOPE_INVALID, USAGE_INVALID.`;

/** Registers `broadcast`: one message to a list of mailboxes, or to everyone else. */
export function registerBroadcastTool(server: McpServer, ctx: McpToolContext): void {
  server.registerTool(
    'broadcast',
    {
      title: 'Broadcast a message',
      description: DESCRIPTION,
      inputSchema: {
        to: z
          .array(mailboxField, { error: 'USAGE_INVALID: "to" must be a list of mailbox names' })
          .min(1, { error: 'USAGE_INVALID: "to" needs at least one name; leave it out to reach everyone' })
          .max(MAX_BROADCAST_RECIPIENTS, {
            error: `USAGE_INVALID: at most ${MAX_BROADCAST_RECIPIENTS} recipients`,
          })
          .optional()
          .describe('Recipient names. Leave out to reach every other known agent.'),
        type: messageTypeField,
        body: bodyField,
        ...envelopeOptionsInput,
      },
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    },
    (args) =>
      toolOutcome('broadcast', ctx.logger, () =>
        fanOut(ctx, { type: args.type, body: args.body, ...envelopeOptions(args) }, args.to),
      ),
  );
}
