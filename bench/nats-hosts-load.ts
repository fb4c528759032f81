// One side of the cross-host benchmark (nats-hosts.bench.ts), run inside a test host's network
// namespace: a sender or a consumer, through musubi's bus on the NATS store or through raw JetStream
// (a work-queue stream and a durable pull consumer with the same replica count). Prints lines:
//   ready                      the store / stream is open (a sender then waits for `go` on stdin)
//   first <epoch ms>           a consumer's first delivery
//   done <json>                a sender: {sent}; a consumer: {count, first, last, p50, p99}
// Every message carries its send time (epoch ms, fractional); hosts share the machine's clock.
// Usage: nats-hosts-load.ts <musubi|raw> <send|consume> <servers> <name> <replicas> <count> [concurrency]
import { createInterface } from 'node:readline';
import { AckPolicy, jetstream, jetstreamManager, RetentionPolicy, type JsMsg } from '@nats-io/jetstream';
import { connect, headers } from '@nats-io/transport-node';
import { createSystemClock } from '../src/core/clock.js';
import { openStore } from '../src/hub/open-store.js';
import { benchBus, percentile } from './bench-kit.js';

const [kind, role, servers = '', name = '', replicasArg = '1', countArg = '0', concurrencyArg = '16'] =
  process.argv.slice(2);
const replicas = Number(replicasArg);
const count = Number(countArg);
const concurrency = Number(concurrencyArg);
if ((kind !== 'musubi' && kind !== 'raw') || (role !== 'send' && role !== 'consume') || count <= 0) {
  console.error(
    'usage: nats-hosts-load <musubi|raw> <send|consume> <servers> <name> <replicas> <count> [concurrency]',
  );
  process.exit(2);
}
const say = (line: string): void => void process.stdout.write(`${line}\n`);
const epochNow = (): number => performance.timeOrigin + performance.now();
const go = new Promise<void>((resolve) =>
  createInterface({ input: process.stdin }).on('line', (line) => line.trim() === 'go' && resolve()),
);

/** Collects latencies; prints `first` at the first delivery and `done` after `count`. */
function tally(): { take(sentAt: number): void; finished: Promise<void> } {
  const latencies: number[] = [];
  let first = 0;
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  return {
    take(sentAt) {
      const now = epochNow();
      if (first === 0) {
        first = now;
        say(`first ${now}`);
      }
      latencies.push(now - sentAt);
      if (latencies.length === count) {
        const stats = {
          count,
          first,
          last: now,
          p50: percentile(latencies, 50),
          p99: percentile(latencies, 99),
        };
        say(`done ${JSON.stringify(stats)}`);
        finish();
      }
    },
    finished,
  };
}

async function musubi(): Promise<void> {
  const clock = createSystemClock();
  const url = `nats://${servers}?prefix=${name}&replicas=${replicas}&connectTimeoutMs=20000`;
  const store = await openStore({ url, cwd: process.cwd(), clock, pollIntervalMs: 25 });
  const bus = benchBus(store, clock);
  say('ready');
  if (role === 'send') {
    await go;
    for (let i = 0; i < count; i++) {
      await bus.send({
        id: `m${i}`,
        from: 'bench',
        to: 'bench',
        type: 'load',
        body: `${epochNow()} ${'x'.repeat(80)}`,
      });
    }
    say(`done ${JSON.stringify({ sent: count })}`);
  } else {
    const seen = tally();
    let isDone = false;
    void seen.finished.then(() => (isDone = true));
    const loop = async (): Promise<void> => {
      while (!isDone) {
        const delivery = await bus.receive('bench', { timeoutMs: 200 }).catch(() => null);
        if (delivery === null) continue;
        await bus.ack(delivery.deliveryId);
        seen.take(Number(String(delivery.envelope.body).split(' ')[0]));
      }
    };
    await Promise.all(Array.from({ length: concurrency }, loop));
  }
  await bus.close();
  await store.close();
}

async function raw(): Promise<void> {
  // Default client options, as a plain JetStream user would have them.
  const nc = await connect({ servers: servers.split(','), noAsyncTraces: true, maxReconnectAttempts: -1 });
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  const subject = `${name}.q`;
  if (role === 'consume') {
    await jsm.streams.add({
      name,
      subjects: [subject],
      retention: RetentionPolicy.Workqueue,
      num_replicas: replicas,
    });
    await jsm.consumers.add(name, { durable_name: 'worker', ack_policy: AckPolicy.Explicit });
    const consumer = await js.consumers.get(name, 'worker');
    const messages = await consumer.consume({ max_messages: Math.max(64, concurrency) });
    say('ready');
    const seen = tally();
    const inFlight = new Set<Promise<void>>();
    const handle = async (msg: JsMsg): Promise<void> => {
      await msg.ackAck();
      seen.take(Number(msg.headers?.get('sent-at')));
    };
    let taken = 0;
    for await (const msg of messages) {
      const p = handle(msg).finally(() => inFlight.delete(p));
      inFlight.add(p);
      if (inFlight.size >= concurrency) await Promise.race(inFlight);
      if (++taken >= count) break;
    }
    await Promise.all(inFlight);
    await seen.finished;
    messages.stop();
  } else {
    say('ready');
    await go;
    for (let i = 0; i < count; i++) {
      const h = headers();
      h.set('sent-at', String(epochNow()));
      await js.publish(subject, 'x'.repeat(100), { headers: h });
    }
    say(`done ${JSON.stringify({ sent: count })}`);
  }
  await nc.close();
}

await (kind === 'musubi' ? musubi() : raw());
process.exit(0);
