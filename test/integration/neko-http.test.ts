import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../fixtures/neko-harness.js';
import { nekoSession, withPlugins } from '../fixtures/neko-http-session.js';
import { parseRawResponse, rawHttp } from '../fixtures/raw-http.js';

describe('N.E.K.O. HTTP control API', () => {
  const { start, close } = nekoSession();
  afterEach(close);

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

  it('refuses a foreign web page: a foreign Origin or Host gets 403, a plain client passes', async () => {
    const s = await start({ enable: false });
    const send = (headers: Record<string, string>, method = 'POST', path = '/admin/control') =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port: s.httpPort,
            method,
            path,
            headers: { 'content-type': 'text/plain', ...headers },
          },
          (res) => {
            let body = '';
            res.setEncoding('utf8').on('data', (d: string) => (body += d));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        req.end(method === 'POST' ? '{"action": "disable_analyzer"}' : undefined);
      });
    const foreignOrigin = await send({ origin: 'http://evil.example' });
    expect(foreignOrigin.status).toBe(403);
    expect(JSON.parse(foreignOrigin.body)).toEqual({ detail: 'Origin is not this gateway' });
    const crossSite = await send({ 'sec-fetch-site': 'cross-site' });
    expect(crossSite.status).toBe(403);
    const rebound = await send({ host: `evil.example:${s.httpPort}` }, 'GET', '/agent/state');
    expect(rebound.status).toBe(403);
    const plain = await send({});
    expect([plain.status, JSON.parse(plain.body)]).toEqual([200, { success: true, analyzer_enabled: false }]);
  });

  it('answers a request the HTTP parser refuses 400 {"detail": ...}', async () => {
    const s = await start({ enable: false });
    const raw = `GET /\0 HTTP/1.1\r\nHost: 127.0.0.1:${s.httpPort}\r\n\r\n`;
    expect(parseRawResponse(await rawHttp(s.httpPort, raw))).toEqual({
      statusLine: 'HTTP/1.1 400 Bad Request',
      body: { detail: 'malformed HTTP request' },
    });
  });
});
