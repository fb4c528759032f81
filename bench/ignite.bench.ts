// IGNITE gateway: (1) file-created -> agent-runner-invoked latency over 1,000 messages to 9 agents, on the
// memory and the SQLite store; (2) the queue monitor's CPU per minute with 0, 1,000 and 10,000 delivered
// files left in processed/ (measured over a short window with a 1 s rescan and scaled to a minute and to
// the default 10 s rescan); (3) `mime build` cold start (lean entry and full CLI) against `node -e 0`,
// interleaved in the same run. Needs `npm run build` for (3).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createBus } from '../src/bus/bus.js';
import { createSystemClock } from '../src/core/clock.js';
import { createIdGenerator } from '../src/core/ids.js';
import { createSilentLogger } from '../src/core/logger.js';
import { createIgniteGateway, type IgniteGateway } from '../src/gateways/ignite/ignite-gateway.js';
import { loadIgniteSettings } from '../src/gateways/ignite/ignite-settings.js';
import { buildMime } from '../src/gateways/ignite/mime/mime-build.js';
import { writeNewQueueFileSync } from '../src/gateways/ignite/mime/queue-file-writer-sync.js';
import { MemoryStore } from '../src/store/memory/memory-store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Store } from '../src/store/store.js';
import { FakeAgentRunner } from '../test/fakes/fake-agent-runner.js';
import { percentile, printTable, trackPeakRss, type BenchRow } from './bench-kit.js';

const MESSAGES = Number(process.env['IGNITE_BENCH_MESSAGES'] ?? '1000');
const COLD_RUNS = Number(process.env['IGNITE_BENCH_COLD_RUNS'] ?? '30');
const AGENTS = [
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
const PROMPT = /^新しいメッセージが来ました。(.+) を読んで処理してください。$/;
const clock = createSystemClock();
const root = mkdtempSync(join(tmpdir(), 'musubi-ignite-bench-'));
let n = 0;

async function workspace(): Promise<{ ws: string; rt: string }> {
  const ws = join(root, `ws-${n++}`);
  const rt = join(ws, '.ignite');
  await mkdir(join(rt, 'state'), { recursive: true });
  for (const a of AGENTS) await mkdir(join(rt, 'queue', a, 'processed'), { recursive: true });
  for (let i = 0; i < 9; i++) await writeFile(join(rt, 'state', `.agent_session_${i}`), `s${i}\n`);
  return { ws, rt };
}

async function monitor(
  store: Store,
  rt: string,
  ws: string,
  onRun: (file: string) => void,
  env: Record<string, string> = {},
): Promise<{ gateway: IgniteGateway; close: () => Promise<void> }> {
  const bus = createBus({
    store,
    clock,
    ids: createIdGenerator(clock),
    logger: createSilentLogger(),
    config: { leaseMs: 30_000, retry: { baseMs: 5_000, capMs: 300_000, maxAttempts: 3 } },
  });
  const runner = new FakeAgentRunner((input) => {
    onRun(PROMPT.exec(input.prompt)?.[1] ?? '');
    return {};
  });
  const gateway = createIgniteGateway({
    bus,
    logger: createSilentLogger(),
    clock,
    workspace: ws,
    runtimeDir: rt,
    settings: loadIgniteSettings({ env }),
    runnerFor: () => runner,
  });
  await gateway.start();
  return {
    gateway,
    close: async () => {
      await gateway.stop();
      await bus.close();
      await store.close();
    },
  };
}

async function latency(kind: string, store: Store): Promise<BenchRow> {
  const { ws, rt } = await workspace();
  const invokedAt = new Map<string, number>();
  const m = await monitor(store, rt, ws, (file) =>
    invokedAt.set(file.slice(file.lastIndexOf('/') + 1), performance.now()),
  );
  const peak = trackPeakRss();
  const samples: number[] = [];
  const t0 = performance.now();
  for (let i = 0; i < MESSAGES; i++) {
    const to = AGENTS[i % AGENTS.length] ?? 'leader';
    const content = buildMime(
      { from: 'coordinator', to: [to], type: 'task_assignment', body: `task_id: "t${i}"\n` },
      { nowMs: Date.now(), pid: process.pid },
    );
    // Synchronous write: the name appears (link) just before createdAt is taken, and the in-process
    // monitor cannot react before this loop yields.
    const path = writeNewQueueFileSync({
      dir: join(rt, 'queue', to),
      type: 'task_assignment',
      content,
      nowMs: performance.timeOrigin + performance.now(),
    });
    const createdAt = performance.now();
    const name = path.slice(path.lastIndexOf('/') + 1);
    const deadline = createdAt + 5_000;
    while (!invokedAt.has(name) && performance.now() < deadline) await sleep(0);
    samples.push((invokedAt.get(name) ?? Number.NaN) - createdAt);
  }
  const elapsed = performance.now() - t0;
  const rss = peak.stop();
  await m.close();
  return {
    implementation: `${kind} store: write file -> runner.run`,
    messages: MESSAGES,
    'msgs/s': (MESSAGES / elapsed) * 1000,
    'p50 ms': percentile(samples, 50),
    'p99 ms': percentile(samples, 99),
    'max ms': Math.max(...samples),
    'peak RSS MiB': rss / 1024 / 1024,
  };
}

async function idleCpu(delivered: number): Promise<BenchRow> {
  const { ws, rt } = await workspace();
  const processed = join(rt, 'queue', 'ignitian_1', 'processed');
  for (let i = 0; i < delivered; i++) {
    await writeFile(
      join(processed, `task_assignment_${1795975394355402 + i}.mime`),
      `MIME-Version: 1.0\nX-IGNITE-Type: task_assignment\nX-IGNITE-Status: delivered\n\ntask_id: "t${i}"\n`,
    );
  }
  const startAt = performance.now();
  const m = await monitor(new MemoryStore({ clock }), rt, ws, () => undefined, {
    QUEUE_POLL_INTERVAL: '1',
    QUEUE_HEARTBEAT_INTERVAL: '1',
  });
  // Start-up reconciliation reads processed/ once; wait for it to settle before measuring.
  await sleep(1_500);
  const startupMs = performance.now() - startAt;
  // Median of three windows, after a GC, so start-up garbage and other sessions' load skew less.
  const windowMs = 4_000;
  const windows: number[] = [];
  for (let i = 0; i < 3; i++) {
    (globalThis as { gc?: () => void }).gc?.();
    const before = process.cpuUsage();
    await sleep(windowMs);
    const used = process.cpuUsage(before);
    windows.push((used.user + used.system) / 1000);
  }
  await m.close();
  const cpuMsPerMinute = percentile(windows, 50) * (60_000 / windowMs);
  return {
    implementation: `${delivered.toLocaleString('en-US')} delivered files in processed/`,
    'start-up ms': startupMs - 1_500,
    'CPU ms/min (1 s rescan)': cpuMsPerMinute,
    'CPU ms/min (10 s rescan, scaled)': cpuMsPerMinute / 10,
  };
}

function coldStart(): BenchRow[] {
  const dist = join(import.meta.dirname, '..', 'dist');
  if (!existsSync(join(dist, 'ignite-mime.cjs'))) {
    console.log('cold start: dist/ignite-mime.cjs missing — run `npm run build` first');
    return [];
  }
  const args = [
    'build',
    '--from',
    'strategist',
    '--to',
    'coordinator',
    '--type',
    'task_list',
    '--body',
    'hello: world',
  ];
  const cmds: Record<string, string[]> = {
    'node -e 0': ['-e', '0'],
    'dist/ignite-mime.cjs build (musubi-ignite-mime)': [join(dist, 'ignite-mime.cjs'), ...args],
    'dist/cli.js ignite mime build (musubi ignite mime)': [join(dist, 'cli.js'), 'ignite', 'mime', ...args],
  };
  const wall: Record<string, number[]> = {};
  const cpu: Record<string, number[]> = {};
  for (let i = 0; i < COLD_RUNS; i++) {
    for (const [name, argv] of Object.entries(cmds)) {
      const t = performance.now();
      const run = spawnSync('/usr/bin/time', ['-f', '%U %S', process.execPath, ...argv], {
        encoding: 'utf8',
        cwd: root,
      });
      (wall[name] ??= []).push(performance.now() - t);
      const [u = 0, s = 0] = (run.stderr.trim().split('\n').at(-1) ?? '').split(' ').map(Number);
      (cpu[name] ??= []).push((u + s) * 1000);
    }
  }
  const base = percentile(wall['node -e 0'] ?? [], 50);
  const baseCpu = percentile(cpu['node -e 0'] ?? [], 50);
  return Object.keys(cmds).map((name) => ({
    implementation: name,
    runs: COLD_RUNS,
    'wall p50 ms': percentile(wall[name] ?? [], 50),
    'wall p90 ms': percentile(wall[name] ?? [], 90),
    'CPU p50 ms': percentile(cpu[name] ?? [], 50),
    'x node (wall)': percentile(wall[name] ?? [], 50) / base,
    'x node (CPU)': percentile(cpu[name] ?? [], 50) / baseCpu,
  }));
}

try {
  const rows = [
    await latency('memory', new MemoryStore({ clock })),
    await latency('sqlite', SqliteStore.open({ path: join(root, 'bus.db'), clock })),
  ];
  printTable(
    `IGNITE: file-created -> agent-runner-invoked latency (${MESSAGES} messages, 9 agents, one at a time)`,
    rows,
  );
  const cpuRows: BenchRow[] = [];
  for (const count of [0, 1_000, 10_000]) cpuRows.push(await idleCpu(count));
  printTable(
    'IGNITE: queue monitor CPU while idle with delivered files left in processed/ (median of 3 × 4 s windows, scaled to a minute)',
    cpuRows,
  );
  const cold = coldStart();
  if (cold.length > 0)
    printTable(
      `IGNITE: \`mime build\` cold start vs \`node -e 0\` (interleaved, ${COLD_RUNS} runs each)`,
      cold,
    );
} finally {
  rmSync(root, { recursive: true, force: true });
}
