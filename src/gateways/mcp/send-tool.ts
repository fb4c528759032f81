import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { envelopeOptions, envelopeOptionsInput } from './envelope-options.js';
import { bodyField, mailboxField, messageTypeField } from './input-fields.js';
import type { McpToolContext } from './mcp-tool-context.js';
import { toolOutcome } from './tool-outcome.js';

const DESCRIPTION = `Send one message to one agent's mailbox on the musubi bus; you are the sender.
When to call: to hand work to a teammate, answer a message you received (reuse its thread), or report a result.
The message waits durably in the recipient's mailbox until they receive and ack it, even while they are offline.
Returns { id, to, isDuplicate }: the message id, and isDuplicate true when a message with that id was already sent (nothing is sent twice).
Errors: MAILBOX_NAME_INVALID (bad "to"), ENVELOPE_INVALID (bad type, thread or headers, or a body over 1 MiB), USAGE_INVALID (missing or mistyped field).
To reach several agents use broadcast; for a short note to one or all, say.`;

/** Registers `send`: one message from this agent to one mailbox. */
export function registerSendTool(server: McpServer, ctx: McpToolContext): void {
  server.registerTool(
    'send',
    {
      title: 'Send a message',
      description: DESCRIPTION,
      inputSchema: {
        to: mailboxField.describe('Recipient agent (mailbox) name, e.g. "reviewer" or "ignitian_1".'),
        type: messageTypeField,
        body: bodyField,
        ...envelopeOptionsInput,
      },
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    },
    (args) =>
      toolOutcome('send', ctx.logger, async () => {
        const { envelope, isDuplicate } = await ctx.bus.send({
          from: ctx.agent,
          to: args.to,
          type: args.type,
          body: args.body,
          ...envelopeOptions(args),
        });
        return { id: envelope.id, to: envelope.to, isDuplicate };
      }),
  );
}
