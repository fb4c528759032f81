import { mkdir, readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { backoffMs } from '../../src/gateways/ignite/failure-path.js';
import { FakeIgniteRunners } from '../fakes/fake-ignite-runner.js';
import { waitFor } from '../fakes/fake-cli-harness.js';
import { startMonitor, type StartMonitorOptions, type TestMonitor } from '../fixtures/ignite-monitor.js';
import { makeIgniteWorkspace, type IgniteWorkspace } from '../fixtures/ignite-workspace.js';

const PROMPT = /^新しいメッセージが来ました。(\/.+\/processed\/[^/]+\.mime) を読んで処理してください。$/;

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('ignite queue monitor', () => {
  let ws: IgniteWorkspace;
  let runners: FakeIgniteRunners;
  const monitors: TestMonitor[] = [];
  const start = async (options: Partial<StartMonitorOptions> = {}): Promise<TestMonitor> => {
    const m = await startMonitor({ ws, runnerFor: (a) => runners.runnerFor(a), ...options });
    monitors.push(m);
    return m;
  };
  const task = (to: string, id: string, extra: { priority?: string; type?: string } = {}) =>
    ws.send({
      from: 'coordinator',
      to,
      type: extra.type ?? 'task_assignment',
      body: `task_id: "${id}"\ntitle: "T ${id}"\n`,
      ...(extra.priority !== undefined && { priority: extra.priority }),
    });
  const header = (text: string, name: string): string | undefined =>
    new RegExp(`^${name}: (.*)$`, 'm').exec(text)?.[1];

  beforeEach(async () => {
    ws = await makeIgniteWorkspace({ workers: 3 });
    runners = new FakeIgniteRunners();
  });
  afterEach(async () => {
    for (const m of monitors.splice(0)) await m.close();
    await ws.cleanup();
  });

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

  it('writes F4-shaped retry headers after a failed turn and waits for Next-Retry-After (59, 60)', async () => {
    runners.behaviour = (t) => (runners.turns.indexOf(t) === 0 ? { isFailure: true } : {});
    await start({ env: { RETRY_BASE_DELAY: '0.4', RETRY_MAX_DELAY: '2' }, random: () => 0.999 });
    const path = await task('ignitian_1', 'retry');
    const name = path.slice(path.lastIndexOf('/') + 1);
    await waitFor(
      async () =>
        header(await ws.read(join(ws.processed('ignitian_1'), name)).catch(() => ''), 'X-IGNITE-Status') ===
        'retrying',
      2000,
      'retrying',
    );
    const text = await ws.read(join(ws.processed('ignitian_1'), name));
    const names = text
      .split('\n\n')[0]
      ?.split('\n')
      .map((l) => l.slice(0, l.indexOf(':')));
    expect(names?.slice(-6)).toEqual([
      'Content-Transfer-Encoding',
      'X-IGNITE-Status',
      'X-IGNITE-Processed-At',
      'X-IGNITE-Retry-Count',
      'X-IGNITE-Last-Retry-At',
      'X-IGNITE-Next-Retry-After',
    ]);
    expect(header(text, 'X-IGNITE-Retry-Count')).toBe('1');
    await waitFor(() => runners.turns.length === 2, 3000, 'retried');
    const gap = (runners.turns[1]?.startedAt ?? 0) - (runners.turns[0]?.startedAt ?? 0);
    expect(gap).toBeGreaterThanOrEqual(395);
    for (let n = 0; n < 10; n++) {
      for (const r of [0, 0.5, 0.9999]) {
        const b = backoffMs(n, 5000, 300_000, () => r);
        expect(b).toBeGreaterThanOrEqual(0);
        expect(b).toBeLessThanOrEqual(Math.min(300_000, 5000 * 2 ** n));
        expect(b % 1000).toBe(0);
      }
    }
  });

  it('dead-letters after 1 + DLQ_MAX_RETRIES failures with a complete escalation (61, 62, 63, 64)', async () => {
    runners.behaviour = (t) => (t.agent === 'ignitian_2' ? { isFailure: true } : { isDeleting: false });
    await start();
    const path = await ws.send({
      from: 'coordinator',
      to: 'ignitian_2',
      type: 'task_assignment',
      body: 'type: task_assignment\nfrom: coordinator\npayload:\n  task_id: "task_009"\n  title: "T \\"9\\""\n',
    });
    const name = path.slice(path.lastIndexOf('/') + 1);
    const dlq = join(ws.rt, 'queue', 'dead_letter');
    // The monitor writes the dead-letter entry and the escalation, then removes the processed file: the
    // leader's turn can start before that removal, so wait for all three.
    await waitFor(
      async () =>
        (await ws.list(dlq)).length === 1 &&
        runners.turnsOf('leader').length === 1 &&
        (await ws.list(ws.processed('ignitian_2'))).length === 0,
      5000,
      'dead letter, escalation and the processed file removed',
    );
    expect(runners.turnsOf('ignitian_2')).toHaveLength(4);
    const [entryName = ''] = await ws.list(dlq);
    expect(entryName).toMatch(new RegExp(`^${name.replace('.mime', '')}_dlq_\\d{10}\\.mime$`));
    const entry = await ws.read(join(dlq, entryName));
    expect(entry).toMatch(
      /^MIME-Version: 1\.0\nMessage-ID: <\d+\.\d+\.\d+@ignite\.local>\nFrom: queue_monitor\nTo: leader\nDate: .*\nX-IGNITE-Type: dead_letter\nX-IGNITE-Priority: critical\nX-IGNITE-Status: dead_letter\n/,
    );
    const body = entry.slice(entry.indexOf('\n\n') + 2);
    expect(body).toMatch(
      new RegExp(
        `^original_file: "${name}"\nfailure_info:\n  retry_count: 3\n  max_retries: 3\n  last_error: "delivery failed after 3 retries"\n  moved_at: "[^"]+"\noriginal_message: \\|\n  MIME-Version: 1\\.0\n`,
      ),
    );
    expect(body).toContain('\n  X-IGNITE-Retry-Count: 3\n');
    expect(body).toContain('\n  \n  type: task_assignment\n');
    expect(body.endsWith('\n')).toBe(false);
    const escalation = await ws.read(runners.turnsOf('leader')[0]?.file ?? '');
    expect(escalation.slice(escalation.indexOf('\n\n') + 2)).toBe(
      [
        'task_id: "task_009"',
        'title: "T \\"9\\""',
        'original_assignee: "ignitian_2"',
        'failure_reason: "delivery failed after 3 retries"',
        'retry_count: 3',
        'max_retries: 3',
        'recommended_action: "manual_review"',
        `dlq_path: "${dlq}/"`,
        'notes: "リトライ上限に到達したためエスカレーションします"',
      ].join('\n'),
    );
    expect(header(escalation, 'X-IGNITE-Type')).toBe('escalation');
    expect(runners.turnsOf('leader')[0]?.file).toMatch(/\/escalation_\d{16}\.mime$/);
    const dead = await monitors[0]?.bus.listDeadLetters({ mailbox: 'ignitian_2' });
    expect(dead).toHaveLength(1);
  });

  it('fails an unknown ignitian_x with 未知のエージェント and dead-letters it (68)', async () => {
    await mkdir(ws.root('ignitian_x'));
    await start();
    await task('ignitian_x', 'x');
    await waitFor(
      async () => (await ws.list(join(ws.rt, 'queue', 'dead_letter'))).length === 1,
      5000,
      'dead letter',
    );
    expect(runners.turnsOf('ignitian_x')).toHaveLength(0);
  });

  it('converts legacy YAML and renames non-canonical names before delivery (69, 70)', async () => {
    await start();
    await writeFile(
      join(ws.root('leader'), 'user_goal_1795975394355402.yaml'),
      'type: user_goal\nfrom: user\nto: leader\npriority: high\npayload:\n  goal: "x"\n',
    );
    await writeFile(
      join(ws.root('strategist'), 'odd.mime'),
      'From: leader\nTo: strategist\nDate: Mon, 30 Nov 2026 03:15:31 +0900\nX-IGNITE-Type: strategy_request\n\nbody',
    );
    await waitFor(() => runners.turns.length === 2, 3000, 'both delivered');
    const files = runners.turns.map((t) => t.file.slice(t.file.lastIndexOf('/') + 1)).sort();
    expect(files).toEqual(['strategy_request_1795976131000000.mime', 'user_goal_1795975394355402.mime']);
  });

  it('never reads processed/ files to find timeouts (71)', async () => {
    const processed = ws.processed('ignitian_3');
    await mkdir(processed, { recursive: true });
    const old = new Date('2001-01-01T00:00:00Z');
    for (let i = 0; i < 1000; i++) {
      const file = join(processed, `task_${String(1795975394355402 + i)}.mime`);
      await writeFile(file, 'X-IGNITE-Status: delivered\n\nx');
    }
    await start({ env: { QUEUE_POLL_INTERVAL: '0.2' } });
    // Reconciliation reads each file once at start; from here on nothing may touch them.
    const atime = new Date('2000-01-01T00:00:00Z');
    for (const n of await readdir(processed)) await utimes(join(processed, n), atime, old);
    for (let i = 0; i < 3; i++) {
      await task('ignitian_3', `b${i}`);
      await waitFor(() => runners.turns.length === i + 1, 2000, 'barrier');
    }
    const touched = (
      await Promise.all((await readdir(processed)).map(async (n) => (await stat(join(processed, n))).atimeMs))
    ).filter((t) => t !== atime.getTime());
    expect(touched).toEqual([]);
  });

  it('renders progress_update lines with rate limits and rewrites progress_update_latest.txt (72, 73, 75)', async () => {
    const m = await start();
    const long = 'x'.repeat(500);
    await ws.send({
      from: 'coordinator',
      to: 'leader',
      type: 'progress_update',
      body: `stage: build\npercent: 50\nmessage: "${long}"\nsummary: "s"\n`,
    });
    await waitFor(() => m.progress.length === 1, 2000, 'first line');
    expect(m.progress[0]?.line).toBe(`stage=build percent=50 message=${long}`.slice(0, 397) + '...');
    for (let i = 0; i < 10; i++)
      await ws.send({
        from: 'coordinator',
        to: 'leader',
        type: 'progress_update',
        body: `stage: s${i}\nsummary: "line ${i}"\n`,
      });
    await ws.send({
      from: 'coordinator',
      to: 'leader',
      type: 'progress_update',
      body: 'stage: done\npercent: 100\nfinal: true\nsummary: "all\\u0007 done"\ncompleted: 3\ntotal_tasks: 3\n',
    });
    await waitFor(() => runners.turnsOf('leader').length === 12, 4000, 'all delivered');
    expect(m.progress.map((p) => p.line)).toEqual([
      expect.stringMatching(/^stage=build/),
      'stage=done percent=100 message=all done',
    ]);
    const latest = await readFile(join(ws.rt, 'state', 'progress_update_latest.txt'), 'utf8');
    expect(latest).toMatch(
      /^Progress Update\n- Repository: N\/A\n- Issue: \?\n- Tasks: 3\/3\n- Summary: all done\n- Time: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+\n$/,
    );
  });

  it('refuses a second monitor on the same runtime dir (67)', async () => {
    await start();
    await expect(start()).rejects.toMatchObject({
      code: 'GATEWAY_UNAVAILABLE',
      message: 'queue_monitor は既に稼働中です（flock取得失敗）',
    });
    monitors.pop();
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
