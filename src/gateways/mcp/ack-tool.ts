import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { isMusubiError } from '../../core/errors.js';
import type { McpToolContext } from './mcp-tool-context.js';
import { toolOutcome } from './tool-outcome.js';

const DESCRIPTION = `Acknowledge a message you received: it is removed from your mailbox for good.
When to call: once you have handled a message from receive (done the work, or decided to ignore it). Pass the deliveryId that receive returned, not the message id.
Returns { acked: true, deliveryId }.
Errors: NOT_FOUND (unknown deliveryId, or already acked), LEASE_EXPIRED (the lease ended before the ack: the message will be or already was delivered again - receive it again and ack the new deliveryId).`;

/** Registers `ack`: settle a delivery so the message is not redelivered. */
export function registerAckTool(server: McpServer, ctx: McpToolContext): void {
  server.registerTool(
    'ack',
    {
      title: 'Acknowledge a message',
      description: DESCRIPTION,
      inputSchema: {
        deliveryId: z
          .string({ error: 'USAGE_INVALID: deliveryId must be a string' })
          .min(1, { error: 'USAGE_INVALID: deliveryId must not be empty' })
          .max(300, { error: 'NOT_FOUND: no such delivery' })
          .describe('The deliveryId returned by receive.'),
      },
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    (args) =>
      toolOutcome('ack', ctx.logger, async () => {
        try {
          await ctx.bus.ack(args.deliveryId);
        } catch (err) {
          // Either way this server no longer holds the lease.
          if (isMusubiError(err, 'NOT_FOUND') || isMusubiError(err, 'LEASE_EXPIRED'))
            await ctx.presence.settled(args.deliveryId);
          throw err;
        }
        await ctx.presence.settled(args.deliveryId);
        return { acked: true, deliveryId: args.deliveryId };
      }),
  );
}
