import { Server, type ListenOptions } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createBus } from '../../src/bus/bus.js';
import { createSystemClock } from '../../src/core/clock.js';
import { createIdGenerator } from '../../src/core/ids.js';
import type { Logger } from '../../src/core/logger.js';
import {
  createAgentSyncGateway,
  type AgentSyncGatewayOptions,
} from '../../src/gateways/agent-sync/agent-sync-gateway.js';
import type { Gateway } from '../../src/gateways/gateway.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import { LineClient, ask, freePort, tempDir, waitFor } from '../fixtures/agent-sync-harness.js';

/** A logger that keeps every record (for checking warnings). */
function recordingLogger(records: Array<{ level: string; msg: string }>): Logger {
  const at =
    (level: string) =>
    (a: unknown, b?: string): void =>
      void records.push({ level, msg: typeof a === 'string' ? a : (b ?? '') });
  const logger: Logger = {
    trace: at('trace'),
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    fatal: at('fatal'),
    child: () => logger,
  };
  return logger;
}

describe('agent-sync gateway lifecycle', () => {
  const clock = createSystemClock();
  const store = new MemoryStore({ clock });
  const bus = createBus({
    store,
    clock,
    ids: createIdGenerator(clock),
    logger: recordingLogger([]),
    config: { leaseMs: 30_000, retry: { baseMs: 5_000, capMs: 300_000, maxAttempts: 3 } },
  });
  const started: Gateway[] = [];
  const gateway = async (options: Partial<AgentSyncGatewayOptions> = {}): Promise<Gateway> => {
    const g = createAgentSyncGateway({
      bus,
      clock,
      logger: recordingLogger([]),
      agents: ['agent-a', 'agent-b'],
      cwd: await tempDir(),
      port: 0,
      ...options,
    });
    started.push(g);
    return g;
  };
  const portOf = (g: Gateway): number => {
    const address = g.address();
    return address.kind === 'tcp' ? address.port : 0;
  };
  afterEach(async () => {
    for (const g of started.splice(0)) await g.stop();
  });

  it('asks to listen on 127.0.0.1:9800 when given no host or port', async () => {
    // The default address is what the gateway hands to listen(); the bind itself is sent to a free port,
    // so the test never needs 9800 free (a developer's own agent_sync server may hold it).
    const asked: unknown[] = [];
    const listen = Server.prototype.listen;
    const spy = vi.spyOn(Server.prototype, 'listen').mockImplementation(function (this: Server, ...args) {
      asked.push(args[0]);
      const [options, ...rest] = args as [ListenOptions, ...unknown[]];
      return listen.call(this, { ...options, port: 0 }, ...(rest as [() => void]));
    });
    try {
      const g = createAgentSyncGateway({
        bus,
        clock,
        logger: recordingLogger([]),
        agents: [],
        cwd: await tempDir(),
      });
      started.push(g);
      await g.start();
      expect(g.address()).toMatchObject({ kind: 'tcp', host: '127.0.0.1' });
    } finally {
      spy.mockRestore();
    }
    expect(asked).toEqual([{ host: '127.0.0.1', port: 9800 }]);
  });

  it('rejects with GATEWAY_ADDRESS_IN_USE when the port is taken', async () => {
    const first = await gateway();
    await first.start();
    const clash = await gateway({ port: portOf(first) });
    await expect(clash.start()).rejects.toMatchObject({ code: 'GATEWAY_ADDRESS_IN_USE' });
  });

  it('binds beyond loopback only when unauthenticated network access is allowed, and warns at start', async () => {
    for (const host of ['0.0.0.0', '::', '192.0.2.1']) {
      await expect(gateway({ host })).rejects.toMatchObject({
        code: 'CONFIG_INVALID',
        message: expect.stringContaining('no authentication'),
      });
    }
    const records: Array<{ level: string; msg: string }> = [];
    const open = await gateway({
      host: '0.0.0.0',
      unauthenticatedNetworkAccess: true,
      logger: recordingLogger(records),
    });
    await open.start();
    expect(records.some((r) => r.level === 'warn' && r.msg.includes('no authentication'))).toBe(true);
    // Reached here through loopback only.
    expect((await ask(portOf(open), { cmd: 'status' })).ok).toBe(true);
  });

  it('stops with clients connected: a parked listen is cancelled and its mailbox keeps later mail', async () => {
    const g = await gateway();
    await g.start();
    const port = portOf(g);
    const listener = await LineClient.open(port);
    listener.send({ cmd: 'listen', agent: 'agent-b', timeout: 30 });
    const idle = await LineClient.open(port);
    expect((await idle.request({ cmd: 'status' })).ok).toBe(true);
    await g.stop();
    expect(await listener.next()).toBeNull();
    await idle.closed();
    await g.stop(); // idempotent
    const again = await gateway({ port });
    await again.start();
    expect(portOf(again)).toBe(port);
    await ask(port, { cmd: 'send', to: 'agent-b', text: 'after restart' });
    expect((await ask(port, { cmd: 'peek', agent: 'agent-b' }))['pending']).toBe(1);
  });

  it('survives a slow client that pipelines without reading, and answers everything in order', async () => {
    const g = await gateway();
    await g.start();
    const client = await LineClient.open(portOf(g));
    client.socket.pause();
    const line = `${JSON.stringify({ cmd: 'peek', agent: 'agent-a', pad: 'p'.repeat(2_000) })}\n`;
    for (let i = 0; i < 3_000; i++) client.write(line);
    expect((await ask(portOf(g), { cmd: 'status' })).ok).toBe(true);
    client.socket.resume();
    for (let i = 0; i < 3_000; i++)
      expect(JSON.parse((await client.next()) ?? '{}')).toMatchObject({ ok: true });
    client.destroy();
  });

  it('accepts connections right after start and answers once the state is loaded', async () => {
    const port = await freePort();
    const g = await gateway({ port });
    const starting = g.start();
    await waitFor(async () => (await ask(port, { cmd: 'status' }).catch(() => null)) !== null);
    await starting;
  });
});
