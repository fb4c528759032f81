import type { MessagesReply, SayReply } from './api-schemas.js';
import { z } from 'zod';
import { MAX_BODY_BYTES, ONE_LINE_TEXT } from '../../core/envelope.js';
import { MusubiError } from '../../core/errors.js';
import type { StoredEvent } from '../../core/events.js';
import { lastEventCursor, readRecentEvents } from './event-tail.js';
import { foldMessageRows, type MessageRow } from './message-rows.js';
import { cursorParam, limitParam, nameParam, parseInput, parseQuery } from './query-schemas.js';
import type { RouteContext } from './route-context.js';

/** How far back `GET /api/messages` looks in the event log, in cursor positions. */
const SCAN_POSITIONS = 20_000;
/** Events read forward after `?after=` in one request. */
const FORWARD_EVENTS = 5_000;
/** Messages peeked per mailbox to fill in thread and body preview. */
const ENRICH_PEEK_LIMIT = 500;
const PREVIEW_CHARS = 280;

const messagesQuery = z.object({
  agent: nameParam.optional(),
  type: z.string().max(128).optional(),
  thread: z.string().max(256).optional(),
  after: cursorParam.optional(),
  limit: limitParam(200, 1000),
});

const sayBody = z.strictObject({
  to: z.union([z.literal('*'), nameParam]),
  text: z.string().min(1).max(64_000),
  from: nameParam.optional(),
  type: z
    .string()
    .regex(/^[A-Za-z0-9_][A-Za-z0-9_.:/-]{0,127}$/)
    .optional(),
  thread: z.string().min(1).max(256).regex(ONE_LINE_TEXT).optional(),
});

const isMessageEvent = (e: StoredEvent): boolean => e.type.startsWith('message.');

/** Fills in thread and a body preview from envelopes still stored (live or dead-lettered). */
async function enrich(ctx: RouteContext, rows: readonly MessageRow[]): Promise<void> {
  const byKey = new Map(rows.map((r) => [`${r.mailbox}\n${r.messageId}`, r]));
  const mailboxes = new Set(rows.map((r) => r.mailbox));
  const dead = await ctx.bus.listDeadLetters({ limit: 1000 });
  const envelopes = [...dead.map((d) => ({ mailbox: d.mailbox, envelope: d.envelope }))];
  for (const mailbox of mailboxes)
    envelopes.push(...(await ctx.bus.peek(mailbox, { limit: ENRICH_PEEK_LIMIT })));
  for (const { mailbox, envelope } of envelopes) {
    const row = byKey.get(`${mailbox}\n${envelope.id}`);
    if (row === undefined) continue;
    if (envelope.thread !== undefined) row.thread = envelope.thread;
    row.bodyPreview = Array.from(envelope.body.slice(0, PREVIEW_CHARS * 2))
      .slice(0, PREVIEW_CHARS)
      .join('');
  }
}

/** Message events after `after`, or the newest ones; `cursor` is the newest event looked at. */
async function messageEvents(
  ctx: RouteContext,
  after: number | undefined,
): Promise<{ cursor: number; events: StoredEvent[] }> {
  if (after !== undefined) {
    const read = await ctx.bus.readEvents({ after, limit: FORWARD_EVENTS });
    return { cursor: read.at(-1)?.cursor ?? after, events: read.filter(isMessageEvent) };
  }
  const tail = await lastEventCursor(ctx.bus);
  const events = await readRecentEvents(ctx.bus, {
    tail,
    match: isMessageEvent,
    limit: 50_000,
    scanLimit: SCAN_POSITIONS,
  });
  return { cursor: tail, events };
}

/**
 * Message routes:
 * - `GET /api/messages?agent=&type=&thread=&after=&limit=` → `{ cursor, messages: MessageRow[] }`, oldest
 *   first: the newest messages (or those after `after`) from the event log with their current status.
 *   `agent` matches sender or recipient. Thread and body preview are known only while the envelope is
 *   stored, so `thread` matches only such messages. `cursor` is the newest cursor looked at.
 * - `POST /api/say` `{ to: name | "*", text, from?, type?, thread? }` → 202 `{ sent: [{ to, id }] }`:
 *   a human message to one agent or to every agent in the directory (NOT_FOUND when there is none).
 */
export function registerMessageRoutes(ctx: RouteContext): void {
  ctx.app.get('/api/messages', async (request): Promise<MessagesReply> => {
    const q = parseQuery(messagesQuery, request.query);
    const { cursor, events } = await messageEvents(ctx, q.after);
    const rows = foldMessageRows(events).filter(
      (r) =>
        (q.agent === undefined || r.from === q.agent || r.mailbox === q.agent) &&
        (q.type === undefined || r.type === q.type),
    );
    const page = q.thread === undefined ? rows.slice(-q.limit) : rows;
    await enrich(ctx, page);
    const messages =
      q.thread === undefined ? page : page.filter((r) => r.thread === q.thread).slice(-q.limit);
    return { cursor, messages };
  });

  ctx.app.post('/api/say', async (request, reply): Promise<SayReply> => {
    const body = parseInput(sayBody, request.body, 'body');
    if (Buffer.byteLength(body.text, 'utf8') > MAX_BODY_BYTES) {
      throw new MusubiError('GATEWAY_FRAME_TOO_LARGE', 'text too large');
    }
    const from = body.from ?? ctx.sayFrom;
    const input = {
      from,
      type: body.type ?? 'say',
      body: body.text,
      headers: { source: 'dashboard' },
      ...(body.thread === undefined ? {} : { thread: body.thread }),
    };
    let results;
    if (body.to === '*') {
      const names = (await ctx.agents.list()).map((a) => a.name).filter((n) => n !== from);
      if (names.length === 0) throw new MusubiError('NOT_FOUND', 'no agent to say it to');
      results = await ctx.bus.broadcast(input, names);
    } else {
      results = [await ctx.bus.send({ ...input, to: body.to })];
    }
    reply.code(202);
    return { sent: results.map((r) => ({ to: r.envelope.to, id: r.envelope.id })) };
  });
}
