// send -> receive -> ack throughput and latency for every store, against two raw better-sqlite3
// baselines in the same run: one sequential producer with 1 and 32 consumers, then 16 concurrent
// producers (each awaiting its own sends) with 32 consumers, which is where the SQLite store's group
// commit can put many operations in one transaction. The store rows call the Store port directly
// (append, claim, ack, each awaited), without the bus. Plus the in-process wake-up latency of a waiting
// receive. A full run rewrites the section "## Bus and stores: latest run" of bench/RESULTS.md.
//
// Baselines: "one at a time" inserts, then selects + deletes, one transaction each, one message at a
// time (what the sequential-producer rows compare with); "same state changes, batched" does per message
// the rows musubi's SQLite store writes for append, claim and ack (a message row, its lease, its delete,
// and one event row each) with the store's group commit (the operations of one event-loop turn in one
// transaction, each answered after the commit), 16 producer loops x 32 consumer loops (what the 16 x 32
// rows compare with).
//
// BUS_BENCH_ONLY=sqlite16 runs just the batched baseline and the sqlite (bus) 16 x 32 row, and writes
// nothing to RESULTS.md.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createSystemClock } from '../src/core/clock.js';
import { MemoryStore } from '../src/store/memory/memory-store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Store } from '../src/store/store.js';
import {
  benchBus,
  machineLine,
  percentile,
  printTable,
  trackPeakRss,
  writeResultsSection,
  type BenchRow,
} from './bench-kit.js';

const ONE_AT_A_TIME = 'baseline: raw better-sqlite3, one at a time';
const BATCHED = 'baseline: raw better-sqlite3, same state changes, batched';

const clock = createSystemClock();
const dir = mkdtempSync(join(tmpdir(), 'musubi-bench-'));
let fileNo = 0;

const stores: Record<string, () => Store> = {
  memory: () => new MemoryStore({ clock }),
  sqlite: () => SqliteStore.open({ path: join(dir, `bus-${fileNo++}.db`), clock }),
};

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
  const bus = benchBus(store, clock);
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  const rss = trackPeakRss();
  const started = performance.now();
  let acked = 0;
  // The work ends at the last ack; consumers still parked in a receive then wait out its timeout.
  let finishedAt = Number.NaN;
  const consume = async (): Promise<void> => {
    while (acked < count) {
      const d = await bus.receive('bench', { timeoutMs: 200 });
      if (d === null) continue;
      await bus.ack(d.deliveryId);
      if (++acked === count) finishedAt = performance.now();
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
  const seconds = (finishedAt - started) / 1000;
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
    implementation: ONE_AT_A_TIME,
    producers: 1,
    consumers: 1,
    messages: count,
    'msgs/s': count / seconds,
    'p50 ms': percentile(latencies, 50),
    'p99 ms': percentile(latencies, 99),
    'peak RSS MB': rss.stop() / 2 ** 20,
    'claims/msg': 1,
    'ops/commit': 1,
  };
}

/**
 * The state changes musubi's SQLite store makes per message for append, claim and ack, with its group
 * commit, and nothing more: a minimal queue on bare better-sqlite3 (WAL, synchronous=NORMAL).
 * - send: one event row (`message.sent`, with the body) and one message row whose seq is the event's
 *   cursor, holding the message as JSON;
 * - claim: the oldest unleased message of the mailbox (a partial index on unleased rows) gets a lease
 *   (`lease_until`, `attempt + 1`), plus a `message.claimed` event row;
 * - ack: the leased row is deleted (guarded by seq, attempt and a live lease), plus a `message.acked`
 *   event row.
 * Every operation issued in one event-loop turn joins one batch, run on setImmediate in one
 * `BEGIN IMMEDIATE` ... `COMMIT`; each awaited operation is answered after its batch committed.
 * `producers` loops each await their own sends; `consumers` loops wait on an in-process waiter list
 * while no committed message is left unclaimed (a send's commit wakes one), then claim and ack.
 */
async function rawBatchedBaseline(count: number, producers: number, consumers: number): Promise<BenchRow> {
  const db = new Database(join(dir, `baseline-batched-${fileNo++}.db`));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`
    CREATE TABLE messages (
      seq INTEGER PRIMARY KEY,
      mailbox TEXT NOT NULL,
      id TEXT NOT NULL,
      body TEXT NOT NULL,
      attempt INTEGER NOT NULL DEFAULT 0,
      lease_until INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX messages_unleased ON messages (mailbox, seq) WHERE lease_until = 0;
    CREATE TABLE events (cursor INTEGER PRIMARY KEY, at INTEGER NOT NULL, event TEXT NOT NULL);
  `);
  const insertEvent = db.prepare<[number, string]>('INSERT INTO events (at, event) VALUES (?, ?)');
  const insertMessage = db.prepare<[number, string, string, string]>(
    'INSERT INTO messages (seq, mailbox, id, body) VALUES (?, ?, ?, ?)',
  );
  const claimNext = db.prepare<[number, string], { seq: number; id: string; attempt: number; body: string }>(
    'UPDATE messages SET lease_until = ?, attempt = attempt + 1 WHERE seq = ' +
      '(SELECT seq FROM messages WHERE mailbox = ? AND lease_until = 0 ORDER BY seq LIMIT 1) ' +
      'RETURNING seq, id, attempt, body',
  );
  const deleteLeased = db.prepare<[number, number, number]>(
    'DELETE FROM messages WHERE seq = ? AND attempt = ? AND lease_until > ?',
  );
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');
  const mailbox = 'bench';
  const body = 'x'.repeat(100);

  const send = (id: string): void => {
    const now = Date.now();
    const event = { type: 'message.sent', mailbox, messageId: id, from: 'bench', messageType: 'load' };
    const sent = JSON.stringify({ ...event, priority: 'normal', body });
    const seq = Number(insertEvent.run(now, sent).lastInsertRowid);
    const message = { id, from: 'bench', to: mailbox, type: 'load', priority: 'normal', headers: {} };
    insertMessage.run(seq, mailbox, id, JSON.stringify({ ...message, body, createdAt: now, attempt: 0 }));
  };
  const claim = (): { seq: number; id: string; attempt: number } => {
    const now = Date.now();
    const leaseUntil = now + 30_000;
    const row = claimNext.get(leaseUntil, mailbox);
    if (row === undefined) throw new Error('raw baseline: a reserved message was not there');
    const { seq, id, attempt } = row;
    const claimed = { type: 'message.claimed', mailbox, messageId: id, attempt, leaseUntil };
    insertEvent.run(now, JSON.stringify(claimed));
    return { seq, id, attempt };
  };
  const ack = (seq: number, id: string, attempt: number): void => {
    const now = Date.now();
    if (deleteLeased.run(seq, attempt, now).changes !== 1) throw new Error('raw baseline: lease lost');
    insertEvent.run(now, JSON.stringify({ type: 'message.acked', mailbox, messageId: id }));
  };

  // Group commit: what is queued during one turn runs in one transaction on the next (setImmediate).
  interface Operation {
    readonly run: () => unknown;
    readonly resolve: (value: unknown) => void;
    readonly reject: (err: unknown) => void;
  }
  let queue: Operation[] = [];
  let commits = 0;
  let operations = 0;
  const flush = (): void => {
    const batch = queue;
    queue = [];
    let results: unknown[];
    try {
      begin.run();
      results = batch.map((op) => op.run());
      commit.run();
    } catch (err) {
      if (db.inTransaction) rollback.run();
      for (const op of batch) op.reject(err);
      return;
    }
    commits++;
    operations += batch.length;
    batch.forEach((op, i) => op.resolve(results[i]));
  };
  const write = <T>(run: () => T): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (queue.length === 0) setImmediate(flush);
      queue.push({ run, resolve: resolve as (value: unknown) => void, reject });
    });

  // Committed messages nobody has claimed yet; consumers park while there are none.
  let unclaimed = 0;
  let claimed = 0;
  const waiters: (() => void)[] = [];
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  const rss = trackPeakRss();
  const started = performance.now();
  const produce = async (p: number): Promise<void> => {
    for (let i = p; i < count; i += producers) {
      const id = `m${i}`;
      sentAt.set(id, performance.now());
      await write(() => send(id));
      unclaimed++;
      waiters.shift()?.();
    }
  };
  const consume = async (): Promise<void> => {
    while (claimed < count) {
      if (unclaimed === 0) {
        await new Promise<void>((wake) => waiters.push(wake));
        continue;
      }
      unclaimed--;
      // The last message is spoken for: let the parked consumers go.
      if (++claimed === count) for (const wake of waiters.splice(0)) wake();
      const { seq, id, attempt } = await write(claim);
      await write(() => ack(seq, id, attempt));
      latencies.push(performance.now() - (sentAt.get(id) ?? Number.NaN));
    }
  };
  const consuming = Array.from({ length: consumers }, consume);
  await Promise.all(Array.from({ length: producers }, (_, p) => produce(p)));
  await Promise.all(consuming);
  const seconds = (performance.now() - started) / 1000;
  const peak = rss.stop();
  db.close();
  return {
    implementation: `${BATCHED} (${producers} x ${consumers})`,
    producers,
    consumers,
    messages: count,
    'msgs/s': count / seconds,
    'p50 ms': percentile(latencies, 50),
    'p99 ms': percentile(latencies, 99),
    'peak RSS MB': peak / 2 ** 20,
    'claims/msg': 1,
    'ops/commit': operations / commits,
  };
}

async function wakeUp(name: string, rounds: number): Promise<BenchRow> {
  const store = stores[name]!();
  const bus = benchBus(store, clock);
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

/** The msgs/s of a throughput row. */
function rate(row: BenchRow): number {
  const value = row['msgs/s'];
  return typeof value === 'number' ? value : Number.NaN;
}

/** `row` with a `ratio` of its msgs/s to the baseline's. */
function against(row: BenchRow, baseline: BenchRow): BenchRow {
  return { ...row, ratio: rate(row) / rate(baseline) };
}

const COLUMNS = [
  'implementation',
  'producers',
  'consumers',
  'messages',
  'msgs/s',
  'p50 ms',
  'p99 ms',
  'peak RSS MB',
  'claims/msg',
  'ops/commit',
  'ratio',
] as const;

/** Every row with the same columns in the same order (blank where a row has none). */
function inColumns(rows: readonly BenchRow[]): BenchRow[] {
  return rows.map((row) => {
    const out: Record<string, string | number> = {};
    for (const column of COLUMNS) out[column] = row[column] ?? '';
    return { ...out, implementation: row.implementation };
  });
}

/** Collects garbage between rows (with --expose-gc), so one row's garbage is not the next row's pause. */
function collect(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

async function measure<T>(run: () => T | Promise<T>): Promise<T> {
  collect();
  return run();
}

const LATEST = '## Bus and stores: latest run';
const TARGET_16X32 = 3 * 26_910;
const TARGET_SEQUENTIAL = 2 * 9_600;

/**
 * Writes `section` as "## Bus and stores: latest run" in bench/RESULTS.md; the first time, the empty
 * heading goes right after the hand-written "## Bus and stores" section so the two stay together.
 */
function writeLatestRun(section: string): void {
  const file = new URL('RESULTS.md', import.meta.url);
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    text = '';
  }
  const prose = text.indexOf('## Bus and stores\n');
  if (!text.includes(LATEST) && prose >= 0) {
    const next = text.indexOf('\n## ', prose + 1);
    if (next >= 0) writeFileSync(file, `${text.slice(0, next + 1)}${LATEST}\n\n${text.slice(next + 1)}`);
  }
  writeResultsSection(LATEST, section);
}

function verdict(isMet: boolean): string {
  return isMet ? 'met' : 'not met';
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

async function fullRun(): Promise<void> {
  const t0 = performance.now();
  const loadBefore = loadavg()[0] ?? Number.NaN;
  const oneAtATime = await measure(() => rawSqliteBaseline(20_000));
  const rows: BenchRow[] = [oneAtATime];
  const baselines: BenchRow[] = [oneAtATime];
  const sequential: { row: BenchRow; batched: BenchRow }[] = [];
  for (const shape of [
    { producers: 1, consumers: 1 },
    { producers: 1, consumers: 32 },
  ]) {
    // The same state changes with the same group commit and loops: what this shape's SQL costs.
    const shapeBaseline = await measure(() => rawBatchedBaseline(20_000, shape.producers, shape.consumers));
    baselines.push(shapeBaseline);
    rows.push(shapeBaseline);
    rows.push(await measure(() => throughput('memory', 50_000, shape)));
    const row = against(await measure(() => throughput('sqlite', 20_000, shape)), shapeBaseline);
    sequential.push({ row, batched: shapeBaseline });
    rows.push(row);
  }
  const batched = await measure(() => rawBatchedBaseline(20_000, 16, 32));
  baselines.push(batched);
  rows.push(batched);
  rows.push(await measure(() => throughput('memory', 50_000, { producers: 16, consumers: 32 })));
  const concurrent = against(
    await measure(() => throughput('sqlite', 20_000, { producers: 16, consumers: 32 })),
    batched,
  );
  rows.push(concurrent);
  for (const workers of [1, 16]) {
    rows.push(await measure(() => storeOnly('memory', 50_000, workers)));
    const row = await measure(() => storeOnly('sqlite', 20_000, workers));
    rows.push(against(row, workers === 1 ? oneAtATime : batched));
  }
  const throughputTable = printTable(
    'send -> receive -> ack (one process, WAL, synchronous=NORMAL)',
    inColumns(rows.map((row) => (baselines.includes(row) ? { ...row, ratio: 1 } : row))),
  );
  const wakeTable = printTable('bus: in-process receive wake-up (send -> waiting receive resolves)', [
    await measure(() => wakeUp('memory', 2_000)),
    await measure(() => wakeUp('sqlite', 2_000)),
  ]);
  const seconds = (performance.now() - t0) / 1000;
  const loadAfter = loadavg()[0] ?? Number.NaN;
  const ratio16 = rate(concurrent) / rate(batched);
  const status = [
    `- sqlite (bus) 16 × 32: ${fmt(rate(concurrent))} msgs/s, ${ratio16.toFixed(2)} of the batched raw ` +
      `baseline (${fmt(rate(batched))} msgs/s): >= 0.5 ${verdict(ratio16 >= 0.5)}; >= ${fmt(TARGET_16X32)} ` +
      `msgs/s ${verdict(rate(concurrent) >= TARGET_16X32)}.`,
    ...sequential.map(
      ({ row, batched: shapeBaseline }) =>
        `- sqlite (bus) ${String(row.producers)} × ${String(row.consumers)}: ${fmt(rate(row))} msgs/s, ` +
        `${(rate(row) / rate(shapeBaseline)).toFixed(2)} of the batched raw baseline of the same shape ` +
        `(${fmt(rate(shapeBaseline))} msgs/s), ${(rate(row) / rate(oneAtATime)).toFixed(2)} of the ` +
        `one-at-a-time one (${fmt(rate(oneAtATime))} msgs/s): >= ${fmt(TARGET_SEQUENTIAL)} msgs/s ` +
        `${verdict(rate(row) >= TARGET_SEQUENTIAL)}.`,
    ),
  ];
  const section = [
    LATEST,
    '',
    'Written by every full run of `npx tsx --expose-gc bench/bus.bench.ts` (the section above is the',
    'hand-written account). Rows as there, plus a second raw baseline, **raw better-sqlite3, same state',
    "changes, batched**: per message the rows musubi's SQLite store writes for append, claim and ack (a",
    'message row whose seq is its event cursor; a lease on the oldest unleased row of the mailbox through a',
    'partial index; a guarded delete; one event row for each of the three), with the same group commit (the',
    'operations of one event-loop turn in one `BEGIN IMMEDIATE` transaction on setImmediate, each answered',
    'after the commit), with the producer and consumer loops of the bus rows below it (consumers park on an',
    'in-process waiter list while nothing committed is left to claim). `ratio` is msgs/s against the',
    'batched baseline of the same shape for the bus rows, against the one-at-a-time baseline for the store',
    'row with one worker and the 16 x 32 batched one for the store row with 16.',
    '',
    `Targets (issue #20): sqlite (bus) 16 × 32 >= 0.5 of the batched raw baseline, and >= 3 × 26,910 =`,
    `${fmt(TARGET_16X32)} msgs/s on a quiet machine; a sequential producer through the bus on SQLite >= 2 ×`,
    `~9,600 = ${fmt(TARGET_SEQUENTIAL)} msgs/s.`,
    '',
    `Last run: ${machineLine()} · load average ${loadBefore.toFixed(1)} at the start, ` +
      `${loadAfter.toFixed(1)} at the end · ${seconds.toFixed(0)} s in all`,
    '',
    throughputTable,
    wakeTable,
    ...status,
  ].join('\n');
  writeLatestRun(section);
}

/** BUS_BENCH_ONLY=sqlite16: the batched baseline and the sqlite (bus) 16 x 32 row, nothing written. */
async function sqlite16(): Promise<void> {
  const batched = await measure(() => rawBatchedBaseline(20_000, 16, 32));
  const concurrent = await measure(() => throughput('sqlite', 20_000, { producers: 16, consumers: 32 }));
  printTable(
    'send -> receive -> ack, 16 producers x 32 consumers (one process, WAL, synchronous=NORMAL)',
    inColumns([{ ...batched, ratio: 1 }, against(concurrent, batched)]),
  );
}

try {
  const only = process.env['BUS_BENCH_ONLY'];
  if (only === undefined || only === '') await fullRun();
  else if (only === 'sqlite16') await sqlite16();
  else throw new Error(`BUS_BENCH_ONLY=${only}: known values are sqlite16`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
