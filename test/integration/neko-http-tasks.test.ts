// N.E.K.O. HTTP task routes: /tasks, cancel, deferred completion, /admin/control and /plugin/execute.
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../fixtures/neko-harness.js';
import { nekoSession, withPlugins } from '../fixtures/neko-http-session.js';

describe('N.E.K.O. HTTP task API', () => {
  const { start, close } = nekoSession();
  afterEach(close);

  it('GET /tasks and /tasks/{id}; cancel a running task, a finished one and an unknown one', async () => {
    const { channels, plugins } = withPlugins();
    const s = await start({ channels });
    const slow = (await s.http('POST', '/plugin/execute', { plugin_id: 'slow', lanlan_name: 's9' })).body;
    const quick = (
      await s.http('POST', '/plugin/execute', { plugin_id: 'notes', entry_id: 'add', args: { text: 'hi' } })
    ).body;
    await until(async () => (await s.registry.get(String(quick['task_id'])))?.state === 'completed');
    const list = (await s.http('GET', '/tasks')).body;
    expect(list['debug']).toEqual({ task_registry_count: 2, total_returned: 2 });
    expect(list['tasks']).toEqual([
      expect.objectContaining({
        id: slow['task_id'],
        type: 'plugin_direct',
        status: 'running',
        lanlan_name: 's9',
        source: 'runtime',
        result: null,
        error: null,
      }),
      expect.objectContaining({
        id: quick['task_id'],
        status: 'completed',
        lanlan_name: '__default__',
        source: 'runtime',
      }),
    ]);
    const one = (await s.http('GET', `/tasks/${String(slow['task_id'])}`)).body;
    expect(one).toMatchObject({
      id: slow['task_id'],
      status: 'running',
      params: { plugin_id: 'slow', entry_id: 'run', args: {} },
    });
    expect(Object.keys(one).filter((k) => k.startsWith('_'))).toEqual([]);
    expect(JSON.stringify(one)).not.toContain('triggerFingerprint');
    expect(await s.http('GET', '/tasks/nope')).toEqual({ status: 404, body: { detail: 'task not found' } });
    const cancel = await s.http('POST', `/tasks/${String(slow['task_id'])}/cancel`);
    expect(cancel).toEqual({
      status: 200,
      body: { success: true, task_id: slow['task_id'], status: 'cancelled' },
    });
    const update = await s.waitFor(
      (e) =>
        e.event_type === 'task_update' && (e['task'] as Record<string, unknown>)['status'] === 'cancelled',
    );
    expect(update['task']).toMatchObject({
      id: slow['task_id'],
      error: 'Cancelled by user',
      type: 'plugin_direct',
      end_time: expect.any(String),
    });
    expect(await s.http('POST', `/tasks/${String(quick['task_id'])}/cancel`)).toEqual({
      status: 200,
      body: { success: false, error: 'task is not active', status: 'completed' },
    });
    expect(await s.http('POST', '/tasks/unknown/cancel')).toEqual({
      status: 404,
      body: { detail: 'task not found' },
    });
    plugins.releaseSlow();
  });

  it('POST /api/agent/tasks/{id}/complete: deferred, not deferred, wrong type, not running, unknown', async () => {
    const { channels } = withPlugins();
    const s = await start({ channels });
    expect(await s.say('please waiter wait for the callback')).toBe(true);
    const deferredUpdate = await s.waitFor(
      (e) =>
        e.event_type === 'task_update' && (e['task'] as Record<string, unknown>)['type'] === 'user_plugin',
    );
    const deferredId = String((deferredUpdate['task'] as Record<string, unknown>)['id']);
    await until(async () => (await s.registry.get(deferredId))?.deferredUntil !== undefined);
    expect((await s.http('GET', `/tasks/${deferredId}`)).body).toMatchObject({
      status: 'running',
      deferred_timeout: expect.any(Number),
    });
    expect(await s.http('POST', `/api/agent/tasks/${deferredId}/complete`)).toEqual({
      status: 200,
      body: { ok: true },
    });
    await s.waitFor(
      (e) =>
        e.event_type === 'task_update' && (e['task'] as Record<string, unknown>)['status'] === 'completed',
    );
    expect(s.events.filter((e) => e.event_type === 'task_result')).toEqual([]);
    expect(await s.http('POST', `/api/agent/tasks/${deferredId}/complete`)).toEqual({
      status: 200,
      body: { ok: true, skipped: true, status: 'completed' },
    });
    const direct = (await s.http('POST', '/plugin/execute', { plugin_id: 'slow' })).body;
    expect(await s.http('POST', `/api/agent/tasks/${String(direct['task_id'])}/complete`)).toEqual({
      status: 403,
      body: { detail: 'Only user_plugin tasks can be completed via this endpoint' },
    });
    expect(await s.say('please slow down the build')).toBe(true);
    const slowUpdate = await s.waitFor(
      (e) =>
        e.event_type === 'task_update' &&
        (e['task'] as Record<string, unknown>)['type'] === 'user_plugin' &&
        (e['task'] as Record<string, unknown>)['id'] !== deferredId,
    );
    const slowId = String((slowUpdate['task'] as Record<string, unknown>)['id']);
    expect(await s.http('POST', `/api/agent/tasks/${slowId}/complete`)).toEqual({
      status: 400,
      body: { detail: 'Not a deferred task - use normal completion flow' },
    });
    expect(await s.http('POST', '/api/agent/tasks/missing/complete')).toEqual({
      status: 404,
      body: { detail: 'Task not found' },
    });
  });

  it('POST /admin/control: end_all, enable_analyzer, disable_analyzer, unknown action', async () => {
    const { channels } = withPlugins();
    const s = await start({ channels });
    const task = (await s.http('POST', '/plugin/execute', { plugin_id: 'slow' })).body;
    expect(await s.http('POST', '/admin/control', { action: 'end_all' })).toEqual({
      status: 200,
      body: { success: true, message: 'all tasks terminated and cleared' },
    });
    // The update travels to main over the ZeroMQ bridge: it may arrive just after the HTTP reply.
    const cancelled = await s.waitFor(
      (e) =>
        e.event_type === 'task_update' && (e['task'] as Record<string, unknown>)['status'] === 'cancelled',
    );
    expect(cancelled['task']).toMatchObject({ id: task['task_id'], end_time: expect.any(String) });
    expect((await s.http('GET', '/tasks')).body['tasks']).toEqual([]);
    expect((await s.http('POST', '/admin/control', { action: 'disable_analyzer' })).body).toEqual({
      success: true,
      analyzer_enabled: false,
    });
    expect(
      (await s.http('POST', '/admin/control', { action: 'enable_analyzer', profile: { a: 1 } })).body,
    ).toEqual({
      success: true,
      analyzer_enabled: true,
      profile: { a: 1 },
    });
    expect(await s.http('POST', '/admin/control', { action: 'x' })).toEqual({
      status: 400,
      body: { detail: 'unknown action' },
    });
  });

  it('POST /plugin/execute checks the switches and the body, then runs a plugin_direct task', async () => {
    const { channels, plugins } = withPlugins();
    const s = await start({ channels, enable: false });
    expect(await s.http('POST', '/plugin/execute', { plugin_id: 'notes' })).toEqual({
      status: 403,
      body: { detail: 'Agent master switch is off' },
    });
    await s.http('POST', '/agent/command', { command: 'set_agent_enabled', enabled: true });
    expect(await s.http('POST', '/plugin/execute', { plugin_id: 'notes' })).toEqual({
      status: 403,
      body: { detail: 'User plugin is disabled' },
    });
    await s.http('POST', '/agent/flags', { user_plugin_enabled: true });
    expect(await s.http('POST', '/plugin/execute', { plugin_id: 'notes', args: [] })).toEqual({
      status: 400,
      body: { detail: 'args must be a JSON object' },
    });
    expect(await s.http('POST', '/plugin/execute', { args: {} })).toEqual({
      status: 400,
      body: { detail: 'plugin_id required' },
    });
    const ok = await s.http('POST', '/plugin/execute', {
      plugin_id: 'notes',
      entry_id: 'ADD',
      args: { text: 'x' },
    });
    expect(ok.body).toMatchObject({
      success: true,
      status: 'running',
      task_id: expect.any(String),
      start_time: expect.stringMatching(/\.\d{6}Z$/),
    });
    const result = await s.waitFor((e) => e.event_type === 'task_result');
    expect(result).toMatchObject({
      channel: 'user_plugin',
      status: 'completed',
      source_kind: 'plugin',
      source_name: 'notes',
      text: 'notes ok',
    });
    expect(plugins.calls).toEqual([{ plugin: 'notes', entryId: 'add', args: { text: 'x' } }]);
    const bad = (
      await s.http('POST', '/plugin/execute', { plugin_id: 'notes', entry_id: 'add', args: { text: 3 } })
    ).body;
    await until(async () => (await s.registry.get(String(bad['task_id'])))?.state === 'failed');
    expect((await s.registry.get(String(bad['task_id'])))?.error).toMatch(/^invalid args: text: /);
  });
});
