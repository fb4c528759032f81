import { threePhaseTeams } from '../src/hub/team-builders.js';
// yadon gateway: (1) `status` round trips per second and p50/p99 latency with 1 and 8 concurrent
// clients against a bare Node Unix-socket echo server, measured in the same run with the same client
// (connect, write, half-close, read to end); the servers run in a child process so client and server
// do not share one event loop; refused connections are counted. (2) A three-phase job with 8 workers
// and a zero-latency in-process agent: everything the job takes is orchestration overhead (sockets,
// bus mailboxes, registry rows and task records, decomposition parsing, aggregation). Target: <= 20 ms.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { AgentDirectory } from '../src/bus/agent-directory.js';
import { createBus } from '../src/bus/bus.js';
import { createSystemClock } from '../src/core/clock.js';
import { createIdGenerator } from '../src/core/ids.js';
import { createSilentLogger } from '../src/core/logger.js';
import { createYadonGateway } from '../src/gateways/yadon/yadon-gateway.js';
import { MemoryStore } from '../src/store/memory/memory-store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Store } from '../src/store/store.js';
import { TaskRegistry } from '../src/tasks/task-registry.js';
import { FakeAgentRunner } from '../test/fakes/fake-agent-runner.js';
import { percentile, printTable, trackPeakRss, type BenchRow } from './bench-kit.js';

const clock = createSystemClock();
const STATUS_REQUESTS = 4_000;
const ROUND = 500;
const STATUS = '{"type": "status"}';
const JOBS = 200;
const WORKERS = 8;

/** An agent that answers at once: a plan of 8 subtasks per phase to decompositions, `ok` otherwise. */
function instantAgent(): FakeAgentRunner {
  const subtasks = Array.from({ length: WORKERS }, (_, i) => ({ instruction: `part ${i + 1}` }));
  const plan = JSON.stringify({
    phases: ['implement', 'docs', 'review'].map((name) => ({ name, subtasks })),
  });
  return new FakeAgentRunner((input) => ({ text: input.prompt.includes('"phases"') ? plan : 'ok' }));
}

async function startGateway(socketDir: string, store: Store, workerCount: number) {
  const bus = createBus({
    store,
    clock,
    ids: createIdGenerator(clock),
    logger: createSilentLogger(),
    config: { leaseMs: 30_000, retry: { baseMs: 5_000, capMs: 300_000, maxAttempts: 3 } },
  });
  const agent = instantAgent();
  const registry = new TaskRegistry({ bus, clock, logger: createSilentLogger() });
  const gateway = createYadonGateway({
    bus,
    registry,
    directory: new AgentDirectory({ bus, clock }),
    logger: createSilentLogger(),
    clock,
    ids: createIdGenerator(clock),
    socketDir,
    workerCount,
    workDir: socketDir,
    managerTeam: threePhaseTeams(agent, createSilentLogger()),
    workerRunner: () => agent,
  });
  await gateway.start();
  return {
    close: async () => {
      await gateway.stop();
      await registry.close();
      await bus.close();
      await store.close();
    },
  };
}

/** Child mode: serve the echo socket and a yadon gateway until stdin closes. */
async function serve(dir: string): Promise<void> {
  const echo = createServer({ allowHalfOpen: true }, (socket) => {
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => socket.end(Buffer.concat(chunks)));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => echo.listen(join(dir, 'echo.sock'), () => resolve()));
  const gateway = await startGateway(dir, new MemoryStore({ clock }), WORKERS);
  process.stdout.write('ready\n');
  process.stdin.resume();
  await new Promise((resolve) => process.stdin.once('end', resolve));
  await gateway.close();
  echo.close();
}

/** One request the yadon way; resolves its latency in ms, or null when the connection failed. */
function roundTrip(path: string, body: string): Promise<number | null> {
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = connect({ path, allowHalfOpen: true });
    socket.once('connect', () => socket.end(body));
    socket.on('data', () => undefined);
    socket.once('end', () => (socket.destroy(), resolve(performance.now() - started)));
    socket.once('error', () => (socket.destroy(), resolve(null)));
  });
}

interface LoadSample {
  readonly latencies: number[];
  seconds: number;
  failed: number;
}

const newSample = (): LoadSample => ({ latencies: [], seconds: 0, failed: 0 });

/** `requests` round trips from `clients` concurrent clients, added to `sample`. */
async function load(path: string, clients: number, requests: number, sample: LoadSample): Promise<void> {
  let next = 0;
  const started = performance.now();
  const client = async (): Promise<void> => {
    while (next++ < requests) {
      const ms = await roundTrip(path, STATUS);
      if (ms === null) sample.failed++;
      else sample.latencies.push(ms);
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  sample.seconds += (performance.now() - started) / 1000;
}

function row(name: string, clients: number, sample: LoadSample): BenchRow {
  return {
    implementation: name,
    clients,
    requests: sample.latencies.length + sample.failed,
    'round trips/s': sample.latencies.length / sample.seconds,
    'p50 ms': percentile(sample.latencies, 50),
    'p99 ms': percentile(sample.latencies, 99),
    refused: sample.failed,
    'load avg (1 min)': loadavg()[0] ?? 0,
  };
}

/**
 * Echo and yadon take turns in rounds of 500 requests, so a change of load on the machine hits both
 * alike; throughput is requests over the summed time of each side's own rounds.
 */
async function compare(dir: string, clients: number): Promise<BenchRow[]> {
  const echo = newSample();
  const yadon = newSample();
  for (let round = 0; round < STATUS_REQUESTS / ROUND; round++) {
    await load(join(dir, 'echo.sock'), clients, ROUND, echo);
    await load(join(dir, 'yadon-agent-yadon-1.sock'), clients, ROUND, yadon);
  }
  const echoRow = row('bare Node echo server', clients, echo);
  const yadonRow = row('yadon worker status', clients, yadon);
  const ratio = Number(yadonRow['round trips/s']) / Number(echoRow['round trips/s']);
  return [echoRow, { ...yadonRow, 'vs echo': ratio }];
}

async function statusBench(dir: string): Promise<BenchRow[]> {
  const child = spawn(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), '--serve', dir],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const lines = createInterface({ input: child.stdout });
  await new Promise<void>((resolve) => lines.once('line', () => resolve()));
  // Warm both paths (JIT, socket code) before anything is measured.
  await load(join(dir, 'echo.sock'), 1, ROUND, newSample());
  await load(join(dir, 'yadon-agent-yadon-1.sock'), 1, ROUND, newSample());
  const rows = [...(await compare(dir, 1)), ...(await compare(dir, 8))];
  const manager = newSample();
  await load(join(dir, 'yadon-agent-yadoran.sock'), 8, 1_000, manager);
  rows.push(row('yadon manager status (probes 8 workers)', 8, manager));
  child.stdin.end();
  await new Promise((resolve) => child.once('exit', resolve));
  return rows;
}

async function jobBench(dir: string, storeName: 'memory' | 'sqlite'): Promise<BenchRow> {
  const socketDir = mkdtempSync(join(dir, 'j-'));
  const store =
    storeName === 'memory'
      ? new MemoryStore({ clock })
      : SqliteStore.open({ path: join(socketDir, 'bus.db'), clock });
  const gateway = await startGateway(socketDir, store, WORKERS);
  const manager = join(socketDir, 'yadon-agent-yadoran.sock');
  const rss = trackPeakRss();
  const latencies: number[] = [];
  for (let i = 0; i < JOBS + 5; i++) {
    const body = JSON.stringify({
      type: 'task',
      id: `job-${i}`,
      payload: { instruction: 'do it', project_dir: socketDir },
    });
    const ms = await roundTrip(manager, body);
    if (i >= 5 && ms !== null) latencies.push(ms); // the first jobs warm up the JIT
  }
  const peak = rss.stop();
  await gateway.close();
  return {
    implementation: `three-phase job, ${WORKERS} workers x 3 phases x ${WORKERS} subtasks, ${storeName} store`,
    jobs: latencies.length,
    'agent ms': 0,
    'min ms': Math.min(...latencies),
    'p50 ms': percentile(latencies, 50),
    'p99 ms': percentile(latencies, 99),
    'per subtask ms': percentile(latencies, 50) / (3 * WORKERS),
    'peak RSS MiB': peak / 1024 / 1024,
    'load avg (1 min)': loadavg()[0] ?? 0,
  };
}

// Library timers are unref'd; the benchmark holds the process open itself (as the CLI does).
const keepAlive = setInterval(() => undefined, 2 ** 30);
if (process.argv[2] === '--serve') {
  await serve(process.argv[3] ?? '.');
} else {
  const dir = mkdtempSync('/tmp/ybench-');
  try {
    printTable('yadon status round trips vs a bare Unix-socket echo server', await statusBench(dir));
    printTable('three-phase job overhead with a zero-latency agent', [
      await jobBench(dir, 'memory'),
      await jobBench(dir, 'sqlite'),
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
clearInterval(keepAlive);
