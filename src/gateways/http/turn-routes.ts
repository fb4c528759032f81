import { z } from 'zod';
import type { TurnReply, TurnsReply } from './api-schemas.js';
import { MusubiError } from '../../core/errors.js';
import { idParam, limitParam, nameParam, parseInput, parseQuery } from './query-schemas.js';
import type { RouteContext } from './route-context.js';

const turnsQuery = z.object({
  agent: nameParam.optional(),
  run: idParam.optional(),
  since: z
    .string()
    .regex(/^\d{1,15}$/, 'since must be a time in ms')
    .transform(Number)
    .optional(),
  limit: limitParam(200, 2000),
});
const agentParams = z.object({ name: nameParam });
const turnParams = z.object({ id: idParam });
const agentTurnsQuery = z.object({ limit: limitParam(50, 500) });

/**
 * Turn routes (the turn log's summaries and transcripts):
 * - `GET /api/turns?agent=&run=&since=&limit=` → `{ turns }`, newest first (the timeline, cost charts);
 * - `GET /api/agents/<name>/turns?limit=` → `{ turns }` of one agent, newest first;
 * - `GET /api/turns/<id>` → `{ turn, entries, droppedEntries }`; NOT_FOUND for an unknown turn.
 * Without a turn log the lists are empty and a turn is NOT_FOUND.
 */
export function registerTurnRoutes(ctx: RouteContext): void {
  ctx.app.get('/api/turns', async (request): Promise<TurnsReply> => {
    const q = parseQuery(turnsQuery, request.query);
    if (ctx.turns === undefined) return { turns: [] };
    return { turns: [...(await ctx.turns.list(q))] };
  });

  ctx.app.get('/api/agents/:name/turns', async (request): Promise<TurnsReply> => {
    const { name } = parseInput(agentParams, request.params, 'params');
    const { limit } = parseQuery(agentTurnsQuery, request.query);
    if (ctx.turns === undefined) return { turns: [] };
    return { turns: [...(await ctx.turns.list({ agent: name, limit }))] };
  });

  ctx.app.get('/api/turns/:id', async (request): Promise<TurnReply> => {
    const { id } = parseInput(turnParams, request.params, 'params');
    if (ctx.turns === undefined)
      throw new MusubiError('NOT_FOUND', `no turn ${id} (turns are not recorded here)`);
    const detail = await ctx.turns.get(id);
    return { turn: detail.turn, entries: [...detail.entries], droppedEntries: detail.droppedEntries };
  });
}
