import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { isMusubiError, MusubiError } from '../../core/errors.js';
import type { Delivery } from '../../store/store.js';
import { millisecondsField } from './input-fields.js';
import type { McpToolContext } from './mcp-tool-context.js';
import { toMessageView } from './message-view.js';
import { toolOutcome, type ToolValue } from './tool-outcome.js';

/** Wait of a receive that names no timeout. */
export const DEFAULT_RECEIVE_TIMEOUT_MS = 10_000;
/** Longest wait: MCP clients time requests out after about 60 s by default. */
export const MAX_RECEIVE_TIMEOUT_MS = 50_000;
/** Longest lease one receive may ask for (a day). */
export const MAX_LEASE_MS = 86_400_000;

function description(leaseMs: number): string {
  return `Take the next message from YOUR mailbox, waiting up to timeoutMs for one to arrive.
When to call: when you are ready for work or expect a reply. Messages come most urgent first, then in send order.
Returns { received: true, deliveryId, leaseUntil, message } where message has id, from, to, type, priority, thread, headers, body, createdAt and attempt.
The message is leased to you, not removed: when you have handled it you MUST call ack with its deliveryId. Without an ack it is delivered again (to you) after the lease ends (default ${Math.round(leaseMs / 1000)} s; pass leaseMs for longer work), and after repeated unacked deliveries it goes to the dead letters. attempt > 1 means an earlier delivery was not acked.
When nothing arrives in time it returns { received: false, waitedMs } - not an error; call receive again to keep waiting.
Errors: USAGE_INVALID (timeoutMs or leaseMs out of range), ABORTED (the server is shutting down).`;
}

/** Registers `receive`: claim the next message of this agent's mailbox with a lease. */
export function registerReceiveTool(server: McpServer, ctx: McpToolContext): void {
  server.registerTool(
    'receive',
    {
      title: 'Receive the next message',
      description: description(ctx.leaseMs),
      inputSchema: {
        timeoutMs: millisecondsField('timeoutMs', MAX_RECEIVE_TIMEOUT_MS)
          .optional()
          .describe(
            `How long to wait for a message, in ms (0 = do not wait; default ${DEFAULT_RECEIVE_TIMEOUT_MS}, at most ${MAX_RECEIVE_TIMEOUT_MS}).`,
          ),
        leaseMs: millisecondsField('leaseMs', MAX_LEASE_MS)
          .min(1000, { error: 'USAGE_INVALID: leaseMs must be at least 1000' })
          .optional()
          .describe(
            `How long the message stays yours before it is redelivered, in ms (default ${ctx.leaseMs}). Ask for enough to finish the work.`,
          ),
      },
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    (args, extra) =>
      toolOutcome('receive', ctx.logger, () =>
        receiveOne(ctx, {
          timeoutMs: args.timeoutMs ?? DEFAULT_RECEIVE_TIMEOUT_MS,
          leaseMs: args.leaseMs ?? ctx.leaseMs,
          signal: extra.signal,
        }),
      ),
  );
}

async function receiveOne(
  ctx: McpToolContext,
  options: { readonly timeoutMs: number; readonly leaseMs: number; readonly signal: AbortSignal },
): Promise<ToolValue> {
  const signal = AbortSignal.any([options.signal, ctx.signal]);
  const startedAt = ctx.clock.now();
  await ctx.presence.receiveStarted();
  let delivery: Delivery | null = null;
  try {
    delivery = await ctx.bus.receive(ctx.agent, {
      timeoutMs: options.timeoutMs,
      leaseMs: options.leaseMs,
      signal,
    });
  } catch (err) {
    // The client cancelled or the server is stopping: report it under our code, not as INTERNAL.
    if (!signal.aborted) throw err;
    if (isMusubiError(signal.reason)) throw signal.reason;
    throw new MusubiError('ABORTED', 'receive was cancelled by the client', { cause: err });
  } finally {
    await ctx.presence.receiveEnded(
      delivery === null
        ? null
        : {
            deliveryId: delivery.deliveryId,
            messageId: delivery.envelope.id,
            leaseUntil: delivery.leaseUntil,
          },
    );
  }
  if (delivery === null) return { received: false, waitedMs: ctx.clock.now() - startedAt };
  return {
    received: true,
    deliveryId: delivery.deliveryId,
    leaseUntil: new Date(delivery.leaseUntil).toISOString(),
    message: toMessageView(delivery.envelope),
  };
}
