import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { createBus } from '../../src/bus/bus.js';
import { createSystemClock } from '../../src/core/clock.js';
import { createIdGenerator } from '../../src/core/ids.js';
import { createSilentLogger } from '../../src/core/logger.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import {
  LineClient,
  ask,
  startServer,
  tempDir,
  waitFor,
  type TestServer,
} from '../fixtures/agent-sync-harness.js';
import { FakeClock } from '../fakes/fake-clock.js';

type Reply = Record<string, unknown>;
const texts = (reply: Reply): unknown[] => ((reply['messages'] ?? []) as Reply[]).map((m) => m['text']);

describe('agent-sync listen', () => {
  let server: TestServer | undefined;
  const clients: LineClient[] = [];
  const start = async (options: Parameters<typeof startServer>[0] = {}): Promise<TestServer> => {
    server = await startServer(options);
    return server;
  };
  const client = async (): Promise<LineClient> => {
    const c = await LineClient.open(server?.port ?? 0);
    clients.push(c);
    return c;
  };
  const send = (text: string, to = 'agent-b'): Promise<Reply> =>
    ask(server?.port ?? 0, { cmd: 'send', to, text });
  const pending = async (agent = 'agent-b'): Promise<unknown> =>
    (await ask(server?.port ?? 0, { cmd: 'peek', agent }))['pending'];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.destroy();
    await server?.close();
    server = undefined;
  });

  it('returns queued mail at once without a timeout key, and a pure timeout when empty', async () => {
    await start();
    await send('one');
    const c = await client();
    expect(await c.request({ cmd: 'listen', agent: 'agent-b', timeout: 5 })).toEqual({
      ok: true,
      messages: [expect.objectContaining({ from: 'user', type: 'message', text: 'one' })],
    });
    c.send({ cmd: 'listen', agent: 'agent-b', timeout: 0.2 });
    expect(await c.next()).toBe('{"ok": true, "messages": [], "timeout": true}');
  });

  it('wakes on the first enqueue with timeout false and leaves later mail queued', async () => {
    await start();
    const c = await client();
    c.send({ cmd: 'listen', agent: 'agent-b', timeout: 10 });
    await waitFor(async () => (await ask(server?.port ?? 0, { cmd: 'status' })).ok === true);
    await send('first');
    const reply = await c.json();
    expect(reply['timeout']).toBe(false);
    expect(texts(reply)).toEqual(['first']);
    await send('second');
    expect(await pending()).toBe(1);
  });

  it('checks a bad timeout only on the wait path', async () => {
    await start();
    const c = await client();
    expect(await c.request({ cmd: 'listen', agent: 'agent-b', timeout: 'abc' })).toEqual({
      ok: false,
      error: "'<=' not supported between instances of 'str' and 'int'",
    });
    expect((await c.request({ cmd: 'listen', agent: 'agent-b', timeout: [1] }))['error']).toBe(
      "'<=' not supported between instances of 'list' and 'int'",
    );
    await send('mail');
    expect(texts(await c.request({ cmd: 'listen', agent: 'agent-b', timeout: 'abc' }))).toEqual(['mail']);
  });

  it('waits 60 s by default, and without limit for a null timeout (fake clock)', async () => {
    const clock = new FakeClock();
    await start({ clock });
    const byDefault = await client();
    const forever = await client();
    byDefault.send({ cmd: 'listen', agent: 'agent-a' });
    forever.send({ cmd: 'listen', agent: 'agent-b', timeout: null });
    await waitFor(() => clock.pendingTimers() >= 1);
    clock.advance(59_999);
    expect((await ask(server?.port ?? 0, { cmd: 'status' })).ok).toBe(true);
    expect(byDefault.hasReply()).toBe(false);
    clock.advance(1);
    expect(await byDefault.next()).toBe('{"ok": true, "messages": [], "timeout": true}');
    clock.advance(10 * 24 * 3600 * 1000);
    expect((await ask(server?.port ?? 0, { cmd: 'status' })).ok).toBe(true);
    expect(forever.hasReply()).toBe(false);
    await send('late');
    expect(texts(await forever.json())).toEqual(['late']);
  });

  it('dequeues nothing for a listen whose client disconnects during the wait', async () => {
    await start();
    const c = await client();
    c.send({ cmd: 'listen', agent: 'agent-b', timeout: 30 });
    await waitFor(async () => (await ask(server?.port ?? 0, { cmd: 'status' })).ok === true);
    c.destroy();
    await waitFor(() => c.isClosed);
    await send('after the disconnect');
    expect(await pending()).toBe(1);
    const next = await client();
    expect(texts(await next.request({ cmd: 'listen', agent: 'agent-b', timeout: 1 }))).toEqual([
      'after the disconnect',
    ]);
  });

  it('gives no reply to a listen sent and then half-closed, and leaves the mail queued', async () => {
    await start();
    await send('kept');
    const c = await client();
    c.write(
      '{"cmd": "peek", "agent": "agent-b"}\n{"cmd": "listen", "agent": "agent-b"}\n{"cmd": "status"}\n',
    );
    c.end();
    expect(JSON.parse((await c.next()) ?? '{}')).toMatchObject({ ok: true, pending: 1 });
    expect(await c.next()).toBeNull();
    expect(await pending()).toBe(1);
  });

  it('delivers three 30 KB messages over several replies within 61,440 bytes, in order', async () => {
    await start();
    for (const n of [1, 2, 3]) await send(`${n}`.padEnd(30_000, 'x'));
    const c = await client();
    const order: string[] = [];
    while (order.length < 3) {
      c.send({ cmd: 'listen', agent: 'agent-b', timeout: 0 });
      const raw = (await c.next()) ?? '';
      expect(Buffer.byteLength(`${raw}\n`)).toBeLessThanOrEqual(61_440);
      const got = texts(JSON.parse(raw) as Reply);
      expect(got.length).toBeGreaterThan(0);
      order.push(...got.map((t) => String(t).charAt(0)));
    }
    expect(order).toEqual(['1', '2', '3']);
  });

  it('wakes exactly one of two listens on one name per message, oldest first', async () => {
    await start();
    const first = await client();
    const second = await client();
    first.send({ cmd: 'listen', agent: 'agent-b', timeout: 10 });
    await waitFor(async () => (await ask(server?.port ?? 0, { cmd: 'status' })).ok === true);
    second.send({ cmd: 'listen', agent: 'agent-b', timeout: 10 });
    await waitFor(async () => (await ask(server?.port ?? 0, { cmd: 'status' })).ok === true);
    await send('one');
    expect(texts(await first.json())).toEqual(['one']);
    expect((await ask(server?.port ?? 0, { cmd: 'status' })).ok).toBe(true);
    expect(second.hasReply()).toBe(false);
    await send('two');
    expect(await second.json()).toMatchObject({
      timeout: false,
      messages: [expect.objectContaining({ text: 'two' })],
    });
  });

  it('removes the delivered mail before a later request on another connection is answered', async () => {
    await start();
    await send('x');
    const c = await client();
    await c.request({ cmd: 'listen', agent: 'agent-b' });
    expect(await pending()).toBe(0);
  });

  it('reports stale agents after the threshold unless a listen is waiting (fake clock)', async () => {
    const clock = new FakeClock();
    await start({ clock, staleAfterMs: 120_000 });
    await ask(server?.port ?? 0, { cmd: 'join', agent: 'agent-a' });
    await ask(server?.port ?? 0, { cmd: 'join', agent: 'agent-b' });
    const c = await client();
    c.send({ cmd: 'listen', agent: 'agent-b', timeout: null });
    clock.advance(121_000);
    const agents = (
      (await ask(server?.port ?? 0, { cmd: 'status' }))['data'] as { agents: Record<string, Reply> }
    ).agents;
    expect(agents['agent-a']?.['stale']).toBe(true);
    expect(agents['agent-b']?.['stale']).toBe(false);
  });

  it('presents mail from another gateway in agent_sync shape and wakes a parked listen', async () => {
    await start();
    const c = await client();
    c.send({ cmd: 'listen', agent: 'agent-b', timeout: 10 });
    await waitFor(async () => (await ask(server?.port ?? 0, { cmd: 'status' })).ok === true);
    await server?.bus.send({
      from: 'yadon-1',
      to: 'agent-b',
      type: 'task',
      body: 'do X',
      createdAt: 1_795_975_449_291,
    });
    expect(await c.next()).toBe(
      '{"ok": true, "messages": [{"from": "yadon-1", "type": "task", "text": "do X", "ts": 1795975449.291}], "timeout": false}',
    );
  });

  it('wakes a parked listen on mail another process writes to the same SQLite store', async () => {
    const cwd = await tempDir();
    await start({ store: 'sqlite', cwd });
    const c = await client();
    c.send({ cmd: 'listen', agent: 'agent-b', timeout: 10 });
    await waitFor(async () => (await ask(server?.port ?? 0, { cmd: 'status' })).ok === true);
    // A second connection to the file, as another hub process has: the gateway sees its commit only
    // through the store's cross-connection notice.
    const clock = createSystemClock();
    const other = await SqliteStore.open({ path: join(cwd, 'bus.db'), clock });
    try {
      const bus = createBus({
        store: other,
        clock,
        ids: createIdGenerator(clock),
        logger: createSilentLogger(),
        config: { leaseMs: 30_000, retry: { baseMs: 5_000, capMs: 300_000, maxAttempts: 3 } },
      });
      await bus.send({ from: 'neko-1', to: 'agent-b', type: 'task', body: 'from afar' });
      expect(texts(await c.json())).toEqual(['from afar']);
      await bus.close();
    } finally {
      await other.close();
    }
  });
});
