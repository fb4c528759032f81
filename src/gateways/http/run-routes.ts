import { z } from 'zod';
import type { RunReply, RunsReply } from './api-schemas.js';
import { MusubiError } from '../../core/errors.js';
import { idParam, parseInput } from './query-schemas.js';
import type { RouteContext } from './route-context.js';

const NOT_HERE = 'this hub runs no `musubi run` (start it inside a git repository)';

const runParams = z.object({ id: idParam });
const startBody = z.strictObject({
  goal: z.string().trim().min(1, 'goal must not be empty').max(64_000),
  team: z
    .string()
    .regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/, 'invalid team name')
    .optional(),
  agent: z
    .string()
    .regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/, 'invalid agent name')
    .optional(),
  workers: z.number().int().min(1).max(16).optional(),
  test: z.string().trim().min(1).max(2000).optional(),
  budgetUsd: z.number().positive().max(10_000).optional(),
});

/**
 * Run routes (the runs of `musubi run` in this hub's store):
 * - `GET /api/runs` → `{ canStart, reason?, runs }`, newest first;
 * - `GET /api/runs/<id>` → `{ run }` (RUN_NOT_FOUND, 404);
 * - `POST /api/runs` `{ goal, team?, agent?, workers?, test?, budgetUsd? }` → 202 `{ run }`: started in
 *   the background in the hub's repository (USAGE_INVALID, 400, when the hub cannot run one);
 * - `POST /api/runs/<id>/stop` → `{ run }`: stops a run of this hub (resumable);
 * - `POST /api/runs/<id>/resume` → 202 `{ run }`.
 */
export function registerRunRoutes(ctx: RouteContext): void {
  const source = ctx.runs;
  ctx.app.get('/api/runs', async (): Promise<RunsReply> => {
    if (source === undefined) return { canStart: false, reason: NOT_HERE, runs: [] };
    const [status, runs] = await Promise.all([source.status(), source.list()]);
    return { ...status, runs: [...runs] };
  });
  ctx.app.get('/api/runs/:id', async (request): Promise<RunReply> => {
    const { id } = parseInput(runParams, request.params, 'params');
    return { run: await required(source).get(id) };
  });
  ctx.app.post('/api/runs', async (request, reply): Promise<RunReply> => {
    const body = parseInput(startBody, request.body, 'body');
    const run = await required(source).start(body);
    reply.code(202);
    return { run };
  });
  ctx.app.post('/api/runs/:id/stop', async (request): Promise<RunReply> => {
    const { id } = parseInput(runParams, request.params, 'params');
    return { run: await required(source).stop(id) };
  });
  ctx.app.post('/api/runs/:id/resume', async (request, reply): Promise<RunReply> => {
    const { id } = parseInput(runParams, request.params, 'params');
    const run = await required(source).resume(id);
    reply.code(202);
    return { run };
  });
}

function required(source: RouteContext['runs']): NonNullable<RouteContext['runs']> {
  if (source === undefined) throw new MusubiError('USAGE_INVALID', NOT_HERE);
  return source;
}
