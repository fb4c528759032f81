// send -> receive -> ack through the Bus on the NATS store (1 and 32 consumers) against raw JetStream
// publish + consume + double-ack of the same envelope JSON, in the same run on the same server. Every
// operation waits for the server's confirmation on both sides (PubAck, acked ack), as the Store port
// requires. Needs nats-server on 127.0.0.1:4222 (or NATS_BENCH_SERVER); every stream is deleted after.
import { AckPolicy, jetstream, jetstreamManager, RetentionPolicy, type JsMsg } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { createBus } from '../src/bus/bus.js';
import { createSystemClock } from '../src/core/clock.js';
import { createEnvelope } from '../src/core/envelope.js';
import { createIdGenerator } from '../src/core/ids.js';
import { createSilentLogger } from '../src/core/logger.js';
import { parseNatsUrl } from '../src/store/nats/nats-location.js';
import { NatsStore } from '../src/store/nats/nats-store.js';
import { percentile, printTable, trackPeakRss, type BenchRow } from './bench-kit.js';

const server = process.env.NATS_BENCH_SERVER ?? '127.0.0.1:4222';
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
): BenchRow {
  return {
    implementation: name,
    consumers,
    messages: count,
    'msgs/s': count / seconds,
    'p50 ms': percentile(latencies, 50),
    'p99 ms': percentile(latencies, 99),
    'peak RSS MB': peak / 2 ** 20,
  };
}

async function natsStoreRun(count: number, consumers: number): Promise<BenchRow> {
  const prefix = `${runTag}_store_${consumers}`;
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
    await bus.send({ id, from: 'bench', to: 'bench', type: 'load', body });
  }
  await Promise.all(workers);
  const seconds = (performance.now() - started) / 1000;
  const peak = rss.stop();
  await bus.close();
  await store.close();
  await dropStreams([`${prefix}_journal`, `KV_${prefix}_kv`]);
  return row('nats store (bus)', consumers, count, seconds, latencies, peak);
}

/** Raw JetStream: publish (await PubAck), a durable pull consumer, ackAck (await the server's ack). */
async function rawRun(count: number, consumers: number): Promise<BenchRow> {
  // Same client options as the store's connection (noAsyncTraces), so only the design differs.
  const nc = await connect({ servers: server, noAsyncTraces: true });
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  const stream = `${runTag}_raw_${consumers}`;
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
  const peak = rss.stop();
  messages.stop();
  await jsm.streams.delete(stream);
  await nc.close();
  return row('baseline: raw JetStream', consumers, count, seconds, latencies, peak);
}

async function dropStreams(streams: string[]): Promise<void> {
  const nc = await connect({ servers: server });
  const jsm = await jetstreamManager(nc);
  for (const s of streams) await jsm.streams.delete(s).catch(() => false);
  await nc.close();
}

const count = Number(process.env.NATS_BENCH_MESSAGES ?? 5_000);
const rows: BenchRow[] = [];
for (const consumers of [1, 32]) {
  rows.push(await rawRun(count, consumers));
  rows.push(await natsStoreRun(count, consumers));
}
printTable(`NATS store: send -> receive -> ack vs raw JetStream (nats-server on ${server})`, rows);
for (const consumers of [1, 32]) {
  const [raw, store] = rows.filter((r) => r.consumers === consumers);
  const ratio = Number(store?.['msgs/s']) / Number(raw?.['msgs/s']);
  console.log(
    `${consumers} consumer(s): nats store = ${(ratio * 100).toFixed(0)}% of raw JetStream throughput`,
  );
}
