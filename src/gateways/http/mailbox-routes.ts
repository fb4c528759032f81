import type { DeadLettersReply, LeasesReply, MailboxesReply } from './api-schemas.js';
import { z } from 'zod';
import { toEnvelopeView } from './envelope-view.js';
import { idParam, limitParam, nameParam, parseInput, parseQuery } from './query-schemas.js';
import type { RouteContext } from './route-context.js';

const peekQuery = z.object({ limit: limitParam(100, 1000) });
const deadQuery = z.object({ mailbox: nameParam.optional(), limit: limitParam(200, 1000) });
const nameParams = z.object({ name: nameParam });
const idParams = z.object({ id: idParam });

/** Leased messages looked at per mailbox by `GET /api/leases`. */
const LEASE_PEEK_LIMIT = 1000;

/**
 * Mailbox, lease and dead-letter routes:
 * - `GET /api/mailboxes` → `{ mailboxes: MailboxCounts[] }` (every mailbox holding messages or dead letters)
 * - `GET /api/mailboxes/{name}/messages?limit=` → `{ mailbox, messages }` in delivery order, nothing claimed
 * - `GET /api/leases` → `{ leases }`: messages currently leased, with attempt and lease end
 * - `GET /api/dead-letters?mailbox=&limit=` → `{ deadLetters }`, oldest first
 * - `POST /api/dead-letters/{id}/retry` → `{ requeued: [{ mailbox, messageId }] }`; NOT_FOUND (404) when none
 * - `DELETE /api/dead-letters/{id}` → `{ discarded: [{ mailbox, messageId }] }`; NOT_FOUND (404) when none
 * Bodies are cut to a preview (`isBodyCut`).
 */
export function registerMailboxRoutes(ctx: RouteContext): void {
  const { app, bus } = ctx;
  app.get('/api/mailboxes', async (): Promise<MailboxesReply> => ({ mailboxes: await bus.listMailboxes() }));

  app.get('/api/mailboxes/:name/messages', async (request) => {
    const { name } = parseInput(nameParams, request.params, 'params');
    const { limit } = parseQuery(peekQuery, request.query);
    const messages = await bus.peek(name, { limit });
    return {
      mailbox: name,
      messages: messages.map((m) => ({
        seq: m.seq,
        state: m.state,
        availableAt: m.availableAt,
        envelope: toEnvelopeView(m.envelope),
      })),
    };
  });

  app.get('/api/leases', async (): Promise<LeasesReply> => {
    const boxes = (await bus.listMailboxes()).filter((b) => b.leased > 0);
    const leases = [];
    for (const box of boxes) {
      for (const m of await bus.peek(box.mailbox, { limit: LEASE_PEEK_LIMIT })) {
        if (m.state !== 'leased') continue;
        const { id, from, type, attempt, priority } = m.envelope;
        leases.push({
          mailbox: m.mailbox,
          messageId: id,
          from,
          type,
          priority,
          attempt,
          leaseUntil: m.availableAt,
        });
      }
    }
    return { leases };
  });

  app.get('/api/dead-letters', async (request): Promise<DeadLettersReply> => {
    const query = parseQuery(deadQuery, request.query);
    const letters = await bus.listDeadLetters({
      limit: query.limit,
      ...(query.mailbox === undefined ? {} : { mailbox: query.mailbox }),
    });
    return {
      deadLetters: letters.map((d) => ({
        mailbox: d.mailbox,
        reason: d.reason,
        deadAt: d.deadAt,
        envelope: toEnvelopeView(d.envelope),
      })),
    };
  });

  app.post('/api/dead-letters/:id/retry', async (request) => {
    const { id } = parseInput(idParams, request.params, 'params');
    const requeued = await bus.retryDeadLetter(id);
    return { requeued: requeued.map((d) => ({ mailbox: d.mailbox, messageId: d.envelope.id })) };
  });

  app.delete('/api/dead-letters/:id', async (request) => {
    const { id } = parseInput(idParams, request.params, 'params');
    const discarded = await bus.discardDeadLetter(id);
    return { discarded: discarded.map((d) => ({ mailbox: d.mailbox, messageId: d.envelope.id })) };
  });
}
