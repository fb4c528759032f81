import { z } from 'zod';
import { MusubiError } from '../../core/errors.js';
import { taskViewSchema, type TaskView } from './http-ports.js';
import { idParam, parseInput } from './query-schemas.js';
import type { RouteContext } from './route-context.js';

const idParams = z.object({ id: idParam });

/**
 * Task routes:
 * - `GET /api/tasks` → `{ isAvailable, tasks: TaskView[] }`; without a task source `isAvailable` is false
 *   and the list empty. Rows that fail the TaskView schema are left out and logged.
 * - `POST /api/tasks/{id}/cancel` → `{ task }` as it stands after the request; NOT_FOUND (404) for an
 *   unknown id or when there is no task source.
 */
export function registerTaskRoutes(ctx: RouteContext): void {
  const log = ctx.logger;
  const valid = (rows: readonly unknown[]): TaskView[] =>
    rows.flatMap((row) => {
      const parsed = taskViewSchema.safeParse(row);
      if (parsed.success) return [parsed.data];
      log.warn({ issues: parsed.error.issues.length }, 'task row left out: not a TaskView');
      return [];
    });

  ctx.app.get('/api/tasks', async () => {
    if (ctx.tasks === undefined) return { isAvailable: false, tasks: [] };
    return { isAvailable: true, tasks: valid(await ctx.tasks.list()) };
  });

  ctx.app.post('/api/tasks/:id/cancel', async (request) => {
    const { id } = parseInput(idParams, request.params, 'params');
    if (ctx.tasks === undefined) throw new MusubiError('NOT_FOUND', `no task ${JSON.stringify(id)}`);
    const [task] = valid([await ctx.tasks.cancel(id)]);
    return { task: task ?? null };
  });
}
