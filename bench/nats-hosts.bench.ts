// Send -> receive -> ack across two test hosts (network namespaces on one bridge, built here as in the
// multi-host tests) sharing a 3-server JetStream cluster in three more: musubi's bus on the NATS store
// against raw JetStream (work-queue stream, durable pull consumer, awaited publish and ackAck) with the
// same replica count, R1 and R3, in the same run. The sender runs on one host, the consumer (16
// receive loops) on the other. Then the time from a partition of the consumer's host healing to its
// first delivery, for both. Needs root (ip netns); prints why and exits 0 otherwise.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { waitUntil, type NatsServerProcess } from '../test/fixtures/nats-server.js';
import { startNetworkCluster } from '../test/fixtures/netns-nats.js';
import { netnsUnavailableReason, TestNetwork } from '../test/fixtures/netns.js';
import { TSX_LOADER } from '../test/fixtures/run-cli.js';
import { printTable, writeResultsSection, type BenchRow } from './bench-kit.js';

const LOAD = fileURLToPath(new URL('./nats-hosts-load.ts', import.meta.url));
const count = Number(process.env.NATS_HOSTS_MESSAGES ?? 2_000);
const rounds = Number(process.env.NATS_HOSTS_ROUNDS ?? 3);
const PARTITION_MS = 10_000;

const reason = await netnsUnavailableReason().catch((err: unknown) => String(err));
if (reason !== null) {
  console.log(`nats-hosts: skipped (${reason})`);
  process.exit(0);
}

/** A load process in a test host and what it printed. */
class Load {
  readonly lines: { text: string; at: number }[] = [];
  readonly #child: ChildProcessWithoutNullStreams;
  #stderr = '';

  constructor(network: TestNetwork, host: string, args: readonly string[]) {
    const [command, launchArgs] = network.command(host, process.execPath, [
      '--import',
      TSX_LOADER,
      LOAD,
      ...args,
    ]);
    this.#child = spawn(command, launchArgs, { stdio: ['pipe', 'pipe', 'pipe'] });
    let buffered = '';
    this.#child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      const parts = buffered.split('\n');
      buffered = parts.pop() ?? '';
      for (const text of parts) this.lines.push({ text, at: performance.timeOrigin + performance.now() });
    });
    this.#child.stderr.setEncoding('utf8').on('data', (chunk: string) => (this.#stderr += chunk));
  }

  /** Resolves the first line starting with `word` (its rest), failing after `timeoutMs`. */
  async said(word: string, timeoutMs: number): Promise<string> {
    const find = () => this.lines.find((l) => l.text === word || l.text.startsWith(`${word} `));
    await waitUntil(
      () => {
        if (this.#child.exitCode !== null && find() === undefined)
          throw new Error(`load process exited: ${this.#stderr}`);
        return find() !== undefined;
      },
      timeoutMs,
      `"${word}" from a load process`,
    );
    return find()?.text.slice(word.length + 1) ?? '';
  }

  go(): void {
    this.#child.stdin.write('go\n');
  }

  async stop(): Promise<void> {
    if (this.#child.exitCode !== null) return;
    const closed = new Promise((resolve) => this.#child.once('close', resolve));
    this.#child.kill('SIGKILL');
    await closed;
  }
}

interface ConsumerStats {
  readonly count: number;
  readonly first: number;
  readonly last: number;
  readonly p50: number;
  readonly p99: number;
}

const network = await TestNetwork.create(['n1', 'n2', 'n3', 'h1', 'h2']);
let cluster: NatsServerProcess[] = [];
const rows: BenchRow[] = [];
const heal: BenchRow[] = [];
try {
  cluster = await startNetworkCluster(network, ['n1', 'n2', 'n3'], 'h1');
  const servers = cluster.map((s) => s.hostPort).join(',');
  let serial = 0;

  /** One send -> receive -> ack run; resolves the consumer's stats and the wall time from `go`. */
  const once = async (
    kind: 'musubi' | 'raw',
    replicas: number,
  ): Promise<ConsumerStats & { seconds: number }> => {
    const name = `hb_${process.pid}_${serial++}`;
    const consumer = new Load(network, 'h2', [
      kind,
      'consume',
      servers,
      name,
      String(replicas),
      String(count),
    ]);
    const sender = new Load(network, 'h1', [kind, 'send', servers, name, String(replicas), String(count)]);
    try {
      await consumer.said('ready', 60_000);
      await sender.said('ready', 60_000);
      const started = performance.timeOrigin + performance.now();
      sender.go();
      const stats = JSON.parse(await consumer.said('done', 300_000)) as ConsumerStats;
      return { ...stats, seconds: (stats.last - started) / 1000 };
    } finally {
      await Promise.all([consumer.stop(), sender.stop()]);
    }
  };

  for (const replicas of [1, 3]) {
    const runs: Record<'musubi' | 'raw', (ConsumerStats & { seconds: number })[]> = { musubi: [], raw: [] };
    for (let round = 0; round < rounds; round++) {
      runs.raw.push(await once('raw', replicas));
      runs.musubi.push(await once('musubi', replicas));
    }
    const median = (list: (ConsumerStats & { seconds: number })[]) =>
      [...list].sort((a, b) => a.seconds - b.seconds)[Math.floor(list.length / 2)];
    const [raw, ours] = [median(runs.raw), median(runs.musubi)];
    if (raw === undefined || ours === undefined) throw new Error('no runs');
    const rate = (r: { seconds: number }): number => count / r.seconds;
    rows.push(
      {
        implementation: 'baseline: raw JetStream',
        replicas,
        messages: count,
        'msgs/s': rate(raw),
        'p50 ms': raw.p50,
        'p99 ms': raw.p99,
      },
      {
        implementation: 'musubi bus (NATS store)',
        replicas,
        messages: count,
        'msgs/s': rate(ours),
        'p50 ms': ours.p50,
        'p99 ms': ours.p99,
        'of raw': `${Math.round((rate(ours) / rate(raw)) * 100)}%`,
      },
    );
  }

  // Partition the consumer's host for 10 s while the sender goes on, heal, time the first delivery.
  for (const kind of ['raw', 'musubi'] as const) {
    const times: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const name = `hp_${process.pid}_${serial++}`;
      const consumer = new Load(network, 'h2', [kind, 'consume', servers, name, '3', '5']);
      const sender = new Load(network, 'h1', [kind, 'send', servers, name, '3', '5']);
      try {
        await consumer.said('ready', 60_000);
        await sender.said('ready', 60_000);
        await network.partition('h2');
        const cutAt = Date.now();
        sender.go();
        await sender.said('done', 30_000);
        await waitUntil(() => Date.now() - cutAt >= PARTITION_MS, PARTITION_MS + 5_000, 'the partition');
        await network.heal('h2');
        const healedAt = performance.timeOrigin + performance.now();
        const first = Number(await consumer.said('first', 120_000).catch(() => 'NaN'));
        times.push(first - healedAt);
      } finally {
        await network.heal('h2');
        await Promise.all([consumer.stop(), sender.stop()]);
      }
    }
    const sorted = [...times].sort((a, b) => a - b);
    heal.push({
      implementation:
        kind === 'raw' ? 'baseline: raw JetStream (default client options)' : 'musubi bus (NATS store)',
      'partition s': PARTITION_MS / 1000,
      'heal -> first delivery, median ms': sorted[Math.floor(sorted.length / 2)] ?? Number.NaN,
      'each ms': times.map((t) => Math.round(t)).join(', '),
    });
  }
} finally {
  for (const server of cluster) await server[Symbol.asyncDispose]();
  await network[Symbol.asyncDispose]();
}

const table = printTable(
  `NATS across two hosts: send -> receive -> ack, sender on one network namespace and consumer (16 loops) on another, 3-server cluster (median of ${rounds})`,
  rows,
);
const healTable = printTable(
  'NATS across hosts: partition of the consumer host, healed -> first delivery',
  heal,
);
writeResultsSection(
  '## NATS across hosts',
  [
    '## NATS across hosts',
    '',
    'Written by `npx tsx bench/nats-hosts.bench.ts` (root: builds five network namespaces on a bridge).',
    '',
    table,
    'musubi writes three conditional records per message (sent, claimed, acked) where raw JetStream',
    'publishes once and acks a consumer; on a cluster each of them is also checked (one more round trip,',
    'see src/store/NATS-MAPPING.md: nats-server 2.9 lets racing conditional writes through on replicated',
    'streams), so the R1 row pays for a check R1 itself would not need. The sender awaits every send, so',
    'msgs/s is close to 1 / (send latency); the five namespaces share the 2 cores.',
    '',
    healTable,
    'The consumer host is unplugged from the bridge (its packets vanish) for 10 s while the sender goes',
    'on; the column is the time from plugging it back to its first delivery. Raw JetStream keeps the',
    "client's defaults (pings every 2 minutes), so it waits for TCP's retransmission and the pull",
    "consumer's heartbeat recovery; musubi pings every second and replaces its follower on reconnect.",
  ].join('\n'),
);
