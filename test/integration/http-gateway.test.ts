import { request as httpRequest } from 'node:http';
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
import { startHttpHub, type HttpHub } from '../fixtures/http-hub.js';

const hubs: HttpHub[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.close()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function hub(options: Parameters<typeof startHttpHub>[0] = {}): Promise<HttpHub> {
  const h = await startHttpHub(options);
  hubs.push(h);
  return h;
}

async function getJson(
  url: string,
  init?: RequestInit,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, init);
  const body = (await res.json()) as Record<string, unknown>;
  return { status: res.status, body };
}

const postJson = (url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

/** A raw request with a chosen Host header (fetch does not let a caller set it). */
function rawGet(base: string, path: string, host: string, method = 'GET'): Promise<number> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const options = { host: url.hostname, port: url.port, path, method, headers: { host } };
    const req = httpRequest(options, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Sends `id` to each mailbox and dead-letters it there. */
async function deadLetters(h: HttpHub, id: string, mailboxes: readonly string[]): Promise<void> {
  for (const to of mailboxes) {
    await h.bus.send({ from: 'a', to, type: 'job', id });
    const d = await h.bus.receive(to, { timeoutMs: 0 });
    await h.bus.deadLetter(d?.deliveryId ?? '', 'boom');
  }
}

describe('http gateway - REST', () => {
  it('answers health with the newest event cursor', async () => {
    const h = await hub();
    await h.bus.send({ from: 'a', to: 'b', type: 't' });
    const { status, body } = await getJson(`${h.base}/api/health`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: 'ok', service: 'musubi' });
    expect(body.cursor).toBe((await h.bus.readEvents()).at(-1)?.cursor);
  });

  it('lists agents from the directory with their spend, and an empty list when there are none', async () => {
    const h = await hub();
    expect((await getJson(`${h.base}/api/agents`)).body).toEqual({
      agents: [],
      totals: { inputTokens: 0, outputTokens: 0, costUsd: 0, runs: 0 },
    });
    await h.agents.update('alice', {
      protocol: 'yadon',
      state: 'busy',
      bubble: 'テストを書いています',
      team: 't1',
    });
    await h.bus.kv.kvSet('budget/t1/alice', { inputTokens: 10, outputTokens: 5, costUsd: 0.5, runs: 1 });
    await h.bus.kv.kvSet('budget/t2/alice', { inputTokens: 1, outputTokens: 1, costUsd: 0.25, runs: 1 });
    await h.bus.kv.kvSet('budget/t2/ghost', { inputTokens: 100, outputTokens: 0, costUsd: 1, runs: 2 });
    await h.bus.kv.kvSet('budget/t2/broken', { nonsense: true });
    const { body } = await getJson(`${h.base}/api/agents`);
    expect(body.agents).toEqual([
      expect.objectContaining({
        name: 'alice',
        protocol: 'yadon',
        state: 'busy',
        bubble: 'テストを書いています',
        spend: { inputTokens: 11, outputTokens: 6, costUsd: 0.75, runs: 2 },
      }),
    ]);
    expect(body.totals).toEqual({ inputTokens: 111, outputTokens: 6, costUsd: 1.75, runs: 4 });
  });

  it('shows mailbox depths, peeks without claiming, and lists leases', async () => {
    const h = await hub();
    await h.bus.send({ from: 'a', to: 'bob', type: 'first', body: 'x'.repeat(5000) });
    await h.bus.send({ from: 'a', to: 'bob', type: 'second' });
    const claimed = await h.bus.receive('bob', { timeoutMs: 0 });
    const boxes = (await getJson(`${h.base}/api/mailboxes`)).body.mailboxes;
    expect(boxes).toEqual([expect.objectContaining({ mailbox: 'bob', ready: 1, leased: 1, total: 2 })]);
    const peek = (await getJson(`${h.base}/api/mailboxes/bob/messages?limit=10`)).body;
    expect(peek.messages).toHaveLength(2);
    expect(peek.messages).toContainEqual(
      expect.objectContaining({
        state: 'leased',
        envelope: expect.objectContaining({ type: 'first', isBodyCut: true }),
      }),
    );
    const leases = (await getJson(`${h.base}/api/leases`)).body.leases;
    expect(leases).toEqual([
      expect.objectContaining({
        mailbox: 'bob',
        messageId: claimed?.envelope.id,
        attempt: 1,
        leaseUntil: claimed?.leaseUntil,
      }),
    ]);
    expect((await getJson(`${h.base}/api/mailboxes/bad%20name/messages`)).status).toBe(400);
    expect((await getJson(`${h.base}/api/mailboxes/bob/messages?limit=0`)).body.code).toBe(
      'GATEWAY_FRAME_INVALID',
    );
  });

  it('lists recent messages with status, filtered by agent, type and thread', async () => {
    const h = await hub();
    await h.bus.send({
      from: 'alice',
      to: 'bob',
      type: 'review',
      thread: 'th-1',
      body: 'レビューお願いします',
    });
    await h.bus.send({ from: 'bob', to: 'carol', type: 'note' });
    await h.bus.send({ from: 'carol', to: 'alice', type: 'review', thread: 'th-2' });
    const d = await h.bus.receive('carol', { timeoutMs: 0 });
    if (d !== null) await h.bus.ack(d.deliveryId);
    const all = (await getJson(`${h.base}/api/messages`)).body;
    expect((all.messages as unknown[]).map((m) => (m as { type: string }).type)).toEqual([
      'review',
      'note',
      'review',
    ]);
    expect(all.messages).toContainEqual(
      expect.objectContaining({ from: 'bob', mailbox: 'carol', status: 'acked', attempt: 1 }),
    );
    expect(all.messages).toContainEqual(
      expect.objectContaining({ thread: 'th-1', bodyPreview: 'レビューお願いします' }),
    );
    const bob = (await getJson(`${h.base}/api/messages?agent=bob`)).body.messages as { type: string }[];
    expect(bob.map((m) => m.type)).toEqual(['review', 'note']);
    const reviews = (await getJson(`${h.base}/api/messages?type=review&thread=th-2`)).body.messages;
    expect(reviews).toEqual([expect.objectContaining({ from: 'carol', mailbox: 'alice' })]);
    const after = (await getJson(`${h.base}/api/messages?after=${all.cursor as number}`)).body;
    expect(after).toEqual({ cursor: all.cursor, messages: [] });
  });

  it('lists dead letters and retries one back into its mailbox', async () => {
    const h = await hub();
    const { envelope } = await h.bus.send({ from: 'a', to: 'worker', type: 'job' });
    const d = await h.bus.receive('worker', { timeoutMs: 0 });
    await h.bus.nack(d?.deliveryId ?? '', { reason: 'boom' });
    const listed = (await getJson(`${h.base}/api/dead-letters`)).body.deadLetters;
    expect(listed).toEqual([
      expect.objectContaining({
        mailbox: 'worker',
        reason: 'boom',
        envelope: expect.objectContaining({ id: envelope.id }),
      }),
    ]);
    const retry = await fetch(`${h.base}/api/dead-letters/${envelope.id}/retry`, { method: 'POST' });
    expect(retry.status).toBe(200);
    expect(await retry.json()).toEqual({ requeued: [{ mailbox: 'worker', messageId: envelope.id }] });
    expect((await h.bus.count('worker')).ready).toBe(1);
    const again = await getJson(`${h.base}/api/dead-letters/${envelope.id}/retry`, { method: 'POST' });
    expect(again).toEqual({ status: 404, body: expect.objectContaining({ code: 'NOT_FOUND' }) });
  });

  it('discards the dead letters of an id in every mailbox; 404 when none, 400 for a malformed id', async () => {
    const h = await hub();
    await deadLetters(h, 'job-1', ['worker', 'checker']);
    await deadLetters(h, 'job-2', ['worker']);
    await h.bus.send({ from: 'a', to: 'worker', type: 'job', id: 'live' });
    const discard = await fetch(`${h.base}/api/dead-letters/job-1`, { method: 'DELETE' });
    expect(discard.status).toBe(200);
    expect(await discard.json()).toEqual({
      discarded: [
        { mailbox: 'worker', messageId: 'job-1' },
        { mailbox: 'checker', messageId: 'job-1' },
      ],
    });
    const listed = (await getJson(`${h.base}/api/dead-letters`)).body.deadLetters as { envelope: object }[];
    expect(listed.map((d) => d.envelope)).toEqual([expect.objectContaining({ id: 'job-2' })]);
    expect((await h.bus.readEvents()).filter((e) => e.type === 'message.discarded')).toHaveLength(2);
    for (const id of ['job-1', 'live', 'never-sent']) {
      const again = await getJson(`${h.base}/api/dead-letters/${id}`, { method: 'DELETE' });
      expect(again).toEqual({ status: 404, body: expect.objectContaining({ code: 'NOT_FOUND' }) });
    }
    const bad = await getJson(`${h.base}/api/dead-letters/bad%01id`, { method: 'DELETE' });
    expect(bad).toEqual({ status: 400, body: expect.objectContaining({ code: 'GATEWAY_FRAME_INVALID' }) });
    expect((await h.bus.count('worker')).ready).toBe(1);
  });

  it('checks Origin, Host and the token on DELETE /api/dead-letters/{id} as on retry', async () => {
    const token = 'a-very-secret-token-123';
    const h = await hub({ token });
    await deadLetters(h, 'job-1', ['worker']);
    const url = `${h.base}/api/dead-letters/job-1`;
    const auth = { authorization: `Bearer ${token}` };
    const noToken = await getJson(url, { method: 'DELETE' });
    expect(noToken).toEqual({ status: 401, body: expect.objectContaining({ code: 'GATEWAY_UNAUTHORIZED' }) });
    const foreign = await getJson(url, {
      method: 'DELETE',
      headers: { ...auth, origin: 'http://evil.example' },
    });
    expect(foreign).toEqual({ status: 403, body: expect.objectContaining({ code: 'GATEWAY_FORBIDDEN' }) });
    const crossSite = await fetch(url, {
      method: 'DELETE',
      headers: { ...auth, 'sec-fetch-site': 'cross-site' },
    });
    expect(crossSite.status).toBe(403);
    expect(await rawGet(h.base, '/api/dead-letters/job-1', 'rebind.example:80', 'DELETE')).toBe(403);
    expect((await h.bus.listDeadLetters()).map((d) => d.envelope.id)).toEqual(['job-1']);
    const own = await fetch(url, { method: 'DELETE', headers: { ...auth, origin: h.base } });
    expect(own.status).toBe(200);
    expect(await h.bus.listDeadLetters()).toEqual([]);
  });

  it('lists tasks and cancels one; an unknown task is 404', async () => {
    const h = await hub();
    await h.tasks.put({ id: 't-1', state: 'running', title: '翻訳', progress: 0.4 });
    await h.tasks.put({ id: 't-2', state: 'queued' });
    const listed = (await getJson(`${h.base}/api/tasks`)).body;
    expect(listed).toEqual({
      isAvailable: true,
      tasks: [expect.objectContaining({ id: 't-1', progress: 0.4 }), { id: 't-2', state: 'queued' }],
    });
    const cancel = await getJson(`${h.base}/api/tasks/t-1/cancel`, { method: 'POST' });
    expect(cancel).toEqual({
      status: 200,
      body: { task: expect.objectContaining({ id: 't-1', state: 'cancelled' }) },
    });
    expect((await getJson(`${h.base}/api/tasks/nope/cancel`, { method: 'POST' })).status).toBe(404);
  });

  it('shows reported teams and teams seen only in team events, with their timeline', async () => {
    const h = await hub({
      teams: [
        {
          list: async () => [
            { id: 'yadon-1', pattern: 'three-phase', phase: 'docs', phases: ['implement', 'docs', 'review'] },
          ],
        },
      ],
    });
    await h.bus.publish({
      type: 'team.phase_changed',
      data: { team: 'peers', from: 'IMPLEMENT', to: 'TEST', round: 1 },
    });
    await h.bus.publish({
      type: 'team.phase_changed',
      data: { team: 'peers', from: 'TEST', to: 'DISCUSS', round: 1 },
    });
    const teams = (await getJson(`${h.base}/api/teams`)).body.teams;
    expect(teams).toEqual([
      expect.objectContaining({
        id: 'peers',
        pattern: 'team',
        phase: 'DISCUSS',
        round: 1,
        history: [
          expect.objectContaining({ phase: 'TEST', round: 1 }),
          expect.objectContaining({ phase: 'DISCUSS', round: 1 }),
        ],
      }),
      expect.objectContaining({ id: 'yadon-1', pattern: 'three-phase', phase: 'docs', history: [] }),
    ]);
  });

  it('says a message to one agent or to all of them', async () => {
    const h = await hub();
    const none = await postJson(`${h.base}/api/say`, { to: '*', text: 'hello' });
    expect(none.status).toBe(404);
    await h.agents.update('alice', { protocol: 'agent-sync' });
    await h.agents.update('bob', { protocol: 'ignite' });
    const one = await postJson(`${h.base}/api/say`, { to: 'alice', text: 'こんにちは', thread: 'th' });
    expect(one.status).toBe(202);
    const all = await postJson(`${h.base}/api/say`, { to: '*', text: 'everyone' });
    expect(((await all.json()) as { sent: unknown[] }).sent).toHaveLength(2);
    const [first] = await h.bus.peek('alice');
    expect(first?.envelope).toMatchObject({
      from: 'human',
      type: 'say',
      body: 'こんにちは',
      thread: 'th',
      headers: { source: 'dashboard' },
    });
    expect((await h.bus.count('bob')).total).toBe(1);
  });

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
    expect(await rawGet(h.base, '/api/health', 'rebind.example:80')).toBe(403);
    expect(await rawGet(h.base, '/api/health', `localhost:${new URL(h.base).port}`)).toBe(200);
    const missing = await getJson(`${h.base}/api/nothing`);
    expect(missing).toEqual({ status: 404, body: expect.objectContaining({ code: 'NOT_FOUND' }) });
  });

  it('needs the token when one is set: Bearer, or the cookie set by /?token=', async () => {
    const token = 'a-very-secret-token-123';
    const h = await hub({ token });
    const denied = await getJson(`${h.base}/api/agents`);
    expect(denied).toEqual({ status: 401, body: expect.objectContaining({ code: 'GATEWAY_UNAUTHORIZED' }) });
    expect(
      (await fetch(`${h.base}/api/agents`, { headers: { authorization: `Bearer ${token}` } })).status,
    ).toBe(200);
    expect((await fetch(`${h.base}/?token=wrong-token-wrong-token`, { redirect: 'manual' })).status).toBe(
      401,
    );
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

  it('refuses to bind beyond loopback without a token (CONFIG_INVALID)', async () => {
    const clock = createSystemClock();
    const store = new MemoryStore({ clock });
    const bus = createBus({
      store,
      clock,
      ids: createIdGenerator(clock),
      logger: createSilentLogger(),
      config: { leaseMs: 1000, retry: { baseMs: 1, capMs: 1, maxAttempts: 1 } },
    });
    const make = (o: { host: string; token?: string }) => () =>
      createHttpGateway({ bus, clock, logger: createSilentLogger(), port: 0, ...o });
    expect(make({ host: '0.0.0.0' })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
    expect(make({ host: '127.0.0.1', token: 'short' })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID' }),
    );
    expect(make({ host: '0.0.0.0', token: 'long-enough-token-000' })).not.toThrow();
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
});
