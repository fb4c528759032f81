import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBus } from '../../src/bus/bus.js';
import type { Bus } from '../../src/bus/bus.types.js';
import { createSystemClock } from '../../src/core/clock.js';
import { isMusubiError } from '../../src/core/errors.js';
import { createIdGenerator } from '../../src/core/ids.js';
import { createSilentLogger } from '../../src/core/logger.js';
import { connectNats } from '../../src/store/nats/nats-connection.js';
import { parseNatsUrl } from '../../src/store/nats/nats-location.js';
import { NatsStore } from '../../src/store/nats/nats-store.js';
import { freePort, NatsServerProcess, natsUnavailableReason, waitUntil } from '../fixtures/nats-server.js';
import { CLI_ENTRY, runCli, TSX_LOADER } from '../fixtures/run-cli.js';
import { WorkerProcess } from '../fixtures/worker-process.js';

// These tests start, stop and restart their own nats-server (never the shared one).
const unavailable = await natsUnavailableReason({ needsBinary: true });
const clock = createSystemClock();
let dir: string;
// Everything a case starts is stopped here too, so a failing or timed-out case leaves no child behind.
const cleanup: AsyncDisposable[] = [];
const spawned: ChildProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'musubi-nats-outage-'));
});
afterEach(async () => {
  for (const child of spawned)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const resource of cleanup.splice(0).reverse()) await resource[Symbol.asyncDispose]();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await waitUntil(
    () => spawned.every((c) => c.exitCode !== null || c.signalCode !== null),
    5_000,
    'children to exit',
  );
});

/** Keeps `resource` for the afterEach cleanup and returns it. */
function track<T extends AsyncDisposable>(resource: T): T {
  cleanup.push(resource);
  return resource;
}

/** Sends, retrying while the store is unavailable (NATS restarting), until `deadline`. */
async function sendRetrying(bus: Bus, id: string, deadline: number): Promise<void> {
  for (;;) {
    try {
      await bus.send({ id, from: 'lead', to: 'jobs', type: 'task' });
      return;
    } catch (err) {
      if (!isMusubiError(err, 'STORE_UNAVAILABLE') || Date.now() > deadline) throw err;
    }
  }
}

/** Starts `musubi up` and resolves once it reports the hub up. */
async function startHubProcess(storeUrl: string) {
  const child = spawn(
    process.execPath,
    ['--import', TSX_LOADER, CLI_ENTRY, '--store', storeUrl, 'up', '--http-port', '0'],
    {
      cwd: dir,
      env: { ...process.env, MUSUBI_LOG_LEVEL: 'error' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  spawned.push(child);
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
  const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  await waitUntil(() => output.includes('musubi hub up') || child.exitCode !== null, 20_000, 'musubi up');
  return { child, closed, output: () => output };
}

describe.skipIf(unavailable !== null)('nats - outages', () => {
  it('keeps a hub and a consumer running across a nats-server restart and loses nothing acknowledged', async () => {
    const server = track(await NatsServerProcess.start());
    const url = `nats://${server.hostPort}?prefix=outage`;
    const hub = await startHubProcess(url);
    expect(hub.output()).toContain(`musubi hub up (store ${url})`);
    const worker = track(await WorkerProcess.start(url, 'jobs', { leaseMs: 2_000, concurrency: 2 }));
    const store = await NatsStore.open({ location: parseNatsUrl(url), clock });
    const bus = createBus({
      store,
      clock,
      ids: createIdGenerator(clock),
      logger: createSilentLogger(),
      config: { leaseMs: 2_000, retry: { baseMs: 100, capMs: 1_000, maxAttempts: 100 } },
    });
    try {
      for (let i = 0; i < 20; i++)
        await bus.send({ id: `before-${i}`, from: 'lead', to: 'jobs', type: 'task' });
      await waitUntil(
        () => new Set(worker.acked()).size >= 10,
        20_000,
        'the worker to ack before the outage',
      );

      await server.stop();
      await server.resume();
      const deadline = Date.now() + 30_000;
      for (let i = 0; i < 20; i++) await sendRetrying(bus, `after-${i}`, deadline);

      const sent = [
        ...Array.from({ length: 20 }, (_, i) => `before-${i}`),
        ...Array.from({ length: 20 }, (_, i) => `after-${i}`),
      ];
      await waitUntil(
        () => sent.every((id) => worker.acked().includes(id)),
        40_000,
        'every message to be acked',
      );
      await waitUntil(async () => (await bus.count('jobs')).total === 0, 10_000, 'an empty mailbox');
      expect(worker.isRunning).toBe(true);
      expect(hub.child.exitCode).toBeNull();
    } finally {
      await bus.close();
      await store.close();
      hub.child.kill('SIGTERM');
      expect(await hub.closed).toBe(0);
    }
  }, 90_000);

  it('retries the first connection until a late nats-server comes up', async () => {
    const port = await freePort();
    const connecting = connectNats(parseNatsUrl(`nats://127.0.0.1:${port}?connectTimeoutMs=20000`));
    track(await NatsServerProcess.start({ port }));
    const nc = await connecting;
    expect(nc.isClosed()).toBe(false);
    await nc.close();
  });

  it('makes musubi up report STORE_UNAVAILABLE after retrying an unreachable NATS', async () => {
    const port = await freePort();
    const started = Date.now();
    const run = await runCli(
      ['--store', `nats://secret-token@127.0.0.1:${port}?connectTimeoutMs=1500`, 'up', '--http-port', '0'],
      {
        cwd: dir,
      },
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      new RegExp(`^musubi: STORE_UNAVAILABLE: cannot reach NATS at 127\\.0\\.0\\.1:${port} within 1500 ms`),
    );
    expect(run.stderr).not.toContain('secret-token');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
  });
});
