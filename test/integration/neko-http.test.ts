import { afterEach, describe, expect, it } from 'vitest';
import { createSystemClock } from '../../src/core/clock.js';
import { FakeChannel } from '../fakes/fake-channel.js';
import { startNeko, until, type NekoHarness, type StartNekoOptions } from '../fixtures/neko-harness.js';
import { testPlugins } from '../fixtures/neko-plugins.js';

describe('N.E.K.O. HTTP control API', () => {
  let h: NekoHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });
  const start = async (options: StartNekoOptions = {}): Promise<NekoHarness> =>
    (h = await startNeko(options));
  const withPlugins = () => {
    const plugins = testPlugins(createSystemClock());
    const shell = new FakeChannel({
      id: 'shell',
      group: 'computer_use',
      concurrency: 'exclusive',
      description: 'runs tests',
    });
    return { plugins, channels: [shell, plugins.channel] };
  };

  it('GET /health answers ok with the flags', async () => {
    const s = await start({ enable: false });
    const { status, body } = await s.http('GET', '/health');
    expect(status).toBe(200);
    expect(body).toMatchObject({
      status: 'ok',
      service: 'agent',
      agent_flags: { computer_use_enabled: false, openclaw_ready: false },
    });
    expect(typeof body['instance_id']).toBe('string');
  });

  it('GET /agent/flags shows a notification once; enabling a group without channels leaves it off', async () => {
    const s = await start({ enable: false, channels: [] });
    const before = (await s.http('GET', '/agent/flags')).body;
    expect(before).toMatchObject({
      success: true,
      analyzer_enabled: false,
      agent_api_gate: { ready: true, reasons: [], is_free_version: false },
      notification: null,
    });
    const post = await s.http('POST', '/agent/flags', { openclaw_enabled: true });
    expect(post).toEqual({
      status: 200,
      body: {
        success: true,
        agent_flags: {
          computer_use_enabled: false,
          browser_use_enabled: false,
          user_plugin_enabled: false,
          openclaw_enabled: false,
          openclaw_ready: false,
        },
      },
    });
    const first = (await s.http('GET', '/agent/flags')).body;
    expect(JSON.parse(String(first['notification']))).toEqual({
      code: 'AGENT_CHANNEL_NOT_CONFIGURED',
      details: { flag: 'openclaw_enabled' },
    });
    expect((await s.http('GET', '/agent/flags')).body['notification']).toBeNull();
  });

  it('keeps gated groups off without an assessor while user plugins can be enabled', async () => {
    const { channels } = withPlugins();
    const s = await start({ enable: false, channels, assessor: null });
    const revision = Number((await s.http('GET', '/agent/flags')).body['revision']);
    const { body } = await s.http('POST', '/agent/flags', {
      computer_use_enabled: true,
      user_plugin_enabled: true,
    });
    expect(body['agent_flags']).toMatchObject({ computer_use_enabled: false, user_plugin_enabled: true });
    const flags = (await s.http('GET', '/agent/flags')).body;
    expect(flags['agent_api_gate']).toEqual({
      ready: false,
      reasons: ['AGENT_ENDPOINT_NOT_CONFIGURED'],
      is_free_version: false,
    });
    expect(Number(flags['revision'])).toBeGreaterThan(revision);
    expect(await s.http('GET', '/computer_use/availability')).toEqual({
      status: 200,
      body: { ready: false, reasons: ['AGENT_ENDPOINT_NOT_CONFIGURED'] },
    });
    expect((await s.http('GET', '/browser_use/availability')).body).toEqual({
      ready: false,
      reasons: ['AGENT_ENDPOINT_NOT_CONFIGURED'],
    });
  });

  it('GET /agent/state returns the snapshot', async () => {
    const s = await start();
    const { status, body } = await s.http('GET', '/agent/state');
    expect(status).toBe(200);
    expect(body['success']).toBe(true);
    expect(body['snapshot']).toMatchObject({
      server_online: true,
      analyzer_enabled: true,
      active_tasks: [],
      notification: null,
    });
    expect(String((body['snapshot'] as Record<string, unknown>)['updated_at'])).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/,
    );
  });

  it('POST /agent/command: set_agent_enabled on and off (end_all, sub-flags kept), set_flag, refresh_state, errors', async () => {
    const { channels } = withPlugins();
    const s = await start({ enable: false, channels });
    const on = await s.http('POST', '/agent/command', {
      command: 'set_agent_enabled',
      enabled: true,
      profile: { name: 'x' },
      request_id: 'r1',
    });
    expect(on.body).toMatchObject({
      success: true,
      request_id: 'r1',
      is_free_version: false,
      agent_api_gate: { ready: true },
    });
    expect(typeof (on.body['timing'] as Record<string, unknown>)['agent_total_ms']).toBe('number');
    const flag = await s.http('POST', '/agent/command', {
      command: 'set_flag',
      key: 'user_plugin_enabled',
      value: 1,
    });
    expect(flag.body).toMatchObject({
      success: true,
      timing: { set_flags_ms: expect.any(Number), agent_total_ms: expect.any(Number) },
    });
    expect(String(flag.body['request_id'])).toMatch(/^[0-9a-f-]{36}$/);
    const exec = await s.http('POST', '/plugin/execute', { plugin_id: 'slow' });
    expect(exec.body['status']).toBe('running');
    const off = await s.http('POST', '/agent/command', { command: 'set_agent_enabled', enabled: false });
    expect(off.body['success']).toBe(true);
    await s.waitFor(
      (e) =>
        e.event_type === 'task_update' && (e['task'] as Record<string, unknown>)['status'] === 'cancelled',
    );
    expect((await s.http('GET', '/tasks')).body['tasks']).toEqual([]);
    const flags = (await s.http('GET', '/agent/flags')).body;
    expect(flags).toMatchObject({ analyzer_enabled: false, agent_flags: { user_plugin_enabled: true } });
    expect(
      await s.http('POST', '/agent/command', { command: 'set_flag', key: 'openfang_enabled', value: true }),
    ).toEqual({
      status: 400,
      body: { detail: 'invalid flag key' },
    });
    const seen = s.events.length;
    const refresh = await s.http('POST', '/agent/command', { command: 'refresh_state' });
    expect(refresh.body).toMatchObject({ success: true, snapshot: { analyzer_enabled: false } });
    await until(() => s.events.slice(seen).some((e) => e.event_type === 'agent_status_update'));
    expect(await s.http('POST', '/agent/command', { command: 'dance' })).toEqual({
      status: 400,
      body: { detail: 'unknown command' },
    });
  });

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

  it('answers the fixed and availability routes, /channels and /notify_config_changed', async () => {
    const { channels } = withPlugins();
    const s = await start({ channels });
    expect((await s.http('GET', '/capabilities')).body).toEqual({ success: true, capabilities: {} });
    expect((await s.http('GET', '/mcp/availability')).body).toEqual({
      ready: false,
      capabilities_count: 0,
      reasons: ['MCP 已移除'],
    });
    expect((await s.http('GET', '/openclaw/availability')).body).toEqual({
      enabled: false,
      ready: false,
      reasons: ['no channel configured'],
    });
    expect((await s.http('GET', '/computer_use/availability')).body).toEqual({ ready: true, reasons: [] });
    expect((await s.http('GET', '/browser_use/availability')).body).toEqual({
      enabled: true,
      ready: false,
      reasons: ['no channel configured'],
      provider: '',
    });
    expect((await s.http('GET', '/channels')).body).toEqual({
      success: true,
      channels: [
        {
          id: 'shell',
          kind: 'fake',
          group: 'computer_use',
          concurrency: 'exclusive',
          description: 'runs tests',
          ready: true,
          reasons: [],
        },
        expect.objectContaining({
          id: 'plugins',
          kind: 'plugins',
          group: 'user_plugin',
          concurrency: 'unlimited',
          ready: true,
        }),
      ],
    });
    expect((await s.http('POST', '/notify_config_changed')).body).toEqual({
      success: true,
      message: 'channels re-probed',
    });
  });

  it('answers 422 to a body that is not JSON and 404 to an unknown route', async () => {
    const s = await start();
    expect(await s.http('POST', '/agent/command', '{not json')).toEqual({
      status: 422,
      body: { detail: 'invalid JSON body' },
    });
    expect((await s.http('GET', '/nowhere')).status).toBe(404);
  });
});
