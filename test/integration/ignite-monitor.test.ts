// IGNITE queue monitor delivery: claiming, the delivery prompt, delivered state, priority, parallelism, leases.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FakeIgniteRunners } from '../fakes/fake-ignite-runner.js';
import { waitFor } from '../fakes/fake-cli-harness.js';
import { igniteMonitorSession, mimeHeader as header } from '../fixtures/ignite-monitor-session.js';
import type { IgniteWorkspace } from '../fixtures/ignite-workspace.js';

const PROMPT = /^新しいメッセージが来ました。(\/.+\/processed\/[^/]+\.mime) を読んで処理してください。$/;

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('ignite queue monitor', () => {
  let ws: IgniteWorkspace;
  let runners: FakeIgniteRunners;
  const { monitors, open, start, task, close } = igniteMonitorSession();

  beforeEach(async () => {
    ({ ws, runners } = await open());
  });
  afterEach(close);

  it('claims a new file through events and hands the agent exactly the delivery prompt (51, 52, 53)', async () => {
    const release = deferred();
    runners.behaviour = () => ({ until: release.promise });
    // The rescan would come only after a minute: a claim before that came from the file-system event.
    await start({ env: { QUEUE_POLL_INTERVAL: '60' } });
    const path = await task('ignitian_1', 't1');
    await waitFor(() => runners.turns.length === 1, 10_000, 'claim through events');
    const [turn] = runners.turns;
    const name = path.slice(path.lastIndexOf('/') + 1);
    expect(turn?.prompt).toBe(
      `新しいメッセージが来ました。${join(ws.processed('ignitian_1'), name)} を読んで処理してください。`,
    );
    expect(turn?.prompt).toMatch(PROMPT);
    expect(turn?.sessionId).toBe('session-6');
    const claimed = await ws.read(join(ws.processed('ignitian_1'), name));
    expect(header(claimed, 'X-IGNITE-Status')).toBe('processing');
    expect(header(claimed, 'X-IGNITE-Processed-At')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/);
    expect(await ws.list(ws.root('ignitian_1'))).toEqual([]);
    release.resolve();
    await waitFor(
      async () => (await ws.list(ws.processed('ignitian_1'))).length === 0,
      2000,
      'agent deleted the file',
    );
  });

  it('finds files within one poll interval with events disabled (51)', async () => {
    await start({ isWatching: false, env: { QUEUE_POLL_INTERVAL: '0.3' } });
    await task('ignitian_2', 't1');
    await waitFor(() => runners.turns.length === 1, 1500, 'claim by rescan');
  });

  it('marks a file delivered after a successful turn and never delivers it again, also after a restart (54, 66)', async () => {
    runners.behaviour = () => ({ isDeleting: false });
    const m = await start();
    const path = await task('ignitian_1', 'keep');
    const name = path.slice(path.lastIndexOf('/') + 1);
    await waitFor(
      async () =>
        header(await ws.read(join(ws.processed('ignitian_1'), name)).catch(() => ''), 'X-IGNITE-Status') ===
        'delivered',
      2000,
      'delivered status',
    );
    await writeFile(
      join(ws.processed('ignitian_1'), 'done_1795975394355402.mime'),
      'X-IGNITE-Status: completed\n\nx',
    );
    await m.stop();
    await start({ store: m.store });
    await task('ignitian_1', 'barrier');
    await waitFor(() => runners.turns.length === 2, 2000, 'barrier delivered');
    expect(runners.turns.map((t) => t.file.slice(t.file.lastIndexOf('/') + 1))).toEqual([
      name,
      expect.stringMatching(/^task_assignment_/),
    ]);
  });

  it('delivers a critical message queued after two normal ones first, one message per agent at a time (55, 56)', async () => {
    const first = deferred();
    runners.behaviour = (t) => (runners.turns.indexOf(t) === 0 ? { until: first.promise } : {});
    await start();
    await task('ignitian_1', 'a');
    await waitFor(() => runners.turns.length === 1, 2000, 'first claimed');
    await task('ignitian_1', 'n1');
    await task('ignitian_1', 'n2');
    await task('ignitian_1', 'c', { priority: 'critical' });
    await waitFor(
      async () =>
        (await ws.list(ws.root('ignitian_1'))).length === 3 &&
        monitors[0]?.gateway.counts().find((c) => c.name === 'ignitian_1')?.processing === 1,
      2000,
      'three queued',
    );
    expect(runners.maxConcurrent).toBe(1);
    first.resolve();
    await waitFor(() => runners.turns.length === 4, 3000, 'all delivered');
    const order = await Promise.all(runners.turns.slice(1).map((t) => t.file));
    expect(order.map((f) => /task_assignment_\d+/.test(f))).toEqual([true, true, true]);
    expect(runners.maxConcurrent).toBe(1);
  });

  it('serves different agents in parallel up to parallel_max (57)', async () => {
    let running = 0;
    let peak = 0;
    runners.behaviour = () => {
      running++;
      peak = Math.max(peak, running);
      return { delayMs: 150, until: new Promise((r) => setTimeout(r, 150)).then(() => running--) };
    };
    await start({ env: { QUEUE_PARALLEL_MAX: '2' } });
    for (const agent of ['ignitian_1', 'ignitian_2', 'ignitian_3', 'leader', 'architect'])
      await task(agent, agent);
    await waitFor(() => runners.turns.length === 5 && running === 0, 5000, 'all five delivered');
    expect(peak).toBe(2);
  });

  it('delivers a turn that outlasts task_timeout once, renewing the lease (58)', async () => {
    runners.behaviour = () => ({ delayMs: 1200 });
    await start({ env: { RETRY_TIMEOUT: '0.3' } });
    await task('ignitian_1', 'long');
    await waitFor(() => runners.turns.length === 1, 2000, 'claimed');
    await waitFor(async () => (await ws.list(ws.processed('ignitian_1'))).length === 0, 4000, 'finished');
    await task('ignitian_1', 'barrier');
    await waitFor(() => runners.turns.length === 2, 2000, 'barrier');
    expect(runners.turns[1]?.file).not.toBe(runners.turns[0]?.file);
  });

  it('materialises a bus message from another gateway as a MIME file and delivers it (4.9)', async () => {
    const m = await start();
    await m.bus.send({
      from: 'webui',
      to: 'ignitian_1',
      type: 'task_assignment',
      priority: 'high',
      body: 'task_id: "bus_1"\n',
    });
    await waitFor(() => runners.turns.length === 1, 2000, 'materialised and delivered');
    expect(runners.turns[0]?.file).toMatch(/\/ignitian_1\/processed\/task_assignment_\d{16}\.mime$/);
    const events = (await m.bus.readEvents()).map((e) => e.type);
    expect(events).toContain('gateway.ignite.materialised');
  });

  it('delivers 500 messages to 9 agents exactly once, each agent in priority order', async () => {
    const agents = [
      'leader',
      'strategist',
      'architect',
      'evaluator',
      'coordinator',
      'innovator',
      'ignitian_1',
      'ignitian_2',
      'ignitian_3',
    ];
    const priorities = ['low', 'normal', 'high', 'critical'];
    const rank = new Map(['critical', 'high', 'normal', 'low'].map((p, i) => [p, i]));
    const expected = new Map<string, string>();
    let stamp = 1795975394355402;
    for (let i = 0; i < 500; i++) {
      const to = agents[i % agents.length] ?? 'leader';
      const priority = priorities[(i * 7) % 4] ?? 'normal';
      const path = await ws.send(
        { from: 'coordinator', to, type: 'task_assignment', priority, body: `n: ${i}\n` },
        stamp / 1000,
      );
      stamp += 10;
      expected.set(path.slice(path.lastIndexOf('/') + 1), priority);
    }
    await start({ env: { QUEUE_PARALLEL_MAX: '4', QUEUE_STABLE_DELAY: '0' } });
    await waitFor(() => runners.turns.length >= 500, 60_000, '500 deliveries');
    const names = runners.turns.map((t) => t.file.slice(t.file.lastIndexOf('/') + 1));
    expect(new Set(names).size).toBe(500);
    expect(names.length).toBe(500);
    for (const agent of agents) {
      const mine = runners.turnsOf(agent).map((t) => t.file.slice(t.file.lastIndexOf('/') + 1));
      const sorted = [...mine].sort(
        (a, b) =>
          (rank.get(expected.get(a) ?? '') ?? 9) - (rank.get(expected.get(b) ?? '') ?? 9) || (a < b ? -1 : 1),
      );
      expect(mine).toEqual(sorted);
    }
  }, 90_000);
});
