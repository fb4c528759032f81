import type { FastifyInstance } from 'fastify';
import { publicTask, taskListItem } from './neko-wire.js';
import { isJsonObject, sendDetail, type NekoApiContext } from './http-route-context.js';
import { sessionKeyOf } from './neko-frames.js';
import { isoMicros } from './neko-wire.js';

type IdParams = { Params: { id: string } };

/** Tasks, cancel, deferred completion and direct plugin execution (spec neko.md 3.3). */
export function registerTaskRoutes(app: FastifyInstance, ctx: NekoApiContext): void {
  const { executor, registry } = ctx;
  const ownTask = async (id: string) => {
    const task = await registry.get(id);
    return task?.owner === executor.owner ? task : null;
  };

  app.get('/tasks', async () => {
    await registry.sweep();
    const tasks = await registry.list({ owner: executor.owner });
    return {
      tasks: tasks.map(taskListItem),
      debug: { task_registry_count: tasks.length, total_returned: tasks.length },
    };
  });

  app.get<IdParams>('/tasks/:id', async (request, reply) => {
    const task = await ownTask(request.params.id);
    return task === null ? sendDetail(reply, 404, 'task not found') : publicTask(task);
  });

  app.post<IdParams>('/tasks/:id/cancel', async (request, reply) => {
    const outcome = await executor.cancel(request.params.id);
    if (outcome.outcome === 'not_found') return sendDetail(reply, 404, 'task not found');
    if (outcome.outcome === 'not_active')
      return { success: false, error: 'task is not active', status: outcome.task.state };
    return { success: true, task_id: outcome.task.id, status: 'cancelled' };
  });

  app.post<IdParams>('/api/agent/tasks/:id/complete', async (request, reply) => {
    const task = await ownTask(request.params.id);
    if (task === null) return sendDetail(reply, 404, 'Task not found');
    if (task.kind !== 'user_plugin')
      return sendDetail(reply, 403, 'Only user_plugin tasks can be completed via this endpoint');
    const outcome = await registry.completeDeferred(task.id);
    if (outcome.outcome === 'not_found') return sendDetail(reply, 404, 'Task not found');
    if (outcome.outcome === 'not_running') return { ok: true, skipped: true, status: outcome.task.state };
    if (outcome.outcome === 'not_deferred')
      return sendDetail(reply, 400, 'Not a deferred task - use normal completion flow');
    return { ok: true };
  });

  app.post('/plugin/execute', async (request, reply) => {
    if (!executor.isReady) return sendDetail(reply, 503, 'Task executor not ready');
    if (!executor.flags.state.analyzerEnabled) return sendDetail(reply, 403, 'Agent master switch is off');
    if (!executor.flags.isGroupEnabled('user_plugin'))
      return sendDetail(reply, 403, 'User plugin is disabled');
    const body = isJsonObject(request.body) ? request.body : {};
    const args = body['args'] ?? {};
    if (!isJsonObject(args)) return sendDetail(reply, 400, 'args must be a JSON object');
    const pluginId = body['plugin_id'];
    if (typeof pluginId !== 'string' || pluginId.trim() === '')
      return sendDetail(reply, 400, 'plugin_id required');
    const entryId =
      typeof body['entry_id'] === 'string' && body['entry_id'] !== '' ? body['entry_id'] : 'run';
    const conversationId = body['conversation_id'];
    const task = await executor.executePlugin({
      pluginId: pluginId.trim(),
      entryId,
      args,
      sessionKey: sessionKeyOf(body['lanlan_name']),
      ...(typeof conversationId === 'string' && { conversationId }),
    });
    if (task === null) return sendDetail(reply, 403, 'User plugin is disabled');
    return { success: true, task_id: task.id, status: 'running', start_time: isoMicros(task.startedAt) };
  });
}
