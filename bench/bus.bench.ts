// send -> receive -> ack throughput and latency for every store, against a raw better-sqlite3 baseline
// (insert, then select + delete, one transaction each) in the same run: one sequential producer with 1
// and 32 consumers, then 16 concurrent producers (each awaiting its own sends) with 32 consumers, which
// is where the SQLite store's group commit can put many operations in one transaction. The store rows
// call the Store port directly (append, claim, ack, each awaited), without the bus, so they compare
// with the raw baseline. Plus the in-process wake-up latency of a waiting receive.
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

async function throughput(
  name: string,
  count: number,
  options: { consumers: number; producers: number },
): Promise<BenchRow> {
  const { consumers, producers } = options;
  const store = stores[name]!();
  // Counts the bus's claims: idle consumers that race for each message show up as claims per message > 1.
  let claims = 0;
  const claim = store.claim.bind(store);
  store.claim = (mailbox, claimOptions) => {
    claims++;
    return claim(mailbox, claimOptions);
  };
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
  // Producer p sends messages p, p + producers, p + 2 * producers, ..., each awaited before the next.
  const produce = async (p: number): Promise<void> => {
    for (let i = p; i < count; i += producers) {
      const id = `m${i}`;
      sentAt.set(id, performance.now());
      await bus.send({ id, from: 'bench', to: 'bench', type: 'load', body: 'x'.repeat(100) });
    }
  };
  await Promise.all(Array.from({ length: producers }, (_, p) => produce(p)));
  await Promise.all(workers);
  const seconds = (performance.now() - started) / 1000;
  const peak = rss.stop();
  await bus.close();
  await store.close();
  return {
    implementation: `${name} (bus)`,
    producers,
    consumers,
    messages: count,
    'msgs/s': count / seconds,
    'p50 ms': percentile(latencies, 50),
    'p99 ms': percentile(latencies, 99),
    'peak RSS MB': peak / 2 ** 20,
    'claims/msg': claims / count,
  };
}

/** `workers` loops, each appending one message, claiming one and acking it, awaiting every call. */
async function storeOnly(name: string, count: number, workers: number): Promise<BenchRow> {
  const store = stores[name]!();
  const latencies: number[] = [];
  const rss = trackPeakRss();
  const started = performance.now();
  const work = async (w: number): Promise<void> => {
    for (let i = w; i < count; i += workers) {
      const t0 = performance.now();
      await store.append('bench', {
        id: `m${i}`,
        from: 'bench',
        to: 'bench',
        type: 'load',
        priority: 'normal',
        headers: {},
        body: 'x'.repeat(100),
        createdAt: Date.now(),
        attempt: 0,
      });
      let delivery = await store.claim('bench', { leaseMs: 30_000 });
      while (delivery === null) delivery = await store.claim('bench', { leaseMs: 30_000 });
      await store.ack(delivery.deliveryId);
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: workers }, (_, w) => work(w)));
  const seconds = (performance.now() - started) / 1000;
  const peak = rss.stop();
  await store.close();
  return {
    implementation: `${name} (store)`,
    producers: workers,
    consumers: workers,
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
    producers: 1,
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
  for (const shape of [
    { producers: 1, consumers: 1 },
    { producers: 1, consumers: 32 },
    { producers: 16, consumers: 32 },
  ]) {
    rows.push(await throughput('memory', 50_000, shape));
    rows.push(await throughput('sqlite', 20_000, shape));
  }
  for (const workers of [1, 16]) {
    rows.push(await storeOnly('memory', 50_000, workers));
    rows.push(await storeOnly('sqlite', 20_000, workers));
  }
  printTable('send -> receive -> ack (one process, WAL, synchronous=NORMAL)', rows);
  printTable('bus: in-process receive wake-up (send -> waiting receive resolves)', [
    await wakeUp('memory', 2_000),
    await wakeUp('sqlite', 2_000),
  ]);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
