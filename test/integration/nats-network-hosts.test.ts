import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createUser } from '@nats-io/nkeys';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  NatsServerProcess,
  natsUnavailableReason,
  uniquePrefix,
  waitUntil,
} from '../fixtures/nats-server.js';
import { TestNetwork, netnsUnavailableReason } from '../fixtures/netns.js';
import { askNats, startNetworkCluster } from '../fixtures/netns-nats.js';
import { bundleCli, type BundledCli } from '../fixtures/bundled-cli.js';
import { makeCertificates } from '../fixtures/tls-certificates.js';
import { WorkerProcess, type WorkerOptions } from '../fixtures/worker-process.js';

// A team spread over test hosts: five network namespaces on one bridge (three NATS servers joined as a
// JetStream cluster, two hubs), each hub a bus-worker process inside its own namespace. Every case counts:
// each message acked exactly once, none lost, no ack refused. Only the namespaces' own addresses are
// contacted (10.77.0.x, inside the namespaces). Needs root (CI has it); skipped with a reason elsewhere.
const unavailable = (await netnsUnavailableReason()) ?? (await natsUnavailableReason({ needsBinary: true }));
const run = promisify(execFile);
const NATS_HOSTS = ['n1', 'n2', 'n3'] as const;
let net: TestNetwork;
let nats: NatsServerProcess[] = [];
let prefix = '';
const workers: WorkerProcess[] = [];

const probe = (host: string, server: string, ...question: string[]): Promise<string> =>
  askNats(net, host, server, ...question);

let cli: BundledCli | undefined;
let dir = '';

const storeUrl = (replicas: number): string =>
  `nats://${nats.map((s) => s.hostPort).join(',')}?prefix=${prefix}&replicas=${replicas}&connectTimeoutMs=20000`;

/** A bus-worker process (a hub with one consumer or producer) inside test host `host`. */
async function startHub(
  host: 'h1' | 'h2',
  url: string,
  mailbox: string,
  options: Omit<WorkerOptions, 'launch'>,
): Promise<WorkerProcess> {
  const worker = await WorkerProcess.start(url, mailbox, {
    ...options,
    launch: net.launcher(host),
  });
  workers.push(worker);
  return worker;
}

/** A hub in `host` on the 3-server cluster, its journal and KV at 3 replicas. */
const hub = (host: 'h1' | 'h2', mailbox: string, options: Omit<WorkerOptions, 'launch'>) =>
  startHub(host, storeUrl(3), mailbox, options);

/** What every worker of the case (w0, w1, ... in start order) did with message `id`, in time order. */
function story(id: string): string {
  return workers
    .flatMap((w, i) => w.events.filter((e) => e.id === id || e.about === id).map((e) => ({ ...e, w: i })))
    .sort((a, b) => a.at - b.at)
    .map((e) => `w${e.w} ${e.kind} ${e.kind === 'error' ? e.id : e.attempt} @${e.at % 100_000}`)
    .join(', ');
}

/** Waits until every id in `ids` was acked by one of `consumers`; on timeout names the missing ones. */
async function waitAllAcked(ids: readonly string[], consumers: readonly WorkerProcess[], timeoutMs: number) {
  const acked = (): Set<string> => new Set(consumers.flatMap((w) => w.acked()));
  try {
    await waitUntil(() => ids.every((id) => acked().has(id)), timeoutMs, `${ids.length} acks`);
  } catch (err) {
    const missing = ids.filter((id) => !acked().has(id));
    // The journal's own account of the first few, read from inside a test host.
    const records = await Promise.all(
      missing
        .slice(0, 3)
        .map((id) =>
          probe('h1', nats[0]?.hostPort ?? '', 'records', `${prefix}_journal`, `${prefix}.msg.*.${id}`).catch(
            String,
          ),
        ),
    );
    const errors = consumers.flatMap((w) => w.events.filter((e) => e.kind === 'error').map((e) => e.id));
    throw new Error(
      `${(err as Error).message}; not acked: ${missing.map((id) => `${id} [${story(id)}]`).join('; ')}; errors: ${[...new Set(errors)].join(', ')}\n${records.join('\n')}`,
    );
  }
}

/** Every id in `ids` acked exactly once over all `consumers`, and no ack or claim refused. */
function expectEachHandledOnce(ids: readonly string[], consumers: readonly WorkerProcess[]): void {
  const acked = consumers.flatMap((w) => w.acked());
  const refused = consumers
    .flatMap((w) => w.events)
    .filter((e) => e.kind === 'error' && e.id !== 'STORE_UNAVAILABLE');
  const concerned = [...new Set(refused.map((e) => e.about ?? '').filter((id) => id !== ''))];
  const why = concerned.map((id) => `${id}: ${story(id)}`).join('\n');
  expect(refused, `refused operations\n${why}`).toEqual([]);
  const twice = [...new Set(acked.filter((id, i) => acked.indexOf(id) !== i))];
  expect(twice, `acked twice\n${twice.map((id) => `${id}: ${story(id)}`).join('\n')}`).toEqual([]);
  expect(acked.length, 'acks in all').toBe(ids.length);
  expect(new Set(acked)).toEqual(new Set(ids));
}

/**
 * True when the journal holds an ack of message `id` in `mailbox` under its attempt `attempt` (read
 * from host h1): the ack record names the delivery it settled, so another consumer's later ack of a
 * redelivery does not count.
 */
async function isAckedInJournal(mailbox: string, id: string, attempt: number): Promise<boolean> {
  const records = await probe(
    'h1',
    nats[0]?.hostPort ?? '',
    'records',
    `${prefix}_journal`,
    `${prefix}.msg.${mailbox}.${id}`,
  );
  // Each line: "<seq> <time> <record JSON>".
  return records.split('\n').some((line) => {
    const record = JSON.parse(line.split(' ').slice(2).join(' ') || '{}') as {
      op?: string;
      delivery?: { attempt: number };
    };
    return record.op === 'acked' && record.delivery?.attempt === attempt;
  });
}

const ids = (tag: string, count: number): string[] => Array.from({ length: count }, (_, i) => `${tag}-${i}`);

beforeAll(async () => {
  if (unavailable !== null) return;
  net = await TestNetwork.create([...NATS_HOSTS, 'h1', 'h2']);
  dir = await mkdtemp(join(tmpdir(), 'musubi-hosts-'));
  nats = await startNetworkCluster(net, NATS_HOSTS, 'h1');
}, 90_000);
afterEach(async () => {
  for (const worker of workers.splice(0)) await worker[Symbol.asyncDispose]();
  for (const server of nats) if (!server.isRunning) await server.resume();
});
afterAll(async () => {
  await cli?.remove();
  if (dir !== '') await rm(dir, { recursive: true, force: true });
  for (const server of nats) await server[Symbol.asyncDispose]();
  await net?.[Symbol.asyncDispose]();
});

describe.skipIf(unavailable !== null)('nats - hubs on separate network hosts', () => {
  it('hands the jobs of a SIGKILLed consumer on one host to the consumer on the other, each acked once', async () => {
    prefix = uniquePrefix('hostkill');
    const producer = await hub('h1', 'jobs', { leaseMs: 2_000, concurrency: 0 });
    const doomed = await hub('h1', 'jobs', { leaseMs: 2_000, holdMs: 100, concurrency: 4 });
    const survivor = await hub('h2', 'jobs', { leaseMs: 2_000, holdMs: 100, concurrency: 4 });
    const jobs = ids('job', 80);
    await producer.send('jobs', jobs);
    await waitUntil(
      () => doomed.acked().length >= 5 && doomed.holding().length > 0,
      30_000,
      'the doomed consumer to hold jobs',
    );
    await doomed.kill('SIGKILL');
    // An ack can land in the moment between the kill and the line saying so: the journal tells.
    const landed = new Set<string>();
    for (const claim of doomed.events.filter((e) => e.kind === 'claimed')) {
      if (!doomed.holding().includes(claim.id)) continue;
      if (await isAckedInJournal('jobs', claim.id, claim.attempt)) landed.add(claim.id);
    }
    const heldAtDeath = doomed.holding().filter((id) => !landed.has(id));
    const owed = jobs.filter((id) => !landed.has(id));
    await waitAllAcked(owed, [doomed, survivor], 60_000);
    expectEachHandledOnce(owed, [doomed, survivor]);
    const taken = survivor.events.filter((e) => e.kind === 'acked' && heldAtDeath.includes(e.id));
    expect(taken.map((e) => e.id).sort()).toEqual([...heldAtDeath].sort());
    expect(taken.every((e) => e.attempt >= 2)).toBe(true);
  }, 120_000);

  it('loses and repeats nothing when the NATS server leading the R3 journal is killed mid-stream', async () => {
    prefix = uniquePrefix('hostleader');
    const [producer, nearby, far] = await Promise.all([
      hub('h1', 'jobs', { leaseMs: 10_000, concurrency: 0 }),
      hub('h1', 'jobs', { leaseMs: 10_000, holdMs: 20, concurrency: 2 }),
      hub('h2', 'jobs', { leaseMs: 10_000, holdMs: 20, concurrency: 2 }),
    ]);
    const before = ids('before', 40);
    await producer.send('jobs', before);
    const leaderName = await probe('h1', nats[0]?.hostPort ?? '', 'leader', `${prefix}_journal`);
    const leader = nats.find((server) => server.name === leaderName);
    expect(leader, `the journal's leader (${leaderName})`).toBeDefined();
    const during = ids('during', 60);
    const sending = producer.send('jobs', during, 60_000);
    await leader?.stop('SIGKILL');
    await sending;
    const all = [...before, ...during];
    await waitAllAcked(all, [nearby, far], 60_000);
    expectEachHandledOnce(all, [nearby, far]);
  }, 120_000);

  it('a hub cut off for 10 s keeps its leased work, acks it after the partition heals and resumes', async () => {
    prefix = uniquePrefix('hostsplit');
    const [producer, stayer, cutOff, cutOffSolo] = await Promise.all([
      hub('h1', 'shared', { leaseMs: 30_000, concurrency: 0 }),
      hub('h1', 'shared', { leaseMs: 30_000, holdMs: 50, concurrency: 2 }),
      hub('h2', 'shared', { leaseMs: 30_000, holdMs: 50, concurrency: 2 }),
      hub('h2', 'solo', { leaseMs: 30_000, concurrency: 1 }),
    ]);
    const first = ids('first', 40);
    await producer.send('shared', first);
    await waitUntil(() => cutOff.acked().length >= 3, 30_000, 'the hub on h2 to be working');
    await net.partition('h2');
    const cutAt = Date.now();
    // While h2 is unreachable h1 goes on: new work for both mailboxes is stored and shared work is done.
    const second = ids('second', 40);
    const solo = ids('solo', 10);
    await producer.send('shared', second);
    await producer.send('solo', solo);
    await waitUntil(() => Date.now() - cutAt >= 10_000, 15_000, 'ten seconds of partition');
    expect(cutOffSolo.acked(), 'nothing reaches the cut-off hub').toEqual([]);
    await net.heal('h2');
    const healedAt = Date.now();
    await waitAllAcked(solo, [cutOffSolo], 60_000);
    const all = [...first, ...second];
    await waitAllAcked(all, [stayer, cutOff], 60_000);
    expectEachHandledOnce(all, [stayer, cutOff]);
    expectEachHandledOnce(solo, [cutOffSolo]);
    const resumedAt = cutOffSolo.events.find((e) => e.kind === 'claimed')?.at ?? Infinity;
    console.info(
      `multi-host: first delivery on the cut-off hub ${resumedAt - healedAt} ms after the partition healed`,
    );
  }, 150_000);

  it('leases hold across hubs whose clocks disagree; a hub far off claims nothing and the rest do all the work', async () => {
    prefix = uniquePrefix('hostskew');
    // Holding each job longer than the hub ahead would think the lease lasts: without the server-time
    // correction it takes the jobs over while they are still being worked on, and the first ack fails.
    const options = { leaseMs: 3_000, holdMs: 1_500, concurrency: 3 };
    const [producer, honest, ahead, farAhead] = await Promise.all([
      hub('h1', 'jobs', { leaseMs: 3_000, concurrency: 0 }),
      hub('h1', 'jobs', options),
      hub('h2', 'jobs', { ...options, clockOffsetMs: 2_500 }),
      hub('h2', 'jobs', { ...options, clockOffsetMs: 30_000 }),
    ]);
    const jobs = ids('job', 24);
    await producer.send('jobs', jobs);
    await waitAllAcked(jobs, [honest, ahead], 60_000);
    expectEachHandledOnce(jobs, [honest, ahead]);
    expect(honest.acked().length).toBeGreaterThan(0);
    expect(ahead.acked().length).toBeGreaterThan(0);
    expect(farAhead.events.filter((e) => e.kind === 'claimed')).toEqual([]);
    expect(farAhead.events.some((e) => e.kind === 'error' && e.id === 'STORE_UNAVAILABLE')).toBe(true);
  }, 120_000);

  it('connects hubs on two hosts over TLS (by IP, checking the server name) with an nkey; a hub without the key is refused', async () => {
    prefix = uniquePrefix('hosttls');
    makeCertificates(dir);
    const user = createUser();
    const conf = join(dir, 'nkey.conf');
    await writeFile(conf, `authorization { users = [ { nkey: ${user.getPublicKey()} } ] }\n`);
    const seedFile = join(dir, 'user.nk');
    await writeFile(seedFile, new TextDecoder().decode(user.getSeed()), { mode: 0o600 });
    const tlsArgs = ['--tls', '--tlscert', join(dir, 'server.pem'), '--tlskey', join(dir, 'server.key')];
    const secure = await NatsServerProcess.start({
      address: net.address('n1'),
      port: 4443,
      launch: net.launcher('n1'),
      extraArgs: ['-c', conf, ...tlsArgs, '--tlsverify', '--tlscacert', join(dir, 'ca.pem')],
    });
    try {
      const files = `ca=${join(dir, 'ca.pem')}&cert=${join(dir, 'client.pem')}&key=${join(dir, 'client.key')}`;
      const base = `tls://${secure.hostPort}?prefix=${prefix}&servername=nats.test&${files}`;
      const url = `${base}&nkey=${seedFile}&connectTimeoutMs=20000`;
      const [producer, consumer] = await Promise.all([
        startHub('h2', url, 'secure', { leaseMs: 5_000, concurrency: 0 }),
        startHub('h1', url, 'secure', { leaseMs: 5_000, concurrency: 2 }),
      ]);
      const jobs = ids('secure', 10);
      await producer.send('secure', jobs);
      await waitAllAcked(jobs, [consumer], 30_000);
      expectEachHandledOnce(jobs, [consumer]);
      const refused: unknown = await startHub('h1', `${base}&connectTimeoutMs=3000`, 'secure', {
        leaseMs: 5_000,
      }).catch((err: unknown) => err);
      expect(String(refused)).toMatch(/worker exited early: .*STORE_UNAVAILABLE|Authorization/s);
    } finally {
      await secure[Symbol.asyncDispose]();
    }
  }, 90_000);

  it('agent_sync refuses a host address unless unauthenticated access is allowed; then an agent on another host joins', async () => {
    prefix = uniquePrefix('hostsync');
    cli ??= await bundleCli();
    const address = net.address('h1');
    const serve = [
      '--store',
      storeUrl(3),
      '--log-level',
      'warn',
      'agent-sync',
      'serve',
      '--host',
      address,
      '--port',
      '9800',
    ];
    const inHost = (host: string, args: readonly string[]) =>
      net.command(host, process.execPath, [cli?.entry ?? '', ...args]);
    const env = { ...process.env, NO_COLOR: '1', AGENTS_LIST: 'alice,bob' };
    const [command, args] = inHost('h1', serve);
    const refused = await run(command, args, { cwd: dir, env }).then(
      () => null,
      (err: { code?: number; stderr?: string }) => err,
    );
    expect(refused?.code).not.toBe(0);
    expect(refused?.stderr).toContain('no authentication');
    expect(refused?.stderr).toContain('--unauthenticated-network-access');

    const [command2, args2] = inHost('h1', [...serve, '--unauthenticated-network-access']);
    const server = spawn(command2, args2, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let said = '';
      server.stdout.setEncoding('utf8').on('data', (d: string) => (said += d));
      server.stderr.setEncoding('utf8').on('data', (d: string) => (said += d));
      await waitUntil(
        () => said.includes(`listening on ${address}:9800`),
        30_000,
        `agent-sync on ${address}`,
      );
      expect(said).toMatch(/unauthenticated|no authentication/i);
      // An agent on host h2 joins the session served on h1, then reads its status.
      const client = (...args: string[]) => {
        const [command, clientArgs] = inHost('h2', [
          'agent-sync',
          ...args,
          '--host',
          address,
          '--port',
          '9800',
        ]);
        return run(command, clientArgs, { cwd: dir, env });
      };
      expect((await client('join', 'bob')).stdout).toContain('bob');
      expect((await client('status')).stdout).toContain('bob');
    } finally {
      server.kill('SIGTERM');
      await new Promise((resolve) => server.once('close', resolve));
    }
  }, 90_000);
});
