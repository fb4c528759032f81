// send -> receive -> ack through the Bus on the NATS store (1 and 32 consumers) against raw JetStream
// publish + consume + double-ack of the same envelope JSON, in the same run on the same server. Every
// operation waits for the server's confirmation on both sides (PubAck, acked ack), as the Store port
// requires. Starts its own nats-server (/usr/sbin/nats-server, temp dir, free port) so other users of
// the shared one do not skew it, and reports CPU time per message of this process and of the server
// next to wall-clock throughput: on a busy shared machine the CPU cost is the steadier comparison.
// NATS_BENCH_SERVER=host:port uses an existing server instead (server CPU is then not measured).
import { readFileSync } from 'node:fs';
import { AckPolicy, jetstream, jetstreamManager, RetentionPolicy, type JsMsg } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { createBus } from '../src/bus/bus.js';
import { createSystemClock } from '../src/core/clock.js';
import { createEnvelope } from '../src/core/envelope.js';
import { createIdGenerator } from '../src/core/ids.js';
import { createSilentLogger } from '../src/core/logger.js';
import { parseNatsUrl } from '../src/store/nats/nats-location.js';
import { NatsStore } from '../src/store/nats/nats-store.js';
import { NatsServerProcess } from '../test/fixtures/nats-server.js';
import { percentile, printTable, trackPeakRss, type BenchRow } from './bench-kit.js';

const own = process.env.NATS_BENCH_SERVER === undefined ? await NatsServerProcess.start() : undefined;
const server = process.env.NATS_BENCH_SERVER ?? own?.hostPort ?? '127.0.0.1:4222';

/** CPU milliseconds used so far by this process and by the bench's own nats-server. */
function cpuNow(): { client: number; server: number } {
  const usage = process.cpuUsage();
  let serverMs = Number.NaN;
  if (own?.pid !== undefined) {
    // /proc/<pid>/stat fields 14 and 15: utime and stime in clock ticks (100 per second on Linux).
    const fields = readFileSync(`/proc/${own.pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    serverMs = (Number(fields[11]) + Number(fields[12])) * 10;
  }
  return { client: (usage.user + usage.system) / 1000, server: serverMs };
}
const clock = createSystemClock();
const ids = createIdGenerator(clock);
const runTag = `bench_${process.pid}`;
const body = 'x'.repeat(100);

function row(
  name: string,
  consumers: number,
  count: number,
  seconds: number,
  latencies: number[],
  peak: number,
  cpu: { client: number; server: number },
): BenchRow {
  return {
    implementation: name,
    consumers,
    messages: count,
    'msgs/s': count / seconds,
    'p50 ms': percentile(latencies, 50),
    'p99 ms': percentile(latencies, 99),
    'peak RSS MB': peak / 2 ** 20,
    'client CPU µs/msg': (cpu.client * 1000) / count,
    'server CPU µs/msg': (cpu.server * 1000) / count,
  };
}

function cpuSince(start: { client: number; server: number }): { client: number; server: number } {
  const end = cpuNow();
  return { client: end.client - start.client, server: end.server - start.server };
}

async function natsStoreRun(count: number, consumers: number): Promise<BenchRow> {
  const prefix = `${runTag}_store_${consumers}_${performance.now().toFixed(0)}`;
  const store = await NatsStore.open({ location: parseNatsUrl(`nats://${server}?prefix=${prefix}`), clock });
  const bus = createBus({
    store,
    clock,
    ids,
    logger: createSilentLogger(),
    config: { leaseMs: 30_000, retry: { baseMs: 5_000, capMs: 300_000, maxAttempts: 3 } },
  });
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  const rss = trackPeakRss();
  const cpu = cpuNow();
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
  for (let i = 0; i < count; i++) {
    const id = `m${i}`;
    sentAt.set(id, performance.now());
    await bus.send({ id, from: 'bench', to: 'bench', type: 'load', body });
  }
  await Promise.all(workers);
  const seconds = (finishedAt - started) / 1000;
  const used = cpuSince(cpu);
  const peak = rss.stop();
  await bus.close();
  await store.close();
  await dropStreams([`${prefix}_journal`, `KV_${prefix}_kv`]);
  return row('nats store (bus)', consumers, count, seconds, latencies, peak, used);
}

/** Raw JetStream: publish (await PubAck), a durable pull consumer, ackAck (await the server's ack). */
async function rawRun(count: number, consumers: number): Promise<BenchRow> {
  // Same client options as the store's connection (noAsyncTraces), so only the design differs.
  const nc = await connect({ servers: server, noAsyncTraces: true });
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  const stream = `${runTag}_raw_${consumers}_${performance.now().toFixed(0)}`;
  await jsm.streams.add({ name: stream, subjects: [`${stream}.q`], retention: RetentionPolicy.Workqueue });
  await jsm.consumers.add(stream, {
    durable_name: 'worker',
    ack_policy: AckPolicy.Explicit,
    max_ack_pending: 10_000,
  });
  const consumer = await js.consumers.get(stream, 'worker');
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  const rss = trackPeakRss();
  const cpu = cpuNow();
  const started = performance.now();
  let acked = 0;
  const handle = async (msg: JsMsg): Promise<void> => {
    await msg.ackAck();
    acked++;
    const id = msg.headers?.get('id') ?? '';
    latencies.push(performance.now() - (sentAt.get(id) ?? Number.NaN));
  };
  // One consume() loop hands messages to `consumers` concurrent ackers.
  const messages = await consumer.consume({ max_messages: Math.max(consumers, 64) });
  const inFlight = new Set<Promise<void>>();
  const consuming = (async () => {
    for await (const msg of messages) {
      const p = handle(msg).finally(() => inFlight.delete(p));
      inFlight.add(p);
      if (inFlight.size >= consumers) await Promise.race(inFlight);
      if (acked + inFlight.size >= count) break;
    }
    await Promise.all(inFlight);
  })();
  const { headers } = await import('@nats-io/transport-node');
  for (let i = 0; i < count; i++) {
    const id = `m${i}`;
    const envelope = createEnvelope({ id, from: 'bench', to: 'bench', type: 'load', body }, { ids, clock });
    const h = headers();
    h.set('id', id);
    sentAt.set(id, performance.now());
    await js.publish(`${stream}.q`, JSON.stringify(envelope), { headers: h });
  }
  await consuming;
  const seconds = (performance.now() - started) / 1000;
  const used = cpuSince(cpu);
  const peak = rss.stop();
  messages.stop();
  await jsm.streams.delete(stream);
  await nc.close();
  return row('baseline: raw JetStream', consumers, count, seconds, latencies, peak, used);
}

async function dropStreams(streams: string[]): Promise<void> {
  const nc = await connect({ servers: server });
  const jsm = await jetstreamManager(nc);
  for (const s of streams) await jsm.streams.delete(s).catch(() => false);
  await nc.close();
}

const count = Number(process.env.NATS_BENCH_MESSAGES ?? 5_000);
const rounds = Number(process.env.NATS_BENCH_ROUNDS ?? 3);
// Raw and store runs alternate, `rounds` times each, so a busy neighbour on a shared machine hits both;
// the table shows the run with the median throughput of each.
const median = (runs: BenchRow[]): BenchRow => {
  const sorted = [...runs].sort((a, b) => Number(a['msgs/s']) - Number(b['msgs/s']));
  const middle = sorted[Math.floor(sorted.length / 2)];
  if (middle === undefined) throw new Error('no runs');
  return middle;
};
const cpuPerMessage = (r: BenchRow): number =>
  Number(r['client CPU µs/msg']) +
  (Number.isNaN(Number(r['server CPU µs/msg'])) ? 0 : Number(r['server CPU µs/msg']));
const middleOf = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
const rows: BenchRow[] = [];
const notes: string[] = [];
try {
  for (const consumers of [1, 32]) {
    const raw: BenchRow[] = [];
    const store: BenchRow[] = [];
    for (let round = 0; round < rounds; round++) {
      raw.push(await rawRun(count, consumers));
      store.push(await natsStoreRun(count, consumers));
    }
    const [rawRow, storeRow] = [median(raw), median(store)];
    const percent = (a: number, b: number): string => `${Math.round((a / b) * 100)}%`;
    rows.push(rawRow, {
      ...storeRow,
      'of raw': percent(Number(storeRow['msgs/s']), Number(rawRow['msgs/s'])),
    });
    const perRound = store.map((r, i) => percent(Number(r['msgs/s']), Number(raw[i]?.['msgs/s'])));
    const [rawCpu, storeCpu] = [middleOf(raw.map(cpuPerMessage)), middleOf(store.map(cpuPerMessage))];
    notes.push(
      `${consumers} consumer(s): throughput of raw per round ${perRound.join(', ')}; CPU per message ` +
        `(client + server, median) raw ${rawCpu.toFixed(0)} µs, store ${storeCpu.toFixed(0)} µs: ` +
        `CPU-bound throughput ${percent(rawCpu, storeCpu)} of raw`,
    );
  }
} finally {
  await own?.[Symbol.asyncDispose]();
}
const where = own === undefined ? `nats-server on ${server}` : 'own nats-server (file storage, temp dir)';
printTable(`NATS store: send -> receive -> ack vs raw JetStream (${where}, median of ${rounds} runs)`, rows);
for (const line of notes) console.log(`- ${line}`);
