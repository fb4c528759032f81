import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { limitField, mailboxField } from './input-fields.js';
import type { McpToolContext } from './mcp-tool-context.js';
import { toMessageView } from './message-view.js';
import { toolOutcome } from './tool-outcome.js';

/** Messages listed when `peek` names no limit. */
export const DEFAULT_PEEK_LIMIT = 10;
/** Most messages one `peek` lists. */
export const MAX_PEEK_LIMIT = 100;
/** Peeked bodies are cut here so a full mailbox cannot flood the context; receive shows them whole. */
export const PEEK_BODY_CHARS = 500;

const DESCRIPTION = `Look at the messages waiting in a mailbox without taking them (nothing is leased or removed).
When to call: to see what is queued for you (or for a teammate) before deciding to receive, or to check whether a message you sent is still waiting.
Returns { mailbox, counts: { ready, delayed, leased, total, deadLetters }, messages } with messages in delivery order (most urgent first, then send order). Each has id, from, type, priority, thread, headers, createdAt, attempt, state (ready | delayed | leased), availableAt and the body cut to ${PEEK_BODY_CHARS} characters (isBodyCut marks a cut one).
Errors: MAILBOX_NAME_INVALID, USAGE_INVALID (limit out of range).`;

/** Registers `peek`: list a mailbox's messages without claiming them. */
export function registerPeekTool(server: McpServer, ctx: McpToolContext): void {
  server.registerTool(
    'peek',
    {
      title: 'Peek at a mailbox',
      description: DESCRIPTION,
      inputSchema: {
        mailbox: mailboxField.optional().describe('Mailbox to look at; default: your own.'),
        limit: limitField(MAX_PEEK_LIMIT)
          .optional()
          .describe(`Most messages to list (default ${DEFAULT_PEEK_LIMIT}, at most ${MAX_PEEK_LIMIT}).`),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) =>
      toolOutcome('peek', ctx.logger, async () => {
        const mailbox = args.mailbox ?? ctx.agent;
        const [stored, counts] = await Promise.all([
          ctx.bus.peek(mailbox, { limit: args.limit ?? DEFAULT_PEEK_LIMIT }),
          ctx.bus.count(mailbox),
        ]);
        const { mailbox: _name, ...numbers } = counts;
        return {
          mailbox,
          counts: numbers,
          messages: stored.map((m) => ({
            ...toMessageView(m.envelope, { maxBodyChars: PEEK_BODY_CHARS }),
            state: m.state,
            availableAt: new Date(m.availableAt).toISOString(),
          })),
        };
      }),
  );
}
