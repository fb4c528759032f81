import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { fanOut } from './fan-out.js';
import { mailboxField } from './input-fields.js';
import type { McpToolContext } from './mcp-tool-context.js';
import { toolOutcome } from './tool-outcome.js';

/** The message type of everything `say` sends (the agent_sync and yadon `say` commands use it too). */
export const SAY_TYPE = 'say';
/** Longest text `say` accepts: it is for short remarks; send carries real payloads. */
export const MAX_SAY_CHARS = 4000;

const DESCRIPTION = `Say something short to one agent, or to everyone else on the team: a message of type "say" with your text as its body.
When to call: a quick status remark, a question or a heads-up that needs no particular structure. Leave "to" out to tell every other known agent (directory and mailboxes), never yourself.
Returns { id, recipients, duplicates } like broadcast (id null when nobody was reached).
Errors: MAILBOX_NAME_INVALID (bad "to"), USAGE_INVALID (empty text or over ${MAX_SAY_CHARS} characters).`;

/** Registers `say`: a short `say` message to one agent or to everyone else. */
export function registerSayTool(server: McpServer, ctx: McpToolContext): void {
  server.registerTool(
    'say',
    {
      title: 'Say something to the team',
      description: DESCRIPTION,
      inputSchema: {
        text: z
          .string({ error: 'USAGE_INVALID: text must be a string' })
          .min(1, { error: 'USAGE_INVALID: text must not be empty' })
          .max(MAX_SAY_CHARS, { error: `USAGE_INVALID: text is at most ${MAX_SAY_CHARS} characters` })
          .describe('What to say.'),
        to: mailboxField.optional().describe('One agent to tell; leave out to tell everyone else.'),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    },
    (args) =>
      toolOutcome('say', ctx.logger, () =>
        fanOut(ctx, { type: SAY_TYPE, body: args.text }, args.to === undefined ? undefined : [args.to]),
      ),
  );
}
