// send -> receive -> ack throughput and latency for every store, 1 and 32 consumers, against a raw
// better-sqlite3 baseline (insert, then select + delete, one transaction each) in the same run; plus the
// in-process wake-up latency of a waiting receive.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createBus } from '../src/bus/bus.js';
import type { Bus } from '../src/bus/bus.types.js';
import { createSystemClock } from '../src/core/clock.js';
import { createIdGenerator } from '../src/core/ids.js';
import { createSilentLogger } from '../src/core/logger.js';
import { MemoryStore } from '../src/store/memory/memory-store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Store } from '../src/store/store.js';
import { percentile, printTable, trackPeakRss, type BenchRow } from './bench-kit.js';

const clock = createSystemClock();
const dir = mkdtempSync(join(tmpdir(), 'musubi-bench-'));
let fileNo = 0;

const stores: Record<string, () => Store> = {
  memory: () => new MemoryStore({ clock }),
  sqlite: () => SqliteStore.open({ path: join(dir, `bus-${fileNo++}.db`), clock }),
};

function makeBus(store: Store): Bus {
  return createBus({
    store,
    clock,
    ids: createIdGenerator(clock),
    logger: createSilentLogger(),
    config: { leaseMs: 30_000, retry: { baseMs: 5_000, capMs: 300_000, maxAttempts: 3 } },
  });
}

async function throughput(name: string, count: number, consumers: number): Promise<BenchRow> {
  const store = stores[name]!();
  const bus = makeBus(store);
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  const rss = trackPeakRss();
  const started = performance.now();
  let acked = 0;
  const consume = async (): Promise<void> => {
    while (acked < count) {
      const d = await bus.receive('bench', { timeoutMs: 200 });
      if (d === null) continue;
      await bus.ack(d.deliveryId);
      acked++;
      latencies.push(performance.now() - (sentAt.get(d.envelope.id) ?? Number.NaN));
    }
  };
  const workers = Array.from({ length: consumers }, consume);
  for (let i = 0; i < count; i++) {
    const id = `m${i}`;
    sentAt.set(id, performance.now());
    await bus.send({ id, from: 'bench', to: 'bench', type: 'load', body: 'x'.repeat(100) });
  }
  await Promise.all(workers);
  const seconds = (performance.now() - started) / 1000;
  const peak = rss.stop();
  await bus.close();
  await store.close();
  return {
    implementation: `${name} (bus)`,
    consumers,
    messages: count,
    'msgs/s': count / seconds,
    'p50 ms': percentile(latencies, 50),
    'p99 ms': percentile(latencies, 99),
    'peak RSS MB': peak / 2 ** 20,
  };
}

function rawSqliteBaseline(count: number): BenchRow {
  const db = new Database(join(dir, 'baseline.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE q (seq INTEGER PRIMARY KEY, id TEXT UNIQUE, body TEXT)');
  const insert = db.prepare('INSERT INTO q (id, body) VALUES (?, ?)');
  const next = db.prepare('SELECT seq FROM q ORDER BY seq LIMIT 1');
  const del = db.prepare('DELETE FROM q WHERE seq = ?');
  const put = db.transaction((id: string) => insert.run(id, 'x'.repeat(100)));
  const take = db.transaction(() => {
    const row = next.get() as { seq: number } | undefined;
    if (row) del.run(row.seq);
  });
  const latencies: number[] = [];
  const rss = trackPeakRss();
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    put(`m${i}`);
    take();
    latencies.push(performance.now() - t0);
  }
  const seconds = (performance.now() - started) / 1000;
  db.close();
  return {
    implementation: 'baseline: raw better-sqlite3',
    consumers: 1,
    messages: count,
    'msgs/s': count / seconds,
    'p50 ms': percentile(latencies, 50),
    'p99 ms': percentile(latencies, 99),
    'peak RSS MB': rss.stop() / 2 ** 20,
  };
}

async function wakeUp(name: string, rounds: number): Promise<BenchRow> {
  const store = stores[name]!();
  const bus = makeBus(store);
  const samples: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const pending = bus.receive('wake', { timeoutMs: 5_000 });
    await new Promise((r) => setImmediate(r)); // let the receive park first
    const t0 = performance.now();
    await bus.send({ from: 'bench', to: 'wake', type: 'ping' });
    const d = await pending;
    samples.push(performance.now() - t0);
    if (d) await bus.ack(d.deliveryId);
  }
  await bus.close();
  await store.close();
  return {
    implementation: `${name} (bus)`,
    rounds,
    'p50 ms': percentile(samples, 50),
    'p99 ms': percentile(samples, 99),
    'max ms': Math.max(...samples),
  };
}

try {
  const rows: BenchRow[] = [rawSqliteBaseline(20_000)];
  for (const consumers of [1, 32]) {
    rows.push(await throughput('memory', 50_000, consumers));
    rows.push(await throughput('sqlite', 20_000, consumers));
  }
  printTable('bus: send -> receive -> ack (one process, WAL, synchronous=NORMAL)', rows);
  printTable('bus: in-process receive wake-up (send -> waiting receive resolves)', [
    await wakeUp('memory', 2_000),
    await wakeUp('sqlite', 2_000),
  ]);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
