import type {
  InboxItem,
  InboxReply,
  MessageDetailReply,
  MessagesReply,
  SayReply,
  SentEnvelope,
} from './api-schemas.js';
import { z } from 'zod';
import { ENVELOPE_ID_PATTERN, MAX_BODY_BYTES, ONE_LINE_TEXT, type Envelope } from '../../core/envelope.js';
import { MusubiError } from '../../core/errors.js';
import type { StoredEvent } from '../../core/events.js';
import { lastEventCursor, readRecentEvents } from './event-tail.js';
import { foldHistory } from './message-history.js';
import { foldMessageRows, previewOf, type MessageRow } from './message-rows.js';
import { inboxKind, inboxTitle } from './inbox-items.js';
import { cursorParam, limitParam, nameParam, parseInput, parseQuery } from './query-schemas.js';
import type { RouteContext } from './route-context.js';

/**
 * How far back `GET /api/messages` looks in the event log, in cursor positions per message asked for
 * (a message takes about four events: sent, claimed, acked, and the turn events around it), at least
 * 20,000 and at most 200,000.
 */
const SCAN_PER_MESSAGE = 10;
const SCAN_MIN = 20_000;
const SCAN_MAX = 200_000;
/** Events read forward after `?after=` in one request. */
const FORWARD_EVENTS = 5_000;
/** Messages peeked per mailbox to fill in thread and body preview. */
const ENRICH_PEEK_LIMIT = 500;
/** How far back a message's history is looked for, in cursor positions. */
const HISTORY_SCAN_POSITIONS = 100_000;

const messagesQuery = z.object({
  agent: nameParam.optional(),
  type: z.string().max(128).optional(),
  thread: z.string().max(256).optional(),
  after: cursorParam.optional(),
  limit: limitParam(200, 10_000),
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

// Escalations ride along: the inbox lists them, the message log ignores them.
const isMessageEvent = (e: StoredEvent): boolean => e.type.startsWith('message.') || e.type === 'escalation';

/** Fills in thread and a body preview from envelopes still stored (live or dead-lettered). */
async function enrich(ctx: RouteContext, all: readonly MessageRow[]): Promise<void> {
  // Events written since the sent event kept a copy have their preview already.
  const rows = all.filter((r) => r.bodyPreview === undefined);
  if (rows.length === 0) return;
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
    row.bodyPreview ??= previewOf(envelope.body);
  }
}

/** Message events after `after`, or the newest ones; `cursor` is the newest event looked at. */
async function messageEvents(
  ctx: RouteContext,
  after: number | undefined,
  wanted = 200,
): Promise<{ cursor: number; events: StoredEvent[] }> {
  if (after !== undefined) {
    const read = await ctx.bus.readEvents({ after, limit: FORWARD_EVENTS });
    return { cursor: read.at(-1)?.cursor ?? after, events: read.filter(isMessageEvent) };
  }
  const tail = await lastEventCursor(ctx.bus);
  const events = await readRecentEvents(ctx.bus, {
    tail,
    match: isMessageEvent,
    limit: 200_000,
    scanLimit: Math.min(SCAN_MAX, Math.max(SCAN_MIN, wanted * SCAN_PER_MESSAGE)),
  });
  return { cursor: tail, events };
}

const detailParams = z.object({ id: z.string().regex(ENVELOPE_ID_PATTERN, 'invalid message id') });
const inboxQuery = z.object({ after: cursorParam.optional(), limit: limitParam(100, 500) });

function storedCopy(envelope: Envelope): SentEnvelope {
  const { id, from, to, type, priority, thread, headers, body, createdAt } = envelope;
  return {
    id,
    from,
    to,
    type,
    priority,
    ...(thread !== undefined && { thread }),
    headers,
    body,
    isBodyCut: false,
    createdAt,
  };
}

/** The envelope of `messageId` while a mailbox still holds it (waiting, leased or dead). */
async function storedEnvelope(
  ctx: RouteContext,
  messageId: string,
  mailboxes: readonly string[],
): Promise<Envelope | undefined> {
  for (const mailbox of mailboxes) {
    const live = (await ctx.bus.peek(mailbox, { limit: 1000 })).find((m) => m.envelope.id === messageId);
    if (live !== undefined) return live.envelope;
    const dead = (await ctx.bus.listDeadLetters({ mailbox, limit: 1000 })).find(
      (d) => d.envelope.id === messageId,
    );
    if (dead !== undefined) return dead.envelope;
  }
  return undefined;
}

/** The message `messageId`: its rows, what was sent and its whole history; NOT_FOUND when the log has none. */
async function messageDetail(ctx: RouteContext, messageId: string): Promise<MessageDetailReply> {
  const tail = await lastEventCursor(ctx.bus);
  const events = await readRecentEvents(ctx.bus, {
    tail,
    match: (e) => 'messageId' in e && e.messageId === messageId,
    limit: 10_000,
    scanLimit: HISTORY_SCAN_POSITIONS,
  });
  const copies = foldMessageRows(events);
  if (copies.length === 0) {
    throw new MusubiError('NOT_FOUND', `no message ${messageId} in the event log`, {
      details: { messageId },
    });
  }
  const mailboxes = copies.map((c) => c.mailbox);
  const stored = await storedEnvelope(ctx, messageId, mailboxes);
  const sent = events.find((e) => e.type === 'message.sent');
  let envelope: SentEnvelope | undefined;
  if (stored !== undefined) envelope = storedCopy(stored);
  else if (sent?.type === 'message.sent' && sent.body !== undefined) {
    envelope = {
      id: messageId,
      from: sent.from,
      to: sent.mailbox,
      type: sent.messageType,
      priority: sent.priority,
      ...(sent.thread !== undefined && { thread: sent.thread }),
      headers: sent.headers ?? {},
      body: sent.body,
      isBodyCut: sent.isBodyCut === true,
      createdAt: sent.at,
    };
  }
  return {
    messageId,
    copies,
    ...(envelope !== undefined && { envelope }),
    isStored: stored !== undefined,
    history: foldHistory(events, ctx.clock.now()),
  };
}

/**
 * Message routes:
 * - `GET /api/messages?agent=&type=&thread=&after=&limit=` → `{ cursor, messages: MessageRow[] }`, oldest
 *   first: the newest messages (or those after `after`) from the event log with their current status.
 *   `agent` matches sender or recipient. Thread and body preview are known only while the envelope is
 *   stored, so `thread` matches only such messages. `cursor` is the newest cursor looked at.
 * - `GET /api/messages/<envelope-id>` → `{ messageId, copies, envelope?, isStored, history }`: one message
 *   with the envelope (stored, else the copy its `message.sent` event kept) and every step of its life.
 * - `GET /api/inbox?after=&limit=` → `{ cursor, items }`: the messages sent to the human, newest last,
 *   each with a kind and a one-line title.
 * - `POST /api/say` `{ to: name | "*", text, from?, type?, thread? }` → 202 `{ sent: [{ to, id }] }`:
 *   a human message to one agent or to every agent in the directory (NOT_FOUND when there is none); it is
 *   always from the page's sender (`human`): a `from` naming anyone else is GATEWAY_FORBIDDEN (403).
 */
export function registerMessageRoutes(ctx: RouteContext): void {
  ctx.app.get('/api/messages', async (request): Promise<MessagesReply> => {
    const q = parseQuery(messagesQuery, request.query);
    const { cursor, events } = await messageEvents(ctx, q.after, q.limit);
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

  ctx.app.get('/api/messages/:id', async (request): Promise<MessageDetailReply> => {
    const { id } = parseInput(detailParams, request.params, 'params');
    return messageDetail(ctx, id);
  });

  ctx.app.get('/api/inbox', async (request): Promise<InboxReply> => {
    const q = parseQuery(inboxQuery, request.query);
    const { cursor, events } = await messageEvents(ctx, q.after);
    // The person at the page reads the mailbox they write from (`human` unless configured).
    const toHuman = events.filter((e) => !(e.type === 'message.sent' && e.mailbox !== ctx.sayFrom));
    const rows = foldMessageRows(toHuman)
      .filter((r) => r.mailbox === ctx.sayFrom)
      .slice(-q.limit);
    await enrich(ctx, rows);
    const bodies = new Map(
      toHuman.flatMap((e) =>
        e.type === 'message.sent' && e.body !== undefined ? [[e.messageId, e.body]] : [],
      ),
    );
    const items = rows.map((r): InboxItem => ({
      ...r,
      kind: inboxKind(r.type, bodies.get(r.messageId) ?? r.bodyPreview ?? ''),
      title: inboxTitle(bodies.get(r.messageId) ?? r.bodyPreview ?? ''),
    }));
    // A message that used up its attempts is the human's to decide on (retry or discard it).
    const allRows = new Map(foldMessageRows(events).map((r) => [`${r.mailbox}\n${r.messageId}`, r]));
    // A sender that takes answers about its given-up messages (a run: retry, skip, abort) says so in
    // an `answers` header; the reply to the item goes to that sender.
    const answers = new Map(
      events.flatMap((e) =>
        e.type === 'message.sent' && e.headers?.['answers'] !== undefined
          ? [[`${e.mailbox}\n${e.messageId}`, e.headers['answers']]]
          : [],
      ),
    );
    for (const e of events) {
      if (e.type !== 'escalation') continue;
      const key = `${e.mailbox}\n${e.messageId}`;
      const row = allRows.get(key);
      if (row === undefined) continue;
      const choices = answers.get(key);
      items.push({
        ...row,
        cursor: e.cursor,
        at: e.at,
        kind: 'escalation',
        title: `${row.type} from ${row.from} to ${e.mailbox} gave up after ${e.attempts} attempts: ${e.reason}${choices === undefined ? '' : ` — reply ${choices}`}`,
      });
    }
    items.sort((a, b) => a.cursor - b.cursor);
    return { cursor, items: items.slice(-q.limit) };
  });

  ctx.app.post('/api/say', async (request, reply): Promise<SayReply> => {
    const body = parseInput(sayBody, request.body, 'body');
    if (Buffer.byteLength(body.text, 'utf8') > MAX_BODY_BYTES) {
      throw new MusubiError('GATEWAY_FRAME_TOO_LARGE', 'text too large');
    }
    // The page speaks for one person: writing as an agent would forge that agent's messages.
    if (body.from !== undefined && body.from !== ctx.sayFrom) {
      throw new MusubiError(
        'GATEWAY_FORBIDDEN',
        `the dashboard writes as ${ctx.sayFrom}; it may not send as ${body.from}`,
      );
    }
    const from = ctx.sayFrom;
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
