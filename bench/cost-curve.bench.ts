// The cost curve (issue #20 item 4): how the cost of musubi on its SQLite store grows with the amount of
// work. Six curves, each with three or four sizes: send -> receive -> ack through the bus with a backlog
// queued elsewhere and in the same mailbox; the same load spread over more and more mailboxes; claim
// latency with more and more idle consumers parked on one mailbox; the agent_sync server's RSS per idle
// listen; the SQLite file size while a million messages are sent and acked; and the cost of a kv write
// with more and more kv watches running. Writes the `## Cost curve`
// section of bench/RESULTS.md and a small-multiples plot, bench/cost-curve.svg.
// Run: npm run bench -- cost-curve   (COST_CURVE_QUICK=1 runs tiny sizes and writes neither file)
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createSystemClock } from '../src/core/clock.js';
import type { Envelope } from '../src/core/envelope.js';
import { createSilentLogger } from '../src/core/logger.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Store } from '../src/store/store.js';
import {
  benchBus,
  LineConnection,
  machineLine,
  percentile,
  printTable,
  processCpuMs,
  processMemoryMiB,
  writeResultsSection,
  type BenchRow,
} from './bench-kit.js';
import { fixed, formatCount, renderPlot, type Panel } from './svg-plot.js';

/** One plot series: each row's value against the size it was measured at. */
function along<T>(sizes: readonly number[], rows: readonly T[], y: (row: T) => number): [number, number][] {
  return rows.map((row, i) => [sizes[i] ?? 0, y(row)]);
}

const isQuick = process.env.COST_CURVE_QUICK === '1';
const SIZES = isQuick
  ? {
      backlogs: [0, 2_000, 10_000],
      loadMessages: 2_000,
      mailboxes: [10, 100, 1_000],
      idleConsumers: [1, 8, 32],
      claimRounds: 100,
      kvWatches: [0, 10, 100],
      kvWrites: 200,
      listeners: [0, 100, 300],
      fileSamples: [0, 2_000, 5_000, 10_000],
    }
  : {
      backlogs: [0, 100_000, 1_000_000],
      loadMessages: 20_000,
      mailboxes: [10, 1_000, 10_000],
      idleConsumers: [1, 32, 256],
      claimRounds: 1_000,
      kvWatches: [0, 100, 1_000],
      kvWrites: 2_000,
      listeners: [0, 1_000, 5_000, 10_000],
      fileSamples: [0, 100_000, 300_000, 1_000_000],
    };
const PRODUCERS = 16;
const CONSUMERS = 32;
const BODY = 'x'.repeat(100);
/** Appends issued together: the group commit runs them 512 to a transaction over the next turns. */
const APPEND_CHUNK = 5_000;
/** Connections opened at once while parking idle listens (the server's accept backlog is 511). */
const CONNECT_CHUNK = 200;
/** File descriptors kept free for everything else when sizing the listen curve to `ulimit -n`. */
const SPARE_FDS = 500;
/** Cost ratios up to this count as flat (run-to-run noise on a shared 2-core machine). */
const FLAT_RATIO = 1.25;

const clock = createSystemClock();
const here = dirname(fileURLToPath(import.meta.url));

// ---- shared pieces --------------------------------------------------------------------------------

type OpenStore = () => { readonly store: SqliteStore; readonly path: string };

/** Each call opens a fresh SQLite file in `dir`, with the options a user gets by default. */
function storeOpener(dir: string): OpenStore {
  let fileNo = 0;
  return () => {
    const path = join(dir, `cost-${fileNo++}.db`);
    return { store: SqliteStore.open({ path, clock }), path };
  };
}

/** Wraps `store.claim` to count calls: idle consumers racing for a message show as claims/msg > 1. */
function countClaims(store: Store): () => number {
  let claims = 0;
  const claim = store.claim.bind(store);
  store.claim = (mailbox, options) => {
    claims++;
    return claim(mailbox, options);
  };
  return () => claims;
}

function envelope(id: string, mailbox: string): Envelope {
  const createdAt = Date.now();
  return {
    id,
    from: 'bench',
    to: mailbox,
    type: 'load',
    priority: 'normal',
    headers: {},
    body: BODY,
    createdAt,
    attempt: 0,
  };
}

/** Appends ids `<prefix><first>` .. `<prefix><first + count - 1>` straight to the store, in chunks. */
async function appendMany(
  store: Store,
  mailbox: string,
  ids: { prefix: string; first: number; count: number },
): Promise<void> {
  for (let done = 0; done < ids.count; done += APPEND_CHUNK) {
    const n = Math.min(APPEND_CHUNK, ids.count - done);
    const start = ids.first + done;
    await Promise.all(
      Array.from({ length: n }, (_, k) =>
        store.append(mailbox, envelope(`${ids.prefix}${start + k}`, mailbox)),
      ),
    );
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function seconds(since: number): number {
  return (performance.now() - since) / 1000;
}

function log(text: string): void {
  console.log(`[cost-curve] ${text}`);
}

/** 0, 10, 1k, 100k, 1M: sizes as the tables and the plot write them. */
// ---- growth: flat, logarithmic or linear ----------------------------------------------------------

interface Growth {
  /** Cost at the largest size over cost at the smallest. */
  readonly ratio: number;
  /** d log(cost) / d log(size) between the smallest non-zero size and the largest: 1 is linear. */
  readonly elasticity: number;
  readonly verdict: string;
}

/**
 * Classifies how `costs` (larger is worse) grow with `sizes`: flat when the largest size costs at most
 * 1.25x both the smallest and the smallest non-zero size; a step when only the move off 0 costs more;
 * else by elasticity: under 0.3 logarithmic (a 10x larger size costs less than 2x), 0.7 or more
 * linear, in between sublinear.
 */
function growth(sizes: readonly number[], costs: readonly number[]): Growth {
  const first = costs[0] ?? Number.NaN;
  const last = costs.at(-1) ?? Number.NaN;
  const nz = Math.max(
    0,
    sizes.findIndex((s) => s > 0),
  );
  const elasticity =
    Math.log(last / (costs[nz] ?? Number.NaN)) / Math.log((sizes.at(-1) ?? 1) / (sizes[nz] ?? 1));
  const ratio = last / first;
  const nonZeroRatio = last / (costs[nz] ?? Number.NaN);
  const verdict =
    ratio <= FLAT_RATIO && nonZeroRatio <= FLAT_RATIO
      ? 'flat'
      : nonZeroRatio <= FLAT_RATIO && nz > 0
        ? 'a step from 0, then flat'
        : elasticity < 0.3
          ? 'logarithmic'
          : elasticity >= 0.7
            ? 'linear'
            : `sublinear (about n^${fixed(elasticity)})`;
  return { ratio, elasticity, verdict };
}

/** One sentence for under a table: the verdict with the numbers it came from. */
function verdictLine(what: string, sizes: readonly number[], costs: readonly number[]): string {
  const g = growth(sizes, costs);
  const nz = Math.max(
    0,
    sizes.findIndex((s) => s > 0),
  );
  const from = formatCount(sizes[0] ?? 0);
  const to = formatCount(sizes.at(-1) ?? 0);
  const middle =
    nz > 0
      ? `, x${fixed((costs.at(-1) ?? Number.NaN) / (costs[nz] ?? Number.NaN))} from ${formatCount(sizes[nz] ?? 0)}`
      : '';
  return `- **${what}: ${g.verdict}** — x${fixed(g.ratio)} from ${from} to ${to}${middle} (elasticity ${fixed(g.elasticity)}).`;
}

// ---- curve 1: backlog -----------------------------------------------------------------------------

interface LoadResult {
  readonly msgsPerS: number;
  readonly p50: number;
  readonly p99: number;
  readonly claimsPerMsg: number;
}

/**
 * 16 producers send `count` messages to `mailbox` through the bus (each awaiting its own sends) while 32
 * consumers receive and ack them, as bench/bus.bench.ts does; latency is send called -> ack resolved.
 */
async function sendReceiveAck(
  store: Store,
  claims: () => number,
  load: { mailbox: string; count: number; prefix: string; mailboxOf?: (i: number) => string },
): Promise<LoadResult> {
  const { count, prefix } = load;
  const mailboxOf = load.mailboxOf ?? ((): string => load.mailbox);
  const bus = benchBus(store, clock);
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  const claimsBefore = claims();
  const started = performance.now();
  // Consumer k handles messages k, k + 32, ...: it receives from the mailbox message i went to (any
  // message of it: a mailbox shared by several consumers hands them out in its own order), so at most
  // 32 receives wait at any time, whatever the number of mailboxes.
  const consume = async (k: number): Promise<void> => {
    for (let i = k; i < count; i += CONSUMERS) {
      let delivery = await bus.receive(mailboxOf(i), { timeoutMs: 1_000 });
      while (delivery === null) delivery = await bus.receive(mailboxOf(i), { timeoutMs: 1_000 });
      await bus.ack(delivery.deliveryId);
      latencies.push(performance.now() - (sentAt.get(delivery.envelope.id) ?? Number.NaN));
    }
  };
  const produce = async (p: number): Promise<void> => {
    for (let i = p; i < count; i += PRODUCERS) {
      const id = `${prefix}${i}`;
      sentAt.set(id, performance.now());
      await bus.send({ id, from: 'bench', to: mailboxOf(i), type: 'load', body: BODY });
    }
  };
  const consumers = Array.from({ length: CONSUMERS }, (_, k) => consume(k));
  await Promise.all(Array.from({ length: PRODUCERS }, (_, p) => produce(p)));
  await Promise.all(consumers);
  const elapsedS = seconds(started);
  await bus.close();
  return {
    msgsPerS: count / elapsedS,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    claimsPerMsg: (claims() - claimsBefore) / count,
  };
}

/**
 * 32 consumers drain `count` messages from the front of `mailbox`, which holds more than that, through
 * the bus (receive with timeout 0, then ack); latency is receive called -> ack resolved.
 */
async function drainFront(
  store: Store,
  claims: () => number,
  mailbox: string,
  count: number,
): Promise<LoadResult> {
  const bus = benchBus(store, clock);
  const latencies: number[] = [];
  const claimsBefore = claims();
  let taken = 0;
  const started = performance.now();
  const consume = async (): Promise<void> => {
    while (taken < count) {
      taken++;
      const t0 = performance.now();
      const delivery = await bus.receive(mailbox, { timeoutMs: 0 });
      if (delivery === null) throw new Error(`mailbox ${mailbox} ran dry after ${taken} receives`);
      await bus.ack(delivery.deliveryId);
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: CONSUMERS }, consume));
  const elapsedS = seconds(started);
  await bus.close();
  return {
    msgsPerS: count / elapsedS,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    claimsPerMsg: (claims() - claimsBefore) / count,
  };
}

interface Curve {
  readonly title: string;
  readonly rows: BenchRow[];
  readonly notes: string[];
  readonly panels: Panel[];
}

async function backlogCurve(open: OpenStore): Promise<Curve & { prefill: string }> {
  const count = SIZES.loadMessages;
  // Warm-up on a throwaway file: otherwise the first row (backlog 0) also pays for JIT compilation.
  const warm = open();
  const warmClaims = countClaims(warm.store);
  await sendReceiveAck(warm.store, warmClaims, { mailbox: 'bench', count, prefix: 'w' });
  await appendMany(warm.store, 'backlog', { prefix: 'w', first: 0, count });
  await drainFront(warm.store, warmClaims, 'backlog', count);
  await warm.store.close();
  const { store } = open();
  const claims = countClaims(store);
  const other: LoadResult[] = [];
  const same: LoadResult[] = [];
  let nextId = 0;
  let queued = 0;
  let prefillS = 0;
  for (const backlog of SIZES.backlogs) {
    const t0 = performance.now();
    await appendMany(store, 'backlog', { prefix: 'b', first: nextId, count: backlog - queued });
    prefillS += seconds(t0);
    nextId += backlog - queued;
    queued = backlog;
    log(`backlog ${formatCount(backlog)} queued (${fixed(prefillS, 1)} s of appends so far)`);
    other.push(await sendReceiveAck(store, claims, { mailbox: 'bench', count, prefix: `o${backlog}-` }));
    // The same-mailbox row: `count` more go to the back (untimed), then the front `count` are drained,
    // so the mailbox holds backlog + count while they are, and the backlog again afterwards.
    await appendMany(store, 'backlog', { prefix: 'b', first: nextId, count });
    nextId += count;
    same.push(await drainFront(store, claims, 'backlog', count));
  }
  await store.close();
  const sizes = SIZES.backlogs;
  const row = (kind: string, latency: string, results: LoadResult[]) =>
    results.map((r, i) => ({
      implementation: kind,
      backlog: sizes[i] ?? 0,
      messages: count,
      'msgs/s': Math.round(r.msgsPerS),
      latency,
      'p50 ms': r.p50,
      'p99 ms': r.p99,
      'claims/msg': r.claimsPerMsg,
      'cost x': (results[0]?.msgsPerS ?? Number.NaN) / r.msgsPerS,
    }));
  const perMsg = (results: LoadResult[]) => results.map((r) => 1 / r.msgsPerS);
  const appended = nextId - SIZES.backlogs.length * count;
  return {
    title: `backlog: ${formatCount(count)} messages, ${PRODUCERS} producers x ${CONSUMERS} consumers, bus on SQLite`,
    rows: [
      ...row('backlog in another mailbox', 'send -> acked', other),
      ...row('backlog in the same mailbox (drain the front)', 'receive -> acked', same),
    ],
    notes: [
      verdictLine('time per message, backlog in another mailbox', sizes, perMsg(other)),
      verdictLine(
        'p99, backlog in another mailbox',
        sizes,
        other.map((r) => r.p99),
      ),
      verdictLine('time per message, backlog in the same mailbox', sizes, perMsg(same)),
      verdictLine(
        'p99, backlog in the same mailbox',
        sizes,
        same.map((r) => r.p99),
      ),
    ],
    panels: [
      {
        title: 'Backlog: throughput',
        xLabel: 'messages already queued',
        yLabel: 'msgs/s',
        series: [
          { label: 'other mailbox', points: along(sizes, other, (r) => r.msgsPerS) },
          { label: 'same mailbox (drain)', points: along(sizes, same, (r) => r.msgsPerS) },
        ],
      },
      {
        title: 'Backlog: p99 latency',
        xLabel: 'messages already queued',
        yLabel: 'p99 ms',
        series: [
          { label: 'other: send -> acked', points: along(sizes, other, (r) => r.p99) },
          { label: 'same: receive -> acked', points: along(sizes, same, (r) => r.p99) },
        ],
      },
    ],
    prefill: `${appended.toLocaleString('en-US')} backlog appends took ${fixed(prefillS, 1)} s (${Math.round(appended / prefillS).toLocaleString('en-US')} appends/s through the store port, ${APPEND_CHUNK.toLocaleString('en-US')} issued at a time)`,
  };
}

// ---- curve 2: mailboxes ---------------------------------------------------------------------------

async function mailboxCurve(open: OpenStore): Promise<Curve> {
  const count = SIZES.loadMessages;
  const results: LoadResult[] = [];
  for (const mailboxes of SIZES.mailboxes) {
    const { store } = open();
    const claims = countClaims(store);
    const mailboxOf = (i: number): string => `mb-${i % mailboxes}`;
    results.push(await sendReceiveAck(store, claims, { mailbox: 'mb-0', count, prefix: 'm', mailboxOf }));
    await store.close();
    log(`${formatCount(mailboxes)} mailboxes done`);
  }
  const sizes = SIZES.mailboxes;
  return {
    title: `mailboxes: ${formatCount(count)} messages round-robin over N mailboxes, ${PRODUCERS} producers x ${CONSUMERS} consumer loops`,
    rows: results.map((r, i) => ({
      implementation: 'sqlite (bus)',
      mailboxes: sizes[i] ?? 0,
      'msgs per mailbox': count / (sizes[i] ?? 1),
      'msgs/s': Math.round(r.msgsPerS),
      'p50 ms': r.p50,
      'p99 ms': r.p99,
      'claims/msg': r.claimsPerMsg,
      'cost x': (results[0]?.msgsPerS ?? Number.NaN) / r.msgsPerS,
    })),
    notes: [
      verdictLine(
        'time per message',
        sizes,
        results.map((r) => 1 / r.msgsPerS),
      ),
      verdictLine(
        'p99 send -> acked',
        sizes,
        results.map((r) => r.p99),
      ),
    ],
    panels: [
      {
        title: 'Mailboxes: throughput',
        xLabel: 'mailboxes the load is spread over',
        yLabel: 'msgs/s',
        series: [{ label: 'send -> receive -> ack', points: along(sizes, results, (r) => r.msgsPerS) }],
      },
      {
        title: 'Mailboxes: latency',
        xLabel: 'mailboxes the load is spread over',
        yLabel: 'ms, send -> acked',
        series: [
          { label: 'p50', points: along(sizes, results, (r) => r.p50) },
          { label: 'p99', points: along(sizes, results, (r) => r.p99) },
        ],
      },
    ],
  };
}

// ---- curve 3: idle consumers ----------------------------------------------------------------------

interface ClaimResult {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly claimsPerMsg: number;
}

/**
 * `idle` consumers loop on receive -> ack on one mailbox; one message at a time is sent, and the time
 * from send called to the first receive resolving is taken. Between rounds the consumers re-park.
 */
async function claimLatency(open: OpenStore, idle: number, rounds: number): Promise<ClaimResult> {
  const { store } = open();
  const claims = countClaims(store);
  const bus = benchBus(store, clock);
  let isStopped = false;
  let onDelivery: ((at: number) => void) | undefined;
  const consume = async (): Promise<void> => {
    while (!isStopped) {
      const delivery = await bus.receive('idle', { timeoutMs: 60_000 });
      if (delivery === null) continue;
      onDelivery?.(performance.now());
      await bus.ack(delivery.deliveryId);
    }
  };
  const consumers = Array.from({ length: idle }, consume);
  await sleep(100); // every consumer parked
  const warmup = Math.min(20, rounds);
  const samples: number[] = [];
  let claimsBefore = 0;
  for (let round = 0; round < warmup + rounds; round++) {
    if (round === warmup) claimsBefore = claims();
    const delivered = new Promise<number>((resolve) => (onDelivery = resolve));
    const t0 = performance.now();
    await bus.send({ from: 'bench', to: 'idle', type: 'ping' });
    const at = await delivered;
    if (round >= warmup) samples.push(at - t0);
    await sleep(1); // the ack commits and the winner parks again
  }
  const claimsPerMsg = (claims() - claimsBefore) / rounds;
  isStopped = true;
  await bus.close(); // wakes every parked receive, which then resolves null
  await Promise.all(consumers);
  await store.close();
  return {
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    max: Math.max(...samples),
    claimsPerMsg,
  };
}

async function idleConsumerCurve(open: OpenStore): Promise<Curve> {
  const sizes = SIZES.idleConsumers;
  const results: ClaimResult[] = [];
  for (const idle of sizes) results.push(await claimLatency(open, idle, SIZES.claimRounds));
  log('idle consumers done');
  return {
    title: `idle consumers: one message at a time to a mailbox with N parked receives, ${formatCount(SIZES.claimRounds)} rounds`,
    rows: results.map((r, i) => ({
      implementation: 'sqlite (bus)',
      'idle consumers': sizes[i] ?? 0,
      'p50 ms': r.p50,
      'p99 ms': r.p99,
      'max ms': r.max,
      'claims/msg': r.claimsPerMsg,
      'cost x': r.p50 / (results[0]?.p50 ?? Number.NaN),
    })),
    notes: [
      verdictLine(
        'p50 send -> first receive resolves',
        sizes,
        results.map((r) => r.p50),
      ),
      verdictLine(
        'p99',
        sizes,
        results.map((r) => r.p99),
      ),
      verdictLine(
        'claims per message',
        sizes,
        results.map((r) => r.claimsPerMsg),
      ),
    ],
    panels: [
      {
        title: 'Idle consumers: claim latency',
        xLabel: 'idle consumers parked on the mailbox',
        yLabel: 'ms, send -> receive resolves',
        series: [
          { label: 'p50', points: along(sizes, results, (r) => r.p50) },
          { label: 'p99', points: along(sizes, results, (r) => r.p99) },
        ],
      },
      {
        title: 'Idle consumers: claims per message',
        xLabel: 'idle consumers parked on the mailbox',
        yLabel: 'store.claim calls / msg',
        series: [{ label: 'claims/msg', points: along(sizes, results, (r) => r.claimsPerMsg) }],
      },
    ],
  };
}

// ---- curve 5: file size ---------------------------------------------------------------------------

function fileBytes(path: string): number {
  return existsSync(path) ? statSync(path).size : 0;
}

async function fileSizeCurve(open: OpenStore): Promise<Curve> {
  const { store, path } = open();
  const samples: { processed: number; db: number; wal: number; events: number; seconds: number }[] = [];
  const started = performance.now();
  let processed = 0;
  for (const target of SIZES.fileSamples) {
    while (processed < target) {
      const n = Math.min(APPEND_CHUNK, target - processed);
      await appendMany(store, 'churn', { prefix: 'f', first: processed, count: n });
      const deliveries = await Promise.all(
        Array.from({ length: n }, () => store.claim('churn', { leaseMs: 60_000 })),
      );
      await Promise.all(
        deliveries.map((d) =>
          d === null ? Promise.reject(new Error('nothing to claim')) : store.ack(d.deliveryId),
        ),
      );
      processed += n;
    }
    const oldest = (await store.readEvents({ limit: 1 }))[0]?.cursor;
    const newest = await store.lastEventCursor();
    samples.push({
      processed,
      db: fileBytes(path),
      wal: fileBytes(`${path}-wal`),
      events: oldest === undefined ? 0 : newest - oldest + 1,
      seconds: seconds(started),
    });
    log(`${formatCount(processed)} messages sent and acked`);
  }
  const live = (await store.count('churn')).total;
  await store.close();
  const closedDb = fileBytes(path);
  const mib = (bytes: number): number => bytes / 2 ** 20;
  const sizes = samples.map((s) => s.processed);
  const nonEmpty = samples.filter((s) => s.processed > 0);
  return {
    title: `file size: messages sent (append), claimed and acked in batches of ${formatCount(APPEND_CHUNK)} through the store port`,
    rows: [
      ...samples.map((s) => ({
        implementation: 'sqlite, default options',
        'messages sent+acked': s.processed,
        'db MiB': mib(s.db),
        'WAL MiB': mib(s.wal),
        'db+WAL MiB': mib(s.db + s.wal),
        'events kept': s.events,
        'elapsed s': s.seconds,
      })),
      {
        implementation: 'same file after close (WAL checkpointed and removed)',
        'messages sent+acked': processed,
        'db MiB': mib(closedDb),
        'WAL MiB': 0,
        'db+WAL MiB': mib(closedDb),
        'events kept': samples.at(-1)?.events ?? 0,
        'elapsed s': seconds(started),
      },
    ],
    notes: [
      verdictLine(
        'db + WAL size',
        nonEmpty.map((s) => s.processed),
        nonEmpty.map((s) => s.db + s.wal),
      ),
      `- Live messages left at the end: ${live}. Throughput of the churn: ${Math.round(processed / (samples.at(-1)?.seconds ?? 1)).toLocaleString('en-US')} messages/s (append + claim + ack, 3 events each).`,
    ],
    panels: [
      {
        title: 'SQLite file size (sent + acked)',
        xLabel: 'messages sent and acked',
        yLabel: 'MiB',
        series: [
          { label: 'db', points: along(sizes, samples, (s) => mib(s.db)) },
          { label: 'db + WAL', points: along(sizes, samples, (s) => mib(s.db + s.wal)) },
        ],
      },
    ],
  };
}

// ---- curve 4: idle agent_sync listens (server in a child process) --------------------------------

interface Server {
  readonly child: ChildProcess;
  readonly port: number;
  /** Asks the server to run a full GC; resolves when it has. */
  gc(): Promise<void>;
  /** Sends `wake` to bus mailbox `name` from inside the server. */
  wake(name: string): void;
  stop(): Promise<void>;
}

/** Child mode: the agent_sync gateway on a SQLite store in `dataDir`; prints its port; `gc` lines run a GC, `wake <name>` lines send mail. */
async function serveAgentSync(dataDir: string): Promise<void> {
  const { createAgentSyncGateway } = await import('../src/gateways/agent-sync/agent-sync-gateway.js');
  const store = SqliteStore.open({ path: join(dataDir, 'bus.db'), clock });
  const bus = benchBus(store, clock);
  const gateway = createAgentSyncGateway({
    bus,
    logger: createSilentLogger(),
    clock,
    agents: ['bench-00'],
    cwd: dataDir,
    port: 0,
    isFresh: true,
  });
  await gateway.start();
  const address = gateway.address();
  process.stdout.write(`PORT ${address.kind === 'tcp' ? address.port : 0}\n`);
  process.stdin.setEncoding('utf8').on('data', (chunk: string) => {
    for (const line of chunk.split('\n')) {
      if (line === 'gc') {
        (globalThis as { gc?: () => void }).gc?.();
        process.stdout.write('GC\n');
      }
      // agent_sync's send only reaches names in AGENTS_LIST; mail through the bus reaches any listen.
      const wake = /^wake (\S+)$/.exec(line)?.[1];
      if (wake !== undefined) void bus.send({ from: 'bench', to: wake, type: 'message', body: 'wake' });
    }
  });
  process.stdin.on('end', () => process.exit(0));
}

function startServer(dataDir: string): Promise<Server> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--expose-gc', fileURLToPath(import.meta.url), '--serve-agent-sync', dataDir],
    {
      cwd: join(here, '..'),
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  let out = '';
  const gcWaiters: Array<() => void> = [];
  return new Promise((resolve, reject) => {
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const port = /PORT (\d+)\n/.exec(out);
      if (port?.[1] !== undefined) {
        out = out.slice((port.index ?? 0) + port[0].length);
        resolve({
          child,
          port: Number(port[1]),
          gc: () =>
            new Promise<void>((done) => {
              gcWaiters.push(done);
              child.stdin?.write('gc\n');
            }),
          wake: (name) => void child.stdin?.write(`wake ${name}\n`),
          stop: () =>
            new Promise<void>((done) => {
              child.once('exit', () => done());
              child.stdin?.end();
            }),
        });
      }
      let gcDone = out.indexOf('GC\n');
      while (gcDone >= 0) {
        gcWaiters.shift()?.();
        out = out.slice(gcDone + 3);
        gcDone = out.indexOf('GC\n');
      }
    });
    child.once('exit', (code) => reject(new Error(`agent_sync server exited with ${code}`)));
  });
}

/** The soft `ulimit -n` of this process (children inherit it). */
function openFileLimit(): number {
  const match = /Max open files\s+(\d+)/.exec(readFileSync('/proc/self/limits', 'utf8'));
  return Number(match?.[1] ?? 1024);
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

interface ListenSample {
  readonly listens: number;
  readonly rss: number;
  readonly idleCpuPct: number;
  readonly pairP50: number;
  readonly pairP99: number;
}

async function idleListenCurve(workDir: string): Promise<Curve> {
  const fdLimit = openFileLimit();
  const sizes = SIZES.listeners.filter((n) => n <= fdLimit - SPARE_FDS);
  const dataDir = join(workDir, 'agent-sync');
  mkdirSync(dataDir);
  const server = await startServer(dataDir);
  const pid = server.child.pid ?? 0;
  const probe = await LineConnection.open(server.port);
  const send = JSON.stringify({ cmd: 'send', agent: 'bench-00', to: 'bench-00', text: 'probe' });
  const listen = JSON.stringify({ cmd: 'listen', agent: 'bench-00', timeout: 5 });
  for (let i = 0; i < 200; i++) await probe.request(send).then(() => probe.request(listen));
  const conns: LineConnection[] = [];
  const parked: Promise<string>[] = [];
  const samples: ListenSample[] = [];
  for (const target of sizes) {
    while (conns.length < target) {
      const opened = await Promise.all(
        Array.from({ length: Math.min(CONNECT_CHUNK, target - conns.length) }, () =>
          LineConnection.open(server.port),
        ),
      );
      for (const conn of opened) {
        parked.push(
          conn.request(JSON.stringify({ cmd: 'listen', agent: `idle-${conns.length}`, timeout: null })),
        );
        conns.push(conn);
      }
    }
    await probe.request('{"cmd": "status"}');
    await sleep(1_000); // let the last listens park
    const cpuBefore = processCpuMs(pid);
    const idleStarted = performance.now();
    await sleep(2_000);
    const idleCpuPct = ((processCpuMs(pid) - cpuBefore) / (performance.now() - idleStarted)) * 100;
    await server.gc();
    await sleep(500);
    const rss = processMemoryMiB(pid, 'VmRSS');
    const pairs: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t0 = performance.now();
      await probe.request(send);
      await probe.request(listen);
      pairs.push(performance.now() - t0);
    }
    samples.push({
      listens: target,
      rss,
      idleCpuPct,
      pairP50: percentile(pairs, 50),
      pairP99: percentile(pairs, 99),
    });
    log(`${formatCount(target)} idle listens parked: ${fixed(rss, 1)} MiB`);
  }
  // The last listen really parked: mail for it wakes it.
  const lastName = `idle-${conns.length - 1}`;
  if (conns.length > 0) {
    server.wake(lastName);
    const reply = await withTimeout(parked.at(-1) ?? Promise.resolve(''), 10_000, `listen of ${lastName}`);
    if (!reply.includes('wake')) throw new Error(`listen of ${lastName} answered ${reply}`);
  }
  for (const conn of [probe, ...conns]) conn.close();
  await server.stop();
  const base = samples[0]?.rss ?? Number.NaN;
  const withListens = samples.filter((s) => s.listens > 0);
  const perThousand = (s: ListenSample): number => ((s.rss - base) / s.listens) * 1000;
  const skipped = SIZES.listeners.filter((n) => !sizes.includes(n));
  return {
    title:
      'idle agent_sync listens: one TCP connection each, `{"cmd": "listen", "timeout": null}`, SQLite store',
    rows: samples.map((s) => ({
      implementation: 'agent-sync gateway (child process)',
      'idle listens': s.listens,
      'RSS MiB': s.rss,
      'extra MiB': s.rss - base,
      'MiB per 1,000': s.listens === 0 ? '-' : fixed(perThousand(s)),
      'idle CPU %': s.idleCpuPct,
      'send+listen p50 ms': s.pairP50,
      'send+listen p99 ms': s.pairP99,
    })),
    notes: [
      verdictLine(
        'extra RSS',
        withListens.map((s) => s.listens),
        withListens.map((s) => s.rss - base),
      ),
      verdictLine(
        'RSS per listen',
        withListens.map((s) => s.listens),
        withListens.map(perThousand),
      ),
      verdictLine(
        'send+listen p50 beside the idle listens',
        samples.map((s) => s.listens),
        samples.map((s) => s.pairP50),
      ),
      ...(skipped.length > 0
        ? [`- Skipped ${skipped.join(', ')} listens: \`ulimit -n\` is ${fdLimit}.`]
        : []),
    ],
    panels: [
      {
        title: 'Idle agent_sync listens: server RSS',
        xLabel: 'idle listens (one TCP connection each)',
        yLabel: 'RSS MiB',
        series: [{ label: 'server RSS', points: samples.map((s) => [s.listens, s.rss]) }],
      },
    ],
  };
}

// ---- curve 6: kv watches --------------------------------------------------------------------------

interface KvWriteResult {
  readonly unwatchedUs: number;
  readonly watchedUs: number;
  readonly seen: number;
}

/**
 * `watches` kv watches run, one per key `tasks/w<i>` (as a yadon host watches each task row it runs);
 * then `writes` sequential kvSets of an unwatched key (`agents/...`), then as many of watched keys, each
 * awaited until the watch of that key has seen it. Times each kind of write.
 */
async function kvWrites(open: OpenStore, watches: number, writes: number): Promise<KvWriteResult> {
  const { store } = open();
  const stop = new AbortController();
  let seen = 0;
  let onSeen: (() => void) | undefined;
  const watching = Array.from({ length: watches }, async (_, i) => {
    for await (const change of store.kvWatch(`tasks/w${i}`, { signal: stop.signal })) {
      if (change.key !== `tasks/w${i}`) continue;
      seen++;
      onSeen?.();
    }
  });
  await sleep(50); // every watch read its (empty) log and waits
  let t0 = performance.now();
  for (let i = 0; i < writes; i++) await store.kvSet(`agents/a${i % 50}`, { state: 'busy', i });
  const unwatchedUs = ((performance.now() - t0) * 1000) / writes;
  let watchedUs = Number.NaN;
  if (watches > 0) {
    t0 = performance.now();
    for (let i = 0; i < writes; i++) {
      const delivered = new Promise<void>((resolve) => (onSeen = resolve));
      await store.kvSet(`tasks/w${i % watches}`, { state: 'running', i });
      await delivered;
    }
    watchedUs = ((performance.now() - t0) * 1000) / writes;
  }
  stop.abort();
  await Promise.all(watching);
  await store.close();
  return { unwatchedUs, watchedUs, seen };
}

async function kvWatchCurve(open: OpenStore): Promise<Curve> {
  const sizes = SIZES.kvWatches;
  const results: KvWriteResult[] = [];
  for (const watches of sizes) results.push(await kvWrites(open, watches, SIZES.kvWrites));
  log('kv watches done');
  const watched = sizes.slice(1);
  const watchedResults = results.slice(1);
  return {
    title: `kv watches: ${formatCount(SIZES.kvWrites)} sequential kvSets with N watches running, one key each`,
    rows: results.map((r, i) => ({
      implementation: 'sqlite (store)',
      'kv watches': sizes[i] ?? 0,
      'µs per write, unwatched key': r.unwatchedUs,
      'µs per write until its watch sees it': Number.isNaN(r.watchedUs) ? '-' : r.watchedUs,
      'changes seen': r.seen,
      'cost x': r.unwatchedUs / (results[0]?.unwatchedUs ?? Number.NaN),
    })),
    notes: [
      verdictLine(
        'a write of an unwatched key',
        sizes,
        results.map((r) => r.unwatchedUs),
      ),
      verdictLine(
        'a write of a watched key, until its watch sees it',
        watched,
        watchedResults.map((r) => r.watchedUs),
      ),
    ],
    panels: [
      {
        title: 'KV watches: cost of a write',
        xLabel: 'kv watches running',
        yLabel: 'µs per sequential kvSet',
        series: [
          { label: 'unwatched key', points: along(sizes, results, (r) => r.unwatchedUs) },
          { label: 'watched key, until seen', points: along(watched, watchedResults, (r) => r.watchedUs) },
        ],
      },
    ],
  };
}

// ---- report ---------------------------------------------------------------------------------------

function sectionText(
  curves: readonly Curve[],
  tables: readonly string[],
  extra: { prefill: string; runtimeS: number },
): string {
  return [
    '## Cost curve',
    '',
    '`npm run bench -- cost-curve` (issue #20 item 4) — how the cost of musubi on its SQLite store grows with',
    'the amount of work, on the options a user gets by default (WAL, `synchronous = normal`, group commit of',
    'at most 512 operations per transaction, the newest 100,000 events kept, pruned every 100 appends;',
    'acked messages are deleted at once). Every table ends with `cost x`: time per message (or latency) at',
    'that size over the smallest size, and a verdict computed from the numbers: **flat** when the largest',
    `size costs at most ${FLAT_RATIO}x both the smallest and the smallest non-zero size (**a step** when only the`,
    'move off 0 costs more), else by elasticity (d log cost / d log size between the smallest non-zero size',
    'and the largest): under 0.3 **logarithmic**, 0.7 or more **linear**, in between sublinear. Each curve',
    'runs on a warmed-up process (a throwaway send/receive/ack run first).',
    '',
    '- **Backlog.** A backlog is appended straight to the store (5,000 appends issued at a time) in mailbox',
    `  \`backlog\`, growing 0 -> 100k -> 1M in one file. At each size, 16 producers x 32 consumers send, receive`,
    '  and ack 20,000 messages through the bus on mailbox `bench` (as `bench/bus.bench.ts` does; latency is',
    '  send called -> ack resolved). The same-mailbox row does not wait for measured messages behind a million',
    '  others (that is draining the backlog, which its own throughput predicts); instead 20,000 more messages',
    '  go to the back of `backlog` and 32 consumers drain 20,000 from its front (receive with timeout 0, then',
    '  ack; latency is receive called -> ack resolved), so the mailbox holds backlog + 20,000 while they do.',
    '- **Mailboxes.** 20,000 messages, message i to mailbox `mb-(i mod N)`, 16 producers. There are always 32',
    '  consumer loops: loop k handles messages k, k + 32, ..., receiving from the mailbox that message went to',
    '  (any message of it) and acking it, so at most 32 receives wait, whatever N; for N >= 32 they wait on',
    '  different mailboxes, for N = 10 about three share each mailbox. A fresh file per N.',
    '- **Idle consumers.** N consumers loop receive -> ack on one mailbox; one message at a time is sent and',
    '  the time from send called to the first receive resolving is taken, with 1 ms between rounds for the',
    '  winner to park again. `store.claim` is wrapped to count claims per message.',
    '- **Idle listens.** The agent_sync gateway (SQLite store) runs in a child process; N TCP connections each',
    '  send `{"cmd": "listen", "agent": "idle-<i>", "timeout": null}` and stay parked, one name each. After the',
    "  listens park, 2 s of the server's CPU is read (idle CPU %), a GC runs in the server, and its VmRSS is",
    '  read; then 200 send + listen pairs on another connection time the busy path beside the parked listens.',
    '  The last listen is then woken with mail to prove it was parked.',
    '- **File size.** A fresh file; messages are appended, claimed and acked in batches of 5,000 through the',
    '  store port, and the main file, the WAL and the events kept are read at each sample.',
    '- **KV watches.** N kv watches run on one store, one key each (`tasks/w<i>`, as a yadon host watches',
    '  each task row it runs); then sequential kvSets of keys nobody watches, then as many of watched keys,',
    '  each awaited until its watch saw the change. A fresh file per N.',
    '',
    `Last run: ${machineLine()} · load average ${loadavg()[0]?.toFixed(1) ?? '?'} at the end · ${fixed(extra.runtimeS, 0)} s in all · ${extra.prefill}.`,
    '',
    '![cost curve](cost-curve.svg)',
    '',
    ...curves.flatMap((curve, i) => [tables[i] ?? '', ...curve.notes, '']),
  ].join('\n');
}

async function main(): Promise<void> {
  const started = performance.now();
  const workDir = mkdtempSync(join(tmpdir(), 'musubi-cost-curve-'));
  try {
    const open = storeOpener(workDir);
    const backlog = await backlogCurve(open);
    const mailboxes = await mailboxCurve(open);
    const idle = await idleConsumerCurve(open);
    const listens = await idleListenCurve(workDir);
    const files = await fileSizeCurve(open);
    const watches = await kvWatchCurve(open);
    const curves = [backlog, mailboxes, idle, listens, files, watches];
    const tables = curves.map((curve) => {
      const text = printTable(curve.title, curve.rows);
      for (const note of curve.notes) console.log(note);
      console.log('');
      return text;
    });
    const runtimeS = seconds(started);
    const section = sectionText(curves, tables, { prefill: backlog.prefill, runtimeS });
    const svg = renderPlot(
      curves.flatMap((c) => c.panels),
      `${machineLine()}${isQuick ? ' · QUICK sizes' : ''}`,
    );
    if (isQuick) {
      const svgPath = join(tmpdir(), 'musubi-cost-curve-quick.svg');
      writeFileSync(svgPath, svg);
      log(`quick run: RESULTS.md left alone; plot written to ${svgPath}`);
    } else {
      writeFileSync(join(here, 'cost-curve.svg'), svg);
      writeResultsSection('## Cost curve', section);
    }
    log(`${fixed(runtimeS, 1)} s in all`);
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

// Entry point last: the class above must be initialised before top-level await runs anything.
if (process.argv[2] === '--serve-agent-sync') await serveAgentSync(process.argv[3] ?? tmpdir());
else await main();
