import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBus } from '../../src/bus/bus.js';
import type { Bus } from '../../src/bus/bus.types.js';
import { createSystemClock } from '../../src/core/clock.js';
import { createIdGenerator } from '../../src/core/ids.js';
import { createSilentLogger } from '../../src/core/logger.js';
import { parseNatsUrl } from '../../src/store/nats/nats-location.js';
import { NatsStore } from '../../src/store/nats/nats-store.js';
import {
  deleteNamespace,
  natsUnavailableReason,
  SHARED_NATS,
  uniquePrefix,
  waitUntil,
} from '../fixtures/nats-server.js';
import { runCli } from '../fixtures/run-cli.js';
import { WorkerProcess } from '../fixtures/worker-process.js';

// Several hubs share one team through one prefix on the shared NATS server (.ci/run starts it).
const unavailable = await natsUnavailableReason();
const clock = createSystemClock();
let dir: string;
let prefix: string;
const closers: (() => Promise<void>)[] = [];
// Worker processes a case starts; stopped after each case even when it fails or times out.
const workers: WorkerProcess[] = [];
const everStarted: WorkerProcess[] = [];

const storeUrl = (): string => `nats://${SHARED_NATS}?prefix=${prefix}`;

async function openHub(): Promise<Bus> {
  const store = await NatsStore.open({ location: parseNatsUrl(storeUrl()), clock });
  const bus = createBus({
    store,
    clock,
    ids: createIdGenerator(clock),
    logger: createSilentLogger(),
    config: { leaseMs: 30_000, retry: { baseMs: 100, capMs: 1_000, maxAttempts: 5 } },
  });
  closers.push(async () => {
    await bus.close();
    await store.close();
  });
  return bus;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'musubi-nats-'));
});
afterEach(async () => {
  for (const worker of workers.splice(0)) await worker[Symbol.asyncDispose]();
  for (const close of closers.splice(0).reverse()) await close();
  if (unavailable === null) await deleteNamespace(SHARED_NATS, prefix);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  expect(everStarted.filter((w) => w.isRunning)).toEqual([]);
});

async function startWorker(...args: Parameters<typeof WorkerProcess.start>): Promise<WorkerProcess> {
  const worker = await WorkerProcess.start(...args);
  workers.push(worker);
  everStarted.push(worker);
  return worker;
}

describe.skipIf(unavailable !== null)('nats - several hubs sharing one team', () => {
  it('delivers messages both ways between agents on two hubs through the bus CLI', async () => {
    prefix = uniquePrefix('cli');
    const cli = (args: string[]) =>
      runCli(['--store', storeUrl(), '--log-level', 'warn', ...args], { cwd: dir });
    // Hub B's agent waits first; hub A's send must wake it through the journal (another process).
    const waiting = cli(['bus', 'receive', 'agent-b', '--timeout', '20000', '--json']);
    const sent = await cli([
      'bus',
      'send',
      '--to',
      'agent-b',
      '--from',
      'agent-a',
      '--type',
      'task',
      '--body',
      'hello B',
    ]);
    expect(sent.stderr).toBe('');
    const received = await waiting;
    expect(received.code, received.stderr).toBe(0);
    const delivery = JSON.parse(received.stdout) as { deliveryId: string; envelope: Record<string, unknown> };
    expect(delivery.envelope).toMatchObject({
      id: sent.stdout.trim(),
      from: 'agent-a',
      body: 'hello B',
      attempt: 1,
    });
    expect((await cli(['bus', 'ack', delivery.deliveryId])).code).toBe(0);

    const reply = await cli([
      'bus',
      'send',
      '--to',
      'agent-a',
      '--from',
      'agent-b',
      '--type',
      'result',
      '--body',
      'done',
    ]);
    const back = await cli(['bus', 'receive', 'agent-a', '--timeout', '20000', '--json']);
    const answer = JSON.parse(back.stdout) as { deliveryId: string; envelope: Record<string, unknown> };
    expect(answer.envelope).toMatchObject({ id: reply.stdout.trim(), from: 'agent-b', body: 'done' });
    expect((await cli(['bus', 'ack', answer.deliveryId])).code).toBe(0);

    const events = await cli(['bus', 'events', '--json']);
    const types = events.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { type: string }).type);
    expect(types).toEqual([
      'message.sent',
      'message.claimed',
      'message.acked',
      'message.sent',
      'message.claimed',
      'message.acked',
    ]);
  }, 90_000);

  it('hands each message to exactly one of the receivers spread over two hubs', async () => {
    prefix = uniquePrefix('share');
    const [hubA, hubB] = [await openHub(), await openHub()];
    const count = 150;
    const acked: string[] = [];
    const receiveAll = async (bus: Bus): Promise<void> => {
      while (acked.length < count) {
        const delivery = await bus.receive('shared', { timeoutMs: 200 });
        if (delivery === null) continue;
        await bus.ack(delivery.deliveryId);
        acked.push(delivery.envelope.id);
      }
    };
    const receivers = [hubA, hubA, hubA, hubB, hubB, hubB].map(receiveAll);
    for (let i = 0; i < count; i++) {
      await (i % 2 === 0 ? hubA : hubB).send({ id: `m-${i}`, from: 'lead', to: 'shared', type: 'task' });
    }
    await Promise.all(receivers);
    expect(acked).toHaveLength(count);
    expect(new Set(acked).size).toBe(count);
    expect(await hubB.count('shared')).toMatchObject({ total: 0 });
  });

  it('redelivers to a hub that is waiting when the hub holding the lease dies', async () => {
    prefix = uniquePrefix('lease');
    const [hubA, hubB] = [await openHub(), await openHub()];
    const closeA = closers[0];
    const waiting = [hubA, hubB].map((bus) => bus.receive('jobs', { timeoutMs: 15_000, leaseMs: 500 }));
    await hubA.send({ id: 'job', from: 'lead', to: 'jobs', type: 'task' });
    const first = await Promise.race(waiting.map((p, i) => p.then((d) => ({ d, i }))));
    expect(first.d?.envelope.attempt).toBe(1);
    // The winner "dies" without acking: its store closes and its lease simply runs out.
    const winnerClose = first.i === 0 ? closeA : closers[1];
    await winnerClose?.();
    const started = Date.now();
    const second = await waiting[1 - first.i];
    expect(second?.envelope).toMatchObject({ id: 'job', attempt: 2 });
    expect(Date.now() - started).toBeLessThan(5_000);
    if (second) await (first.i === 0 ? hubB : hubA).ack(second.deliveryId);
  });

  it('redelivers the leases of a SIGKILLed consumer to the surviving one and loses nothing', async () => {
    prefix = uniquePrefix('kill');
    const producer = await openHub();
    const doomed = await startWorker(storeUrl(), 'jobs', { leaseMs: 1_500, holdMs: 150, concurrency: 4 });
    const count = 60;
    for (let i = 0; i < count; i++)
      await producer.send({ id: `job-${i}`, from: 'lead', to: 'jobs', type: 'task' });
    await waitUntil(
      () => doomed.acked().length >= 8 && doomed.holding().length > 0,
      20_000,
      'the doomed worker to ack a few jobs while holding others',
    );
    await doomed.kill('SIGKILL');
    const heldAtDeath = new Set(doomed.holding());

    const survivor = await startWorker(storeUrl(), 'jobs', { leaseMs: 1_500, concurrency: 4 });
    const allAcked = (): Set<string> => new Set([...doomed.acked(), ...survivor.acked()]);
    await waitUntil(() => allAcked().size === count, 30_000, 'every job to be acked');
    const redelivered = survivor.events.filter((e) => e.kind === 'acked' && heldAtDeath.has(e.id));
    expect(redelivered.length).toBeGreaterThan(0);
    expect(redelivered.every((e) => e.attempt >= 2)).toBe(true);
    expect(await producer.count('jobs')).toMatchObject({ total: 0, deadLetters: 0 });
  }, 90_000);
});
