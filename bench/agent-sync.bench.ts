// agent_sync gateway: send + listen pairs over 32 concurrent TCP connections against a bare Node NDJSON
// echo server in the same run (each server in its own child process, so its peak RSS is its own), and
// the extra RSS of 1,000 idle listens. Run: npx tsx bench/agent-sync.bench.ts
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  LineConnection,
  machineCpuTicks,
  machineLine,
  percentile,
  printTable,
  processCpuMs,
  processMemoryMiB,
  stealPercentSince,
  writeResultsSection,
  type BenchRow,
} from './bench-kit.js';

const CONNECTIONS = 32;
const WARMUP_MS = 1_000;
const MEASURE_MS = 3_000;
/** Interleaved rounds of the full run (see interleaved). */
const ROUNDS = 3;
/** A measurement during which the host stole more than this share of the CPU is taken again... */
const STEAL_RETRY_PERCENT = 5;
/** ...at most this many times. */
const STEAL_RETRIES = 2;
const IDLE_LISTENERS = 1_000;
/** Per-request work of the calibration rows (an echo that spins this long before each reply). */
const CALIBRATION_WORK_US = [5, 10, 20];
const here = dirname(fileURLToPath(import.meta.url));
const agents = Array.from({ length: CONNECTIONS }, (_, i) => `bench-${String(i).padStart(2, '0')}`);

// ---- child mode: one server -------------------------------------------------------------------

/** Spins for `us` microseconds: stands for a fixed amount of per-request work in the calibration rows. */
function spin(us: number): void {
  const until = performance.now() + us / 1000;
  while (performance.now() < until);
}

/** The bare echo; with `workUs` > 0 it also spins that long per line before answering. */
async function serveEcho(workUs: number): Promise<number> {
  return serveLines((socket, line) => {
    if (workUs > 0) spin(workUs);
    socket.write(`${line}\n`);
  });
}

/** A TCP server on 127.0.0.1 that hands every newline-terminated line to `onLine`; resolves its port. */
async function serveLines(onLine: (socket: Socket, line: string) => void): Promise<number> {
  const server = createServer({ noDelay: true }, (socket) => {
    let buffered = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      let nl = buffered.indexOf('\n');
      while (nl >= 0) {
        onLine(socket, buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
        nl = buffered.indexOf('\n');
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return address !== null && typeof address === 'object' ? address.port : 0;
}

/**
 * The raw-SQLite calibration server: the state changes agent_sync needs (a send inserts a 100-byte row;
 * a listen deletes the oldest row of its mailbox and answers its body) done with bare better-sqlite3
 * (WAL, synchronous=NORMAL, as the store), batched the way the store batches: every line that arrived
 * in one event-loop turn in one transaction, each reply written after the commit, one write per socket.
 */
async function serveRawSqlite(dir: string): Promise<number> {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(join(dir, 'raw.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(
    'CREATE TABLE m (seq INTEGER PRIMARY KEY, mailbox TEXT NOT NULL, body TEXT NOT NULL);' +
      'CREATE INDEX m_box ON m (mailbox, seq);',
  );
  const insert = db.prepare('INSERT INTO m (mailbox, body) VALUES (?, ?)');
  const take = db
    .prepare(
      'DELETE FROM m WHERE seq = (SELECT seq FROM m WHERE mailbox = ? ORDER BY seq LIMIT 1) RETURNING body',
    )
    .pluck();
  type Item = {
    readonly socket: Socket;
    readonly cmd: { cmd?: string; agent?: string; to?: string; text?: string };
  };
  let items: Item[] = [];
  const run = db.transaction((batch: readonly Item[]) =>
    batch.map(({ cmd }) => {
      if (cmd.cmd === 'send') {
        insert.run(cmd.to ?? '', JSON.stringify({ from: cmd.agent, text: cmd.text, at: Date.now() }));
        return '{"ok":true}';
      }
      const body = take.get(cmd.agent ?? '') as string | undefined;
      return body === undefined ? '{"messages":[]}' : `{"messages":[${body}]}`;
    }),
  );
  const flush = (): void => {
    const batch = items;
    items = [];
    const replies = run(batch);
    const bySocket = new Map<Socket, string>();
    batch.forEach((item, i) =>
      bySocket.set(item.socket, `${bySocket.get(item.socket) ?? ''}${replies[i]}\n`),
    );
    for (const [socket, text] of bySocket) socket.write(text);
  };
  return serveLines((socket, line) => {
    if (items.length === 0) setImmediate(flush);
    items.push({ socket, cmd: JSON.parse(line) as Item['cmd'] });
  });
}

/**
 * The SQL floor of musubi's own schema: the statements the SQLite store runs for agent_sync's state
 * changes, issued bare and batched like {@link serveRawSqlite}. A send inserts its `message.sent` event
 * (holding the envelope's JSON) and the message row (the unique (mailbox, id) index checking for a
 * duplicate); a listen finds the head in memory, as the store's mirror does, then deletes the row by
 * primary key and inserts its `message.acked` event. No bus, no protocol code: what the gateway would
 * cost if only its SQL were left.
 */
async function serveSchemaSqlite(dir: string): Promise<number> {
  const [{ default: Database }, { migrate }] = await Promise.all([
    import('better-sqlite3'),
    import('../src/store/sqlite/sqlite-schema.js'),
  ]);
  const path = join(dir, 'schema.db');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  migrate(db, path);
  const sent = db.prepare('INSERT INTO events (at, event, kind, mailbox, message_id) VALUES (?, ?, 1, ?, ?)');
  const acked = db.prepare(
    "INSERT INTO events (at, event, kind, mailbox, message_id) VALUES (?, '', 3, ?, ?)",
  );
  const insert = db.prepare(
    'INSERT INTO messages (mailbox, state, priority, seq, id, available_at, envelope) VALUES (?, 0, 2, ?, ?, ?, NULL) ' +
      'ON CONFLICT (mailbox, id) DO NOTHING',
  );
  const take = db.prepare(
    'DELETE FROM messages WHERE mailbox = ? AND state = 0 AND priority = 2 AND seq = ? AND id = ?',
  );
  type Item = {
    readonly socket: Socket;
    readonly cmd: { cmd?: string; agent?: string; to?: string; text?: string };
  };
  let items: Item[] = [];
  let nextId = 0;
  const heads = new Map<string, { seq: number; id: string; body: string }[]>();
  const run = db.transaction((batch: readonly Item[]) =>
    batch.map(({ cmd }) => {
      const now = Date.now();
      if (cmd.cmd === 'send') {
        const mailbox = cmd.to ?? '';
        const id = `m${++nextId}`;
        const body = JSON.stringify({ from: cmd.agent, type: 'message', text: cmd.text, ts: now / 1000 });
        const envelope = {
          id,
          from: 'agent-sync',
          to: mailbox,
          type: 'message',
          priority: 'normal',
          headers: {},
          body,
          createdAt: now,
          attempt: 0,
        };
        const seq = Number(sent.run(now, JSON.stringify(envelope), mailbox, id).lastInsertRowid);
        insert.run(mailbox, seq, id, now);
        const queue = heads.get(mailbox) ?? [];
        queue.push({ seq, id, body });
        heads.set(mailbox, queue);
        return '{"ok":true}';
      }
      const mailbox = cmd.agent ?? '';
      const head = heads.get(mailbox)?.shift();
      if (head === undefined) return '{"messages":[]}';
      take.run(mailbox, head.seq, head.id);
      acked.run(now, mailbox, head.id);
      return `{"messages":[${head.body}]}`;
    }),
  );
  const flush = (): void => {
    const batch = items;
    items = [];
    const replies = run(batch);
    batch.forEach((item, i) => item.socket.write(`${replies[i]}\n`));
  };
  return serveLines((socket, line) => {
    if (items.length === 0) setImmediate(flush);
    items.push({ socket, cmd: JSON.parse(line) as Item['cmd'] });
  });
}

/**
 * The gateway's connection layer alone: each connection is the gateway's own AgentSyncConnection
 * (framing, UTF-8 check, parseJson, the listen's loop turn, one write per reply) over a core that
 * answers at once, a send with `{"ok": true}` and a listen with one message of the size the real one
 * hands out. Between the echo and the memory row, it splits what the gateway costs into the connection
 * layer and the core (protocol, bus, store).
 */
async function serveConnectionOnly(): Promise<number> {
  const [{ AgentSyncConnection, LoopTurns }, { createSilentLogger }] = await Promise.all([
    import('../src/gateways/agent-sync/agent-sync-connection.js'),
    import('../src/core/logger.js'),
  ]);
  type Core = ConstructorParameters<typeof AgentSyncConnection>[0]['core'];
  const item = `{"from": "bench-00", "type": "message", "text": "hello from the benchmark", "ts": ${Date.now() / 1000}}`;
  const sent = { kind: 'reply', text: '{"ok": true}', reservation: null } as const;
  const listened = { kind: 'reply', text: `{"messages": [${item}]}`, reservation: null } as const;
  // Only the two methods a connection calls; the cast stands in for the whole protocol.
  const core = {
    execute: (request: ReadonlyMap<string, unknown>) =>
      Promise.resolve(request.get('cmd') === 'listen' ? listened : sent),
    settle: () => Promise.resolve(),
  } as unknown as Awaited<Core>;
  const turns = new LoopTurns();
  const logger = createSilentLogger();
  const server = createServer({ allowHalfOpen: true, noDelay: true }, (socket) => {
    new AgentSyncConnection({ socket, core: Promise.resolve(core), logger, turns });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return address !== null && typeof address === 'object' ? address.port : 0;
}

async function serveGateway(kind: string, dir: string): Promise<number> {
  const [{ createBus }, { createSystemClock }, { createIdGenerator }, { createSilentLogger }, gatewayModule] =
    await Promise.all([
      import('../src/bus/bus.js'),
      import('../src/core/clock.js'),
      import('../src/core/ids.js'),
      import('../src/core/logger.js'),
      import('../src/gateways/agent-sync/agent-sync-gateway.js'),
    ]);
  const clock = createSystemClock();
  const store =
    kind === 'sqlite'
      ? (await import('../src/store/sqlite/sqlite-store.js')).SqliteStore.open({
          path: join(dir, 'bus.db'),
          clock,
        })
      : new (await import('../src/store/memory/memory-store.js')).MemoryStore({ clock });
  const bus = createBus({
    store: await store,
    clock,
    ids: createIdGenerator(clock),
    logger: createSilentLogger(),
    config: { leaseMs: 30_000, retry: { baseMs: 5_000, capMs: 300_000, maxAttempts: 3 } },
  });
  const gateway = gatewayModule.createAgentSyncGateway({
    bus,
    logger: createSilentLogger(),
    clock,
    agents,
    cwd: dir,
    port: 0,
    isFresh: true,
  });
  await gateway.start();
  const address = gateway.address();
  return address.kind === 'tcp' ? address.port : 0;
}

// ---- parent mode: load and measure ---------------------------------------------------------------

interface Child {
  readonly child: ChildProcess;
  readonly port: number;
}

/** `BENCH_PROFILE_DIR=<dir>` writes a V8 CPU profile of each server child there (for finding hot spots). */
function profileArgs(kind: string): string[] {
  const dir = process.env.BENCH_PROFILE_DIR;
  return dir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', join(dir, kind)];
}

/** Pinned mode: each server on CPU 0 (`taskset`), the load client (this process) on CPU 1. */
const SERVER_CPU = '0';
const CLIENT_CPU = '1';
const canPin = spawnSync('taskset', ['-c', SERVER_CPU, 'true']).status === 0 && availableParallelism() >= 2;

/** Moves this process (the client) onto `cpus` (`taskset -p`). */
function pinSelf(cpus: string): void {
  spawnSync('taskset', ['-a', '-pc', cpus, String(process.pid)], { stdio: 'ignore' });
}

/**
 * The servers run from a bundle of this file built the way `npm run build` builds musubi (tsup, esbuild,
 * no `keepNames`), so they measure the code users run: under tsx every function created at run time is
 * also wrapped by esbuild's `__name` helper, which alone cost about a tenth of the gateway's CPU.
 */
let serverBundle: Promise<string> | undefined;
function bundledServer(): Promise<string> {
  serverBundle ??= (async () => {
    const { build } = await import('tsup');
    const outDir = join(here, '..', '.tmp', 'bench-agent-sync');
    await build({
      entry: { server: fileURLToPath(import.meta.url) },
      outDir,
      format: ['esm'],
      platform: 'node',
      target: 'node20',
      splitting: false,
      sourcemap: false,
      dts: false,
      silent: true,
      config: false,
      skipNodeModulesBundle: true,
    });
    return join(outDir, 'server.js');
  })();
  return serverBundle;
}

async function startChild(kind: string, dir: string, isPinned = false): Promise<Child> {
  const args = [...profileArgs(kind), await bundledServer(), '--serve', kind, dir];
  const child = spawn(
    isPinned ? 'taskset' : process.execPath,
    isPinned ? ['-c', SERVER_CPU, process.execPath, ...args] : args,
    {
      cwd: join(here, '..'),
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const match = /PORT (\d+)/.exec(out);
      if (match?.[1] !== undefined) resolve({ child, port: Number(match[1]) });
    });
    child.once('exit', (code) => reject(new Error(`server ${kind} exited with ${code}`)));
  });
}

async function pairs(
  kind: string,
  label: string,
  isPinned = false,
): Promise<BenchRow & { pairsPerS: number; p99: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'musubi-agent-sync-bench-'));
  const { child, port } = await startChild(kind, dir, isPinned);
  const conns = await Promise.all(agents.map(() => LineConnection.open(port)));
  const latencies: number[] = [];
  let isMeasuring = false;
  let count = 0;
  const stopAt = performance.now() + WARMUP_MS + MEASURE_MS;
  let cpuAtStart = 0;
  let machineAtStart = machineCpuTicks();
  setTimeout(() => {
    isMeasuring = true;
    cpuAtStart = processCpuMs(child.pid ?? 0);
    machineAtStart = machineCpuTicks();
  }, WARMUP_MS);
  await Promise.all(
    conns.map(async (conn, i) => {
      const agent = agents[i] ?? '';
      const send = JSON.stringify({ cmd: 'send', agent, to: agent, text: 'hello from the benchmark' });
      const listen = JSON.stringify({ cmd: 'listen', agent, timeout: 5 });
      while (performance.now() < stopAt) {
        const started = performance.now();
        await conn.request(send);
        const reply = await conn.request(listen);
        if (!kind.startsWith('echo') && !reply.includes('hello from the benchmark'))
          throw new Error(`bad reply ${reply}`);
        if (isMeasuring) {
          latencies.push(performance.now() - started);
          count++;
        }
      }
    }),
  );
  const serverCpuMs = processCpuMs(child.pid ?? 0) - cpuAtStart;
  const steal = stealPercentSince(machineAtStart);
  const peak = processMemoryMiB(child.pid ?? 0, 'VmHWM');
  for (const conn of conns) conn.close();
  child.stdin?.end();
  await new Promise((resolve) => child.once('exit', resolve));
  rmSync(dir, { recursive: true, force: true });
  const pairsPerS = count / (MEASURE_MS / 1000);
  const p99 = percentile(latencies, 99);
  return {
    implementation: label,
    'pairs/s': Math.round(pairsPerS),
    'p50 ms': percentile(latencies, 50),
    'p99 ms': p99,
    'peak RSS MiB': peak,
    // Server CPU per pair barely depends on what else runs on the machine, unlike pairs/s.
    'server CPU µs/pair': Math.round((serverCpuMs * 1000) / Math.max(1, count)),
    'steal %': Math.round(steal),
    pairsPerS,
    p99,
  };
}

async function idleListeners(): Promise<BenchRow> {
  const dir = mkdtempSync(join(tmpdir(), 'musubi-agent-sync-bench-'));
  const { child, port } = await startChild('sqlite', dir);
  const warm = await LineConnection.open(port);
  for (let i = 0; i < 200; i++) await warm.request('{"cmd": "peek", "agent": "bench-00"}');
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const before = processMemoryMiB(child.pid ?? 0, 'VmRSS');
  const idle: LineConnection[] = [];
  for (let i = 0; i < IDLE_LISTENERS; i += 100) {
    const batch = await Promise.all(Array.from({ length: 100 }, () => LineConnection.open(port)));
    batch.forEach(
      (conn, k) => void conn.request(`{"cmd": "listen", "agent": "idle-${i + k}", "timeout": null}`),
    );
    idle.push(...batch);
  }
  await warm.request('{"cmd": "status"}');
  await new Promise((resolve) => setTimeout(resolve, 3_000)); // let the foreign-mail checks run a few times
  const after = processMemoryMiB(child.pid ?? 0, 'VmRSS');
  for (const conn of [warm, ...idle]) conn.close();
  child.stdin?.end();
  await new Promise((resolve) => child.once('exit', resolve));
  rmSync(dir, { recursive: true, force: true });
  return {
    implementation: 'agent-sync gateway (SQLite)',
    'idle listens': IDLE_LISTENERS,
    'RSS before MiB': before,
    'RSS after MiB': after,
    'extra MiB': after - before,
  };
}

type PairsRow = Awaited<ReturnType<typeof pairs>>;
type Kind = readonly [kind: string, label: string];

const ECHO: Kind = ['echo', 'bare Node NDJSON echo'];
const MAIN_KINDS: readonly Kind[] = [
  ['sqlite', 'agent-sync gateway, SQLite store'],
  ['memory', 'agent-sync gateway, memory store'],
  ['sqlite-raw', 'raw better-sqlite3, same state changes and batching'],
  ['sqlite-schema', "bare SQL of musubi's schema, same batching"],
  ['connection', "the gateway's connection layer over a core that answers at once"],
];
// Calibration: what the same echo reaches once it has a fixed amount of work per request to do.
const CALIBRATION_KINDS: readonly Kind[] = CALIBRATION_WORK_US.map((us) => [
  `echo-work-${us}`,
  `echo + ${us} µs of CPU work per request`,
]);

/**
 * `AGENT_SYNC_QUICK=1`: the echo and the main rows (SQLite, memory, both SQL calibrations, the connection
 * layer) once each, pinned when it can, printed only (for iterating on the hot path).
 * `AGENT_SYNC_QUICK=memory,connection` runs the echo and just those.
 */
async function quick(choice: string): Promise<void> {
  if (canPin) pinSelf(CLIENT_CPU);
  const kinds = [ECHO, ...MAIN_KINDS];
  const chosen = choice === '1' ? undefined : new Set(['echo', ...choice.split(',')]);
  const rows = [];
  for (const [kind, label] of kinds) {
    if (chosen === undefined || chosen.has(kind)) rows.push(await pairs(kind, label, canPin));
  }
  const echo = rows[0];
  printTable(
    `quick: send + listen pairs${canPin ? ', pinned' : ''}`,
    rows.map(({ pairsPerS, p99, ...row }) => ({
      ...row,
      'p99 / echo p99': p99 / (echo?.p99 ?? Number.NaN),
      ratio: pairsPerS / (echo?.pairsPerS ?? Number.NaN),
    })),
  );
}

/**
 * Runs `kinds` in ROUNDS interleaved rounds, each round starting with its own echo, and gives each
 * implementation one row: its median round (by ratio to that round's echo), with the lowest and highest
 * ratio of all rounds beside it. On a shared VM the machine's speed drifts within minutes (CPU steal);
 * a ratio taken against the echo of the same round, moments apart, compares the rows under the same
 * conditions, and the median over rounds keeps one slow moment from deciding a row.
 */
async function interleaved(kinds: readonly Kind[], isPinned: boolean): Promise<BenchRow[]> {
  const rounds: { echo: PairsRow; rows: PairsRow[] }[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const echo = await lowSteal(ECHO, isPinned);
    const rows = [];
    for (const kind of kinds) rows.push(await lowSteal(kind, isPinned));
    rounds.push({ echo, rows });
  }
  const summarize = (of: (round: (typeof rounds)[number]) => PairsRow): BenchRow => {
    const ranked = rounds
      .map((round) => {
        const row = of(round);
        return { row, ratio: row.pairsPerS / round.echo.pairsPerS, p99Ratio: row.p99 / round.echo.p99 };
      })
      .sort((a, b) => a.ratio - b.ratio);
    const median = ranked[Math.floor(ranked.length / 2)] ?? ranked[0];
    if (median === undefined) throw new Error('no rounds ran');
    const { pairsPerS: _pairs, p99: _p99, ...row } = median.row;
    const low = ranked[0]?.ratio ?? Number.NaN;
    const high = ranked[ranked.length - 1]?.ratio ?? Number.NaN;
    return {
      ...row,
      'p99 / echo p99': median.p99Ratio,
      ratio: median.ratio,
      'ratio, all rounds': `${low.toFixed(3)}-${high.toFixed(3)}`,
    };
  };
  return [
    summarize((round) => round.echo),
    ...kinds.map(([kind], i) =>
      summarize((round) => {
        const row = round.rows[i];
        if (row === undefined) throw new Error(`round without a ${kind} row`);
        return row;
      }),
    ),
  ];
}

/**
 * One measurement of `kind`, taken again (at most {@link STEAL_RETRIES} times) while the host steals
 * more than {@link STEAL_RETRY_PERCENT} % of the machine's CPU; the one with the least steal is kept.
 */
async function lowSteal([kind, label]: Kind, isPinned: boolean): Promise<PairsRow> {
  let best = await pairs(kind, label, isPinned);
  for (let retry = 0; retry < STEAL_RETRIES && Number(best['steal %']) > STEAL_RETRY_PERCENT; retry++) {
    const again = await pairs(kind, label, isPinned);
    if (Number(again['steal %']) < Number(best['steal %'])) best = again;
  }
  return best;
}

async function main(): Promise<void> {
  const quickChoice = process.env.AGENT_SYNC_QUICK;
  if (quickChoice !== undefined && quickChoice !== '') return quick(quickChoice);
  let pairsTable = printTable(
    `send + listen pairs, ${CONNECTIONS} connections, ${MEASURE_MS / 1000} s per row, unpinned, median of ${ROUNDS} interleaved rounds`,
    await interleaved([...MAIN_KINDS, ...CALIBRATION_KINDS], false),
  );
  if (canPin) {
    // Pinned: pairs/s then measures the server's CPU per pair on one core, whatever the client costs.
    pinSelf(CLIENT_CPU);
    const pinned = await interleaved(MAIN_KINDS, true);
    pinSelf('0-1023');
    pairsTable += `\n${printTable(
      `send + listen pairs, pinned: server on CPU ${SERVER_CPU}, client on CPU ${CLIENT_CPU}, median of ${ROUNDS} interleaved rounds`,
      pinned,
    )}`;
  } else console.log('pinned mode skipped: taskset or a second CPU is missing');
  const idleTable = printTable(`${IDLE_LISTENERS} idle listens`, [await idleListeners()]);
  appendResults(`${pairsTable}\n${idleTable}`);
}

function appendResults(tables: string): void {
  const heading = '## agent_sync gateway';
  const section = [
    heading,
    '',
    '`npx tsx bench/agent-sync.bench.ts` — each connection sends a message to its own mailbox and listens',
    'for it (one pair = two requests, two replies); the echo server answers the same two lines. Servers run',
    "in child processes; peak RSS is the server process. Targets (issue #20): >= 0.55 of the echo's pairs/s",
    "on SQLite, both pinned and unpinned, p99 <= 2x the echo's unpinned; the memory store >= 0.7 of echo;",
    '1,000 idle listens in <= 50 MB extra RSS.',
    '',
    'Four rows calibrate it. **Raw better-sqlite3** does the state changes agent_sync needs (a send inserts a',
    'row, a listen deletes the oldest row of its mailbox and answers its body) with the same batching as the',
    'store (every line of one event-loop turn in one transaction, replies after the commit, one write per',
    "socket): what the SQL itself costs. **Bare SQL of musubi's schema** runs the statements the SQLite store",
    'runs for the same pair on its real schema (migrate()), with no bus or protocol code: the `message.sent`',
    'event row holding the envelope, the message row (its unique index checking for a duplicate), the head',
    "found in memory as the store's mirror does, the delete by primary key and the `message.acked` event",
    "row. **The connection layer** is the gateway's own AgentSyncConnection (framing, UTF-8 check, parseJson,",
    "the listen's loop turn, one write per reply) over a core that answers at once. **Echo + N µs** spins N µs",
    'per request before answering. **Pinned** runs each server on CPU 0 and the client on CPU 1, so pairs/s',
    'measures the server alone.',
    '',
    'The rows run in three interleaved rounds, each opened by its own echo; a row shows its median round (by',
    "ratio to that round's echo) and the range of all rounds. `steal %` is the share of the machine's CPU the",
    'host took during the measurement (/proc/stat); one above 5 % is measured again, at most twice, keeping',
    'the least stolen. `server CPU µs/pair` is the steadiest column.',
    '',
    `Last run: ${machineLine()} · load average ${loadavg()[0]?.toFixed(1) ?? '?'} at the end of the run`,
    '',
    tables,
    'Reading the numbers (2026-12-06, an Intel Xeon host; four full runs, the pinned half of one spoiled by heavy',
    'steal): the 1,000 idle listens meet their target (16-21 MiB). By the median of interleaved',
    'rounds the SQLite store lands at 0.29-0.37 of echo unpinned and 0.26-0.33 pinned; the memory store at',
    '0.44-0.55 unpinned and 0.46-0.54 pinned (single rounds up to 0.75). Neither meets its throughput',
    'target, and on this host neither can. The server CPU per pair adds up by layer (the run above,',
    'unpinned: echo 13 + connection layer 5 + protocol, bus and memory store 11 + bare SQL 13 = 42 µs against',
    '44 measured on SQLite), and a calibration row alone uses up each budget:',
    '- SQLite >= 0.55 of echo allows 13 / 0.55 = 24 µs per pair. The raw better-sqlite3 row (one insert and',
    '  one delete; no events, no bus, no protocol) spends 22-28 µs by itself and lands at 0.52-0.79.',
    '- Memory >= 0.7 allows 13 / 0.7 = 19 µs per pair. The connection layer over a core that answers at',
    '  once spends 15-19 µs (0.65-0.96 of echo), which leaves at most 4 µs for the protocol, the bus and the',
    '  store: those cost 7-10 µs per pair in process, with no sockets at all.',
    "The SQLite p99 (target <= 2x the echo's) is met in one run of four (1.8x; 2.4-3.0x in the others). The",
    'bare SQL of the schema, with its checkpoints on its main thread, has 2.8-3.3x and the memory store, with',
    "no SQL, 1.7-2.9x: the tail is the gateway's own as much as the SQL's (under this load a scavenge of",
    '1-1.5 ms every 25-35 ms, at about 9 KB allocated per pair).',
    "On the same day's earlier host (AMD EPYC, echo 18-21 µs per pair) the same code reached 0.34-0.44 on",
    "SQLite and 0.54-0.75 on memory: the ratios follow the echo's speed far more than each layer's cost.",
    "Schema 3 took the bare SQL from 0.37-0.43 of echo (schema 2's six indexes and JSON events) to",
    '0.53-0.65 on the AMD host (0.37-0.58 on this one): the messages table clustered by (mailbox, state,',
    'priority, seq) with one unique index beside it, the envelope kept once (in its message.sent event), the',
    'sent, claimed and acked events as columns.',
    'In process (32 loops, no sockets) a pair costs 7-10 µs on memory (22.6 before this issue) and 19-24 on',
    'SQLite (33 before). With 2 loops instead of 32 a SQLite pair costs 49-54 µs: each group commit pays',
    'BEGIN, COMMIT and the WAL frames of the pages it changed, so the batch size (15-16 operations per',
    'commit in this bench) weighs on the SQLite row.',
    'What changed for the issue, besides the schema: the memory store keeps its events as columns in a ring',
    'and its records in indexed heaps; a mirror of the mailboxes read answers peek, counts and the next due',
    "time on SQLite without queries (kept in step by this connection's commits, dropped when another",
    "connection's commit changes data_version); a send or take hands back the store's promise without an",
    'async frame per layer; a connection runs its lines as one loop resumed by each promise and settles a',
    'listen reply the socket took at once; parseJson reads a flat object in one hand-written pass (as fast',
    "as JSON.parse on these lines, checked against Python's json.loads); strings render with JSON.stringify",
    "(held to Python's escapes over every code unit); aborts carry reasons of our own instead of a",
    'DOMException with a stack; the event log prunes every 100 appends (a 1,000-row prune stalled its batch',
    '0.4-1 ms).',
    'Tried and dropped: the writes on a worker thread (same pairs/s, more CPU per pair), holding replies',
    'to the end of the turn, a larger V8 young generation, off-heap JSON for retained events, one UNION',
    'statement for a peek (slower than two), deferring the group commit by one more turn (about 2 µs per',
    'pair, within noise), larger checkpoint intervals (no change), rendering listen items again instead of',
    'remembering them by envelope id (no faster). About 0.9 KB per SQLite pair is promoted and then dies',
    'in old space: a sampling heap profile of promoted objects puts a third of it in the backing stores of',
    "Maps that shrink on delete (the rendered-item cache, the mirror's ids) and a sixth in the envelope",
    'cache; GC takes about 1 µs per pair in process, so it is left as it is.',
    '',
  ].join('\n');
  writeResultsSection(heading, section);
}

// Entry point last: classes above must be initialised before top-level await runs anything.
if (process.argv[2] === '--serve') {
  const [kind = 'echo', dir = tmpdir()] = process.argv.slice(3);
  const work = /^echo-work-(\d+)$/.exec(kind);
  const port =
    kind === 'echo' || work !== null
      ? await serveEcho(Number(work?.[1] ?? 0))
      : kind === 'sqlite-raw'
        ? await serveRawSqlite(dir)
        : kind === 'sqlite-schema'
          ? await serveSchemaSqlite(dir)
          : kind === 'connection'
            ? await serveConnectionOnly()
            : await serveGateway(kind, dir);
  process.stdout.write(`PORT ${port}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
} else {
  await main();
}
