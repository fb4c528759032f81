// HTTP gateway access: bad or foreign requests, the token, the bind policy and the URL file / taken port.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSystemClock } from '../../src/core/clock.js';
import { isMusubiError } from '../../src/core/errors.js';
import { createSilentLogger } from '../../src/core/logger.js';
import { createBus } from '../../src/bus/bus.js';
import { createIdGenerator } from '../../src/core/ids.js';
import { createHttpGateway } from '../../src/gateways/http/http-gateway.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import { startHttpHub } from '../fixtures/http-hub.js';
import { getJson, httpHubSession, postJson, rawGet } from '../fixtures/http-hub-session.js';
import { parseRawResponse, rawHttp } from '../fixtures/raw-http.js';

const { start: hub, close } = httpHubSession();
const dirs: string[] = [];
afterEach(async () => {
  await close();
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

describe('http gateway - REST', () => {
  it('rejects bad bodies, oversize bodies, foreign origins and foreign hosts with coded errors', async () => {
    const h = await hub({ bodyLimitBytes: 1024 });
    const bad = await postJson(`${h.base}/api/say`, { to: 'x', text: '', extra: 1 });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({
      code: 'GATEWAY_FRAME_INVALID',
      details: { issues: expect.any(Array) },
    });
    const notJson = await fetch(`${h.base}/api/say`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{',
    });
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { code: string }).code).toBe('GATEWAY_FRAME_INVALID');
    const big = await postJson(`${h.base}/api/say`, { to: 'x', text: 'y'.repeat(2000) });
    expect(big.status).toBe(413);
    expect(((await big.json()) as { code: string }).code).toBe('GATEWAY_FRAME_TOO_LARGE');
    const foreign = await postJson(
      `${h.base}/api/say`,
      { to: 'x', text: 'y' },
      { origin: 'http://evil.example' },
    );
    expect(foreign.status).toBe(403);
    expect(((await foreign.json()) as { code: string }).code).toBe('GATEWAY_FORBIDDEN');
    const own = await postJson(`${h.base}/api/say`, { to: 'x', text: 'y' }, { origin: h.base });
    expect(own.status).toBe(202);
    // The page speaks as `human`: it may not forge a message from an agent.
    const forged = await postJson(`${h.base}/api/say`, { to: 'x', text: 'y', from: 'worker-1' });
    expect(forged.status).toBe(403);
    expect(await forged.json()).toMatchObject({ code: 'GATEWAY_FORBIDDEN' });
    const asHuman = await postJson(`${h.base}/api/say`, { to: 'x', text: 'y', from: 'human' });
    expect(asHuman.status).toBe(202);
    expect((await h.bus.peek('x')).map((m) => m.envelope.from)).toEqual(['human', 'human']);
    expect(await rawGet(h.base, '/api/health', 'rebind.example:80')).toBe(403);
    expect(await rawGet(h.base, '/api/health', `localhost:${new URL(h.base).port}`)).toBe(200);
    const missing = await getJson(`${h.base}/api/nothing`);
    expect(missing).toEqual({ status: 404, body: expect.objectContaining({ code: 'NOT_FOUND' }) });
  });

  it('answers ids of every length in its own error shape, and cancels a task with a 256-character id', async () => {
    const h = await hub();
    for (const length of [101, 200, 256]) {
      const id = 'x'.repeat(length);
      const reply = await getJson(`${h.base}/api/turns/${id}`);
      expect(reply.status, `id of ${length}`).toBe(404);
      expect(Object.keys(reply.body).sort()).toEqual(['code', 'message']);
    }
    const long = `${'t'.repeat(250)}-é` + 'z'.repeat(4);
    expect(long).toHaveLength(256);
    await h.tasks.put({ id: long, state: 'running' });
    const cancelled = await fetch(`${h.base}/api/tasks/${encodeURIComponent(long)}/cancel`, {
      method: 'POST',
    });
    expect(cancelled.status).toBe(200);
    expect(h.tasks.get(long)?.state).toBe('cancelled');
    // Longer than any id: refused by the route's schema, still in the documented shape.
    const tooLong = await fetch(`${h.base}/api/tasks/${'y'.repeat(257)}/cancel`, { method: 'POST' });
    expect(tooLong.status).toBe(400);
    expect(await tooLong.json()).toMatchObject({ code: 'GATEWAY_FRAME_INVALID' });
    // Beyond even the router's limit: the framework's refusal answers in the same shape.
    const huge = await fetch(`${h.base}/api/tasks/${'y'.repeat(5000)}/cancel`, { method: 'POST' });
    expect(huge.status).toBe(414);
    expect(Object.keys((await huge.json()) as object).sort()).toEqual(['code', 'message']);
  });

  it('needs the token when one is set: Bearer, or the cookie set by /?token=', async () => {
    const token = 'a-very-secret-token-123';
    const h = await hub({ token });
    const denied = await getJson(`${h.base}/api/agents`);
    expect(denied).toEqual({ status: 401, body: expect.objectContaining({ code: 'GATEWAY_UNAUTHORIZED' }) });
    expect(
      (await fetch(`${h.base}/api/agents`, { headers: { authorization: `Bearer ${token}` } })).status,
    ).toBe(200);
    // The page itself is public (it holds no data); a wrong token logs nobody in.
    const wrong = await fetch(`${h.base}/?token=wrong-token-wrong-token`, { redirect: 'manual' });
    expect(wrong.status).toBe(200);
    expect(wrong.headers.get('set-cookie')).toBeNull();
    const login = await fetch(`${h.base}/?token=${token}`, { redirect: 'manual' });
    expect(login.status).toBe(303);
    expect(login.headers.get('location')).toBe('/');
    const cookie = login.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    const withCookie = await fetch(`${h.base}/api/agents`, {
      headers: { cookie: cookie.split(';')[0] ?? '' },
    });
    expect(withCookie.status).toBe(200);
  });

  it('refuses to bind beyond loopback without both a token and networkAccess (CONFIG_INVALID)', async () => {
    const clock = createSystemClock();
    const store = new MemoryStore({ clock });
    const bus = createBus({
      store,
      clock,
      ids: createIdGenerator(clock),
      logger: createSilentLogger(),
      config: { leaseMs: 1000, retry: { baseMs: 1, capMs: 1, maxAttempts: 1 } },
    });
    const make = (o: { host: string; token?: string; networkAccess?: boolean }) => () =>
      createHttpGateway({ bus, clock, logger: createSilentLogger(), port: 0, ...o });
    expect(make({ host: '0.0.0.0' })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
    expect(make({ host: '127.0.0.1', token: 'short' })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID' }),
    );
    // A token alone is not enough: putting the dashboard on the network is its own setting.
    expect(make({ host: '0.0.0.0', token: 'long-enough-token-000' })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', message: expect.stringContaining('networkAccess') }),
    );
    expect(make({ host: '0.0.0.0', networkAccess: true })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', message: expect.stringContaining('token') }),
    );
    expect(make({ host: '0.0.0.0', token: 'long-enough-token-000', networkAccess: true })).not.toThrow();
    try {
      make({ host: '192.168.0.1' })();
    } catch (err) {
      expect(isMusubiError(err, 'CONFIG_INVALID')).toBe(true);
    }
    await bus.close();
    await store.close();
  });

  it('writes its URL file after listening and removes it on stop; a taken port is GATEWAY_ADDRESS_IN_USE', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'musubi-http-'));
    dirs.push(dir);
    const urlFile = join(dir, 'state', 'dashboard.json');
    const h = await startHttpHub({ urlFile });
    const record = JSON.parse(await readFile(urlFile, 'utf8')) as { url: string; needsToken: boolean };
    expect(record).toMatchObject({ url: `${h.base}/`, needsToken: false });
    const clock = createSystemClock();
    const second = createHttpGateway({
      bus: h.bus,
      clock,
      logger: createSilentLogger(),
      port: Number(new URL(h.base).port),
    });
    const err: unknown = await second.start().catch((e: unknown) => e);
    expect(isMusubiError(err, 'GATEWAY_ADDRESS_IN_USE')).toBe(true);
    await second.stop();
    await h.close();
    await h.close();
    await expect(readFile(urlFile, 'utf8')).rejects.toThrow(/ENOENT/);
  });

  it('answers a request the HTTP parser refuses (NUL in the request line) 400 in the API error shape', async () => {
    const h = await hub();
    const port = Number(new URL(h.base).port);
    const reply = parseRawResponse(
      await rawHttp(port, `GET /\0 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`),
    );
    expect(reply).toEqual({
      statusLine: 'HTTP/1.1 400 Bad Request',
      body: { code: 'GATEWAY_FRAME_INVALID', message: 'malformed HTTP request' },
    });
  });
});
