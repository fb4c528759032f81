// The dashboard at scale (issue "the dashboard tells the story"): with 50 agents, 10,000 messages and
// 1,000 recorded turns in a SQLite store, the page's first paint on localhost stays under 1 s and the
// message log scrolls without jank (a virtual list). A hub as `musubi up` starts it (startConfiguredHub,
// HTTP gateway on port 0, serving the built page in dist/dashboard) is seeded through the bus, the agent
// directory and the turn log; a second hub with an empty store is the baseline of the same run. Headless
// Debian Chromium (playwright-core) opens each page in a fresh context at 1440x900; loads alternate
// between the two stores. The API replies the page starts with are timed from Node.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../test/fixtures/chromium-launch.js';
import { z } from 'zod';
import type { AgentRunEvent, AgentRunResult } from '../src/agents/agent-runner.js';
import type { TurnLog } from '../src/agents/turns/turn-log.js';
import type { AgentProtocol, AgentState } from '../src/bus/agent-directory.js';
import type { Bus } from '../src/bus/bus.types.js';
import { createSystemClock } from '../src/core/clock.js';
import { configSchema } from '../src/core/config.schema.js';
import { createIdGenerator } from '../src/core/ids.js';
import { createSilentLogger } from '../src/core/logger.js';
import { lastEventCursor } from '../src/gateways/http/event-tail.js';
import { httpSetup } from '../src/hub/gateway-setups.js';
import { startConfiguredHub, type ConfiguredHub } from '../src/hub/start-configured-hub.js';
import type { Delivery } from '../src/store/store.js';
import { machineLine, percentile, printTable, writeResultsSection, type BenchRow } from './bench-kit.js';

const AGENTS = 50;
const MESSAGES = 10_000;
const TURNS = 1_000;
const LOADS = Number(process.env['DASHBOARD_BENCH_LOADS'] ?? '5');
const SCROLL_STEPS = 200;
const SCROLL_STEP_MS = 15;
const LONG_FRAME_MS = 50;
const API_RUNS = 5;
const FIRST_PAINT_TARGET_MS = 1_000;
const VIEWPORT = { width: 1440, height: 900 };
/** Leases and nack delays outlast the bench, so leased and nacked rows keep their status. */
const HOUR_MS = 3_600_000;
/** The page's start-up requests, the four the issue names first. */
const API_PATHS = [
  '/api/agents',
  '/api/messages',
  '/api/turns',
  '/api/mailboxes',
  '/api/leases',
  '/api/dead-letters',
  '/api/tasks',
  '/api/teams',
];
/**
 * What a message-log row may look like, most specific first: the page is being rewritten, so the
 * first selector that matches anything wins and the table names it.
 */
const ROW_SELECTORS = [
  '#log .log-row',
  '#log [data-message]',
  '[data-log-row]',
  '.log-row',
  '.message-log [data-message]',
  '[role="log"] [role="row"]',
];

const REPO = fileURLToPath(new URL('../', import.meta.url));
const DIST = join(REPO, 'dist', 'dashboard');
const clock = createSystemClock();
const logger = createSilentLogger();

/** Builds the page (`npm run build`) unless DASHBOARD_BENCH_BUILD=0; throws when there is none to serve. */
function ensureBuiltPage(): void {
  if (process.env['DASHBOARD_BENCH_BUILD'] !== '0') {
    const run = spawnSync('npm', ['run', 'build', '--silent'], { cwd: REPO, stdio: 'inherit' });
    if (run.status !== 0) {
      throw new Error(
        '`npm run build` failed (see above). The bench measures the built page in dist/dashboard: fix the ' +
          'build, or set DASHBOARD_BENCH_BUILD=0 to measure the dist/dashboard that is there now.',
      );
    }
  }
  if (!existsSync(join(DIST, 'index.html')) || !existsSync(join(DIST, 'app.js'))) {
    throw new Error(`${DIST} has no built page (index.html, app.js): run \`npm run build\` first`);
  }
  const newest = (dir: string): number =>
    Math.max(
      ...readdirSync(dir, { withFileTypes: true }).map((e) =>
        e.isDirectory() ? newest(join(dir, e.name)) : statSync(join(dir, e.name)).mtimeMs,
      ),
    );
  if (newest(join(REPO, 'src', 'dashboard')) > statSync(join(DIST, 'app.js')).mtimeMs) {
    console.warn('warning: src/dashboard changed after dist/dashboard was built; measuring the older build');
  }
}

/** `musubi up` with only the dashboard: SQLite store in `dir`, HTTP gateway on 127.0.0.1, an OS-chosen port. */
async function startDashboardHub(dir: string): Promise<{ hub: ConfiguredHub; base: string; db: string }> {
  const db = join(dir, 'bus.db');
  const config = configSchema.parse({
    store: `sqlite:${db}`,
    log: { level: 'silent' },
    bus: { leaseMs: HOUR_MS },
    // The bench's own loopback hub: no token, so the page and the fetches measure the dashboard alone.
    gateways: { http: { enabled: true, port: 0, auth: 'none' } },
  });
  const hub = await startConfiguredHub({
    config,
    cwd: dir,
    env: { PATH: process.env['PATH'] ?? '' },
    logger,
    clock,
    ids: createIdGenerator(clock),
    installed: new Set(),
    gateways: { http: httpSetup(config, dir, {}) },
  });
  const http = hub.byKind.http;
  if (http === undefined) throw new Error('the hub started without its HTTP gateway');
  return { hub, base: http.url().replace(/\/$/, ''), db };
}

interface AgentPlan {
  readonly name: string;
  readonly team: string;
  readonly isOffline: boolean;
}

const ROLES = ['planner', 'coder', 'reviewer', 'tester', 'writer'] as const;
const PROTOCOLS: readonly AgentProtocol[] = ['agent-sync', 'yadon', 'ignite', 'neko', 'mcp', 'http'];
const BACKENDS = ['claude', 'codex', 'gemini', 'copilot', 'opencode'] as const;

function agentPlans(): AgentPlan[] {
  return Array.from({ length: AGENTS }, (_, i) => ({
    name: `${ROLES[i % ROLES.length] ?? 'coder'}-${Math.floor(i / ROLES.length) + 1}`,
    team: `team-${Math.floor(i / 10) + 1}`,
    isOffline: i % 10 === 9,
  }));
}

function stateOf(i: number, plan: AgentPlan): AgentState {
  if (plan.isOffline) return 'offline';
  if (i === 12) return 'error';
  if (i === 7 || i === 27) return 'waiting';
  return i % 3 === 0 ? 'busy' : 'idle';
}

async function seedAgents(hub: ConfiguredHub, plans: readonly AgentPlan[]): Promise<void> {
  for (const [i, plan] of plans.entries()) {
    const state = stateOf(i, plan);
    await hub.directory.update(plan.name, {
      protocol: PROTOCOLS[i % PROTOCOLS.length] ?? 'bus',
      state,
      role: ROLES[i % ROLES.length] ?? 'coder',
      team: plan.team,
      backend: BACKENDS[i % BACKENDS.length] ?? 'claude',
      ...(state === 'busy' && { currentTask: `subtask ${i}: tighten the retry policy` }),
      ...(i % 6 === 0 && { bubble: `running the tests of module ${i}` }),
    });
  }
}

/** What happens to a message after it is sent; the mix gives the log every status. */
type Fate = 'waiting' | 'leased' | 'nacked' | 'dead' | 'retried' | 'discarded' | 'requeued' | 'acked';

function fateOf(i: number): Fate {
  const fates: Record<number, Fate> = { 0: 'waiting', 1: 'leased', 2: 'nacked', 3: 'dead', 4: 'retried' };
  if (i % 20 === 5) return i % 40 === 5 ? 'discarded' : 'requeued';
  return fates[i % 20] ?? 'acked';
}

const TYPES = ['task', 'result', 'review_request', 'note', 'question', 'status'] as const;
const SENTENCE = 'The retry policy now backs off exponentially and caps at thirty seconds. ';

interface MessagePlan {
  readonly i: number;
  readonly from: string;
  readonly to: string;
  readonly fate: Fate;
}

/**
 * One chain per recipient: a chain alone receives from its mailbox, and a mailbox holds no ready
 * message when its next one is sent (waiting messages go to offline agents, whose mailboxes are never
 * received from), so each receive gets the message just sent. Chains run concurrently.
 */
function messageChains(plans: readonly AgentPlan[], from: number, to: number): MessagePlan[][] {
  const online = plans.filter((p) => !p.isOffline);
  const offline = plans.filter((p) => p.isOffline);
  const chains = new Map<string, MessagePlan[]>();
  for (let i = from; i < to; i++) {
    const fate = fateOf(i);
    const sender = plans[i % plans.length]?.name ?? 'coder-1';
    const pool = fate === 'waiting' ? offline : online;
    let recipient = pool[(i * 7 + 3) % pool.length]?.name ?? 'coder-1';
    if (recipient === sender) recipient = pool[(i * 7 + 4) % pool.length]?.name ?? 'coder-1';
    const chain = chains.get(recipient) ?? [];
    chain.push({ i, from: sender, to: recipient, fate });
    chains.set(recipient, chain);
  }
  return [...chains.values()];
}

async function claim(bus: Bus, mailbox: string, id: string): Promise<Delivery> {
  const delivery = await bus.receive(mailbox, { timeoutMs: 0 });
  if (delivery?.envelope.id !== id) throw new Error(`seeding: expected ${id} in ${mailbox}`);
  return delivery;
}

async function deliver(bus: Bus, m: MessagePlan): Promise<void> {
  const { envelope } = await bus.send({
    from: m.from,
    to: m.to,
    type: TYPES[m.i % TYPES.length] ?? 'note',
    priority: m.i % 17 === 0 ? 'high' : m.i % 23 === 0 ? 'low' : 'normal',
    ...(m.i % 3 === 0 && { thread: `thread-${m.i % 97}` }),
    body:
      m.i % 5 === 0
        ? JSON.stringify({ step: m.i, files: ['src/retry.ts', 'test/retry.test.ts'], ok: m.i % 2 === 0 })
        : `Message ${m.i}: ${SENTENCE.repeat(1 + (m.i % 8))}`,
  });
  if (m.fate === 'waiting') return;
  const id = envelope.id;
  const first = await claim(bus, m.to, id);
  switch (m.fate) {
    case 'leased':
      return;
    case 'nacked':
      await bus.nack(first.deliveryId, { delayMs: HOUR_MS, reason: 'rate limited' });
      return;
    case 'dead':
      await bus.deadLetter(first.deliveryId, 'handler failed: invalid plan');
      return;
    case 'retried':
      await bus.nack(first.deliveryId, { delayMs: 0, reason: 'busy' });
      await bus.ack((await claim(bus, m.to, id)).deliveryId);
      return;
    case 'discarded':
      await bus.deadLetter(first.deliveryId, 'handler failed: unknown type');
      await bus.discardDeadLetter(id);
      return;
    case 'requeued':
      await bus.deadLetter(first.deliveryId, 'handler failed: timeout');
      await bus.retryDeadLetter(id);
      await bus.ack((await claim(bus, m.to, id)).deliveryId);
      return;
    case 'acked':
      await bus.ack(first.deliveryId);
  }
}

/** Sends messages `from` to `to` (exclusive), one chain per recipient, the chains concurrently. */
async function sendMessages(bus: Bus, plans: readonly AgentPlan[], from: number, to: number): Promise<void> {
  await Promise.all(
    messageChains(plans, from, to).map(async (chain) => {
      for (const m of chain) await deliver(bus, m);
    }),
  );
}

function turnEvents(j: number): AgentRunEvent[] {
  const file = `src/module-${j % 40}.ts`;
  return [
    { type: 'started', pid: 1000 + j, argv: ['scripted'] },
    { type: 'message', text: `Looking at ${file} first.` },
    {
      type: 'tool',
      callId: `c${j}a`,
      name: 'Bash',
      kind: 'command',
      summary: 'npm test',
      input: '{"command":"npm test"}',
    },
    { type: 'tool_result', callId: `c${j}a`, isError: j % 4 === 0, output: `${20 + (j % 9)} passed` },
    {
      type: 'tool',
      callId: `c${j}b`,
      name: 'Edit',
      kind: 'edit',
      summary: file,
      input: `{"file_path":"${file}"}`,
    },
    { type: 'tool_result', callId: `c${j}b`, isError: false, output: 'ok' },
    {
      type: 'usage',
      usage: { inputTokens: 1200 + j, outputTokens: 300 + (j % 50), costUsd: 0.01 + (j % 7) / 100 },
    },
    { type: 'message', text: `Updated ${file}; the tests pass.` },
  ];
}

function turnResult(j: number): AgentRunResult {
  const isError = j % 25 === 0;
  return {
    backend: 'scripted',
    text: isError ? '' : `Done: subtask ${j}.`,
    exitCode: isError ? 1 : 0,
    signal: null,
    isError: isError || j % 97 === 0,
    timedOut: j % 97 === 0,
    canceled: false,
    durationMs: 2_000 + (j % 30) * 1_000,
    stderrTail: '',
    isOutputTruncated: false,
    usage: { inputTokens: 1200 + j, outputTokens: 300 + (j % 50), costUsd: 0.01 + (j % 7) / 100 },
    ...(isError && { errorMessage: 'API error: overloaded' }),
  };
}

async function seedTurns(
  turns: TurnLog,
  plans: readonly AgentPlan[],
  from: number,
  to: number,
): Promise<void> {
  const phases = ['plan', 'implement', 'review', 'test'];
  for (let j = from; j < to; j++) {
    const agent = plans[j % plans.length] ?? { name: 'coder-1', team: 'team-1' };
    const turn = turns.begin(agent.name, 'scripted', {
      prompt: `Subtask ${j}: make the retry test of module ${j % 40} pass`,
      label: {
        team: agent.team,
        phase: phases[j % phases.length] ?? 'implement',
        subtask: `s${(j % 8) + 1}`,
      },
    });
    for (const event of turnEvents(j)) turn.onEvent(event);
    await turn.finish({ result: turnResult(j) });
  }
}

interface SeedStats {
  readonly seconds: number;
  readonly events: number;
  readonly dbMiB: number;
}

/** Seeds in ten rounds, each a tenth of the messages (one chain per recipient) beside a tenth of the turns. */
async function seed(hub: ConfiguredHub, db: string): Promise<SeedStats> {
  const turns = hub.runners.turns;
  if (turns === undefined) throw new Error('the hub records no turns');
  const started = performance.now();
  const plans = agentPlans();
  await seedAgents(hub, plans);
  const rounds = 10;
  for (let r = 0; r < rounds; r++) {
    await Promise.all([
      sendMessages(hub.bus, plans, (r * MESSAGES) / rounds, ((r + 1) * MESSAGES) / rounds),
      seedTurns(turns, plans, (r * TURNS) / rounds, ((r + 1) * TURNS) / rounds),
    ]);
  }
  const seconds = (performance.now() - started) / 1000;
  const size = (path: string): number => (existsSync(path) ? statSync(path).size : 0);
  const dbMiB = (size(db) + size(`${db}-wal`)) / 1024 / 1024;
  return { seconds, events: await lastEventCursor(hub.bus), dbMiB };
}

/** Installed before the page's own scripts: when log rows first enter the DOM, long tasks, LCP. */
const PROBE_SCRIPT = `(() => {
  const selectors = ${JSON.stringify(ROW_SELECTORS)};
  const probe = { rowsAt: -1, rowSelector: '', longTasks: [], lcp: -1 };
  Object.defineProperty(window, '__dashboardBench', { value: probe });
  const observer = new MutationObserver(() => {
    const found = selectors.find((s) => document.querySelector(s) !== null);
    if (found === undefined) return;
    probe.rowsAt = performance.now();
    probe.rowSelector = found;
    observer.disconnect();
  });
  observer.observe(document, { childList: true, subtree: true });
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) probe.longTasks.push(e.duration);
  }).observe({ type: 'longtask', buffered: true });
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) probe.lcp = e.startTime;
  }).observe({ type: 'largest-contentful-paint', buffered: true });
})();`;

const COLLECT_SCRIPT = `(() => {
  const probe = window.__dashboardBench;
  const paint = (name) => performance.getEntriesByName(name, 'paint')[0]?.startTime ?? -1;
  const nav = performance.getEntriesByType('navigation')[0];
  const api = performance.getEntriesByType('resource')
    .filter((e) => e.name.includes('/api/') && !e.name.includes('/api/events'));
  return {
    firstPaint: paint('first-paint'),
    firstContentfulPaint: paint('first-contentful-paint'),
    largestContentfulPaint: probe.lcp,
    domContentLoaded: nav?.domContentLoadedEventEnd ?? -1,
    rowsAt: probe.rowsAt,
    rowSelector: probe.rowSelector,
    domRows: probe.rowSelector === '' ? 0 : document.querySelectorAll(probe.rowSelector).length,
    lastApiReply: api.reduce((m, e) => Math.max(m, e.responseEnd), -1),
    longTasksMs: probe.longTasks.reduce((a, b) => a + b, 0),
  };
})()`;

const loadSample = z.object({
  firstPaint: z.number(),
  firstContentfulPaint: z.number(),
  largestContentfulPaint: z.number(),
  domContentLoaded: z.number(),
  rowsAt: z.number(),
  rowSelector: z.string(),
  domRows: z.number(),
  lastApiReply: z.number(),
  longTasksMs: z.number(),
});
type LoadSample = z.infer<typeof loadSample> & { heapMiB: number; domNodes: number };

/**
 * Browser code: the log's scroll box (the nearest scrollable ancestor of its first row, else the page)
 * and how many rows the list holds (scroll height over row height), whether or not they are all built.
 */
function findLogScript(selector: string): string {
  return `const findLog = () => {
    const first = document.querySelector(${JSON.stringify(selector)});
    if (first === null) return null;
    let box = first.parentElement;
    while (box !== null && !(/(auto|scroll|overlay)/.test(getComputedStyle(box).overflowY) && box.scrollHeight > box.clientHeight + 1)) box = box.parentElement;
    const scroller = box ?? document.scrollingElement;
    const rowPx = first.getBoundingClientRect().height;
    return { box, scroller, rowPx, listRows: rowPx > 0 ? Math.round(scroller.scrollHeight / rowPx) : 0 };
  };`;
}

/** How many rows the log's list holds now; 0 before it shows any. */
function listRowsScript(selector: string): string {
  return `(() => { ${findLogScript(selector)} return findLog()?.listRows ?? 0; })()`;
}

/**
 * Scrolls the log's scroll box from top to bottom in SCROLL_STEPS scrollTop steps SCROLL_STEP_MS
 * apart, recording every animation frame meanwhile.
 */
function scrollScript(selector: string): string {
  return `(async () => {
  ${findLogScript(selector)}
  const log = findLog();
  if (log === null) return null;
  const { box, scroller, listRows } = log;
  if (box !== null) box.scrollIntoView({ block: 'nearest' });
  const nextFrame = () => new Promise((r) => requestAnimationFrame(() => r()));
  await nextFrame();
  scroller.scrollTop = 0;
  await nextFrame();
  const distance = scroller.scrollHeight - scroller.clientHeight;
  const count = () => document.querySelectorAll(${JSON.stringify(selector)}).length;
  const frames = [];
  let isRecording = true;
  const frame = (t) => { if (!isRecording) return; frames.push(t); requestAnimationFrame(frame); };
  requestAnimationFrame(frame);
  let maxRows = count();
  const longTasksBefore = window.__dashboardBench.longTasks.length;
  const started = performance.now();
  for (let i = 1; i <= ${SCROLL_STEPS}; i++) {
    await new Promise((r) => setTimeout(r, ${SCROLL_STEP_MS}));
    scroller.scrollTop = Math.round((distance * i) / ${SCROLL_STEPS});
    maxRows = Math.max(maxRows, count());
  }
  await nextFrame();
  await nextFrame();
  isRecording = false;
  return {
    frames,
    ms: performance.now() - started,
    maxRows,
    listRows,
    isAtBottom: scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - 2,
    longTasks: window.__dashboardBench.longTasks.slice(longTasksBefore),
  };
})()`;
}

const scrollSample = z
  .object({
    frames: z.array(z.number()),
    ms: z.number(),
    maxRows: z.number(),
    listRows: z.number(),
    isAtBottom: z.boolean(),
    /** Durations of the page's main-thread tasks over 50 ms during the pass. */
    longTasks: z.array(z.number()),
  })
  .nullable();
type ScrollSample = NonNullable<z.infer<typeof scrollSample>>;

/** Follows the page's API requests (the event stream aside) from before its navigation on. */
function trackApi(page: Page): { settled(quietMs: number, timeoutMs: number): Promise<void> } {
  let inFlight = 0;
  let seen = 0;
  let changedAt = performance.now();
  const isApi = (url: string): boolean => url.includes('/api/') && !url.includes('/api/events');
  const change = (url: string, by: number): void => {
    if (!isApi(url)) return;
    inFlight += by;
    if (by > 0) seen++;
    changedAt = performance.now();
  };
  page.on('request', (r) => change(r.url(), 1));
  page.on('requestfinished', (r) => change(r.url(), -1));
  page.on('requestfailed', (r) => change(r.url(), -1));
  return {
    async settled(quietMs, timeoutMs) {
      const deadline = performance.now() + timeoutMs;
      while (seen === 0 || inFlight > 0 || performance.now() - changedAt < quietMs) {
        if (performance.now() > deadline) {
          throw new Error(`the page's API requests did not settle within ${timeoutMs} ms`);
        }
        await sleep(25);
      }
    },
  };
}

const MiB = 1024 * 1024;

/** Polls `expression` in the page (CDP evaluation, which the page's CSP allows) until it is true. */
async function waitInPage(page: Page, expression: string, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if ((await page.evaluate(expression)) === true) return true;
    await sleep(20);
  }
  return false;
}

/** Opens the dashboard of `base` in a fresh context (empty cache), with the probe installed. */
async function openDashboard(
  browser: Browser,
  base: string,
  problems: string[],
): Promise<{ page: Page; context: BrowserContext; api: ReturnType<typeof trackApi> }> {
  const context = await browser.newContext({ viewport: VIEWPORT });
  const page = await context.newPage();
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (m) => {
    // A failed request is reported with its path below.
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) {
      problems.push(`console: ${m.text()}`);
    }
  });
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()} for ${new URL(r.url()).pathname}`);
  });
  await page.addInitScript({ content: PROBE_SCRIPT });
  const api = trackApi(page);
  await page.goto(`${base}/`, { waitUntil: 'load' });
  return { page, context, api };
}

/**
 * One page load: paint timings, when the log's rows appeared, the DOM rows and JS heap once the
 * start-up requests are done (after a GC), then the scroll pass.
 */
async function loadOnce(
  browser: Browser,
  base: string,
  hasRows: boolean,
  problems: string[],
): Promise<{ load: LoadSample; scroll: ScrollSample | null }> {
  const { page, context, api } = await openDashboard(browser, base, problems);
  try {
    // No row selector matching is reported once all loads are done.
    if (hasRows) await waitInPage(page, 'window.__dashboardBench.rowsAt >= 0', 15_000);
    await api.settled(300, 15_000);
    const sample = loadSample.parse(await page.evaluate(COLLECT_SCRIPT));
    const cdp = await context.newCDPSession(page);
    await cdp.send('HeapProfiler.collectGarbage');
    await cdp.send('Performance.enable');
    const { metrics } = await cdp.send('Performance.getMetrics');
    const metric = (name: string): number => metrics.find((m) => m.name === name)?.value ?? Number.NaN;
    const load = { ...sample, heapMiB: metric('JSHeapUsedSize') / MiB, domNodes: metric('Nodes') };
    const scroll =
      hasRows && sample.rowSelector !== ''
        ? scrollSample.parse(await page.evaluate(scrollScript(sample.rowSelector)))
        : null;
    return { load, scroll };
  } finally {
    await context.close();
  }
}

/** What the log did while messages arrived live: rows before and after, and when it last grew. */
interface LiveIngest {
  readonly rowsBefore: number;
  readonly rowsAfter: number;
  readonly sendSeconds: number;
  /** From the first send to the last change of the log's length; 0 when it never changed. */
  readonly growSeconds: number;
}

/** Sends MESSAGES more messages while following the log's length, until it is still for a second. */
async function ingestLive(hub: ConfiguredHub, page: Page, selector: string): Promise<LiveIngest> {
  const rowsNow = async (): Promise<number> =>
    z.number().parse(await page.evaluate(listRowsScript(selector)));
  // A log that keeps a fixed number of rows stops growing at once: its main thread going quiet (no
  // new long task) is what says the page has caught up with the events.
  const longTasksNow = async (): Promise<number> =>
    z.number().parse(await page.evaluate('window.__dashboardBench.longTasks.length'));
  const rowsBefore = await rowsNow();
  const started = performance.now();
  let sendSeconds = Number.NaN;
  const sending = sendMessages(hub.bus, agentPlans(), MESSAGES, 2 * MESSAGES).then(() => {
    sendSeconds = (performance.now() - started) / 1000;
  });
  let rows = rowsBefore;
  let grewAt = started;
  let longTasks = await longTasksNow();
  let changedAt = started;
  // Until everything is sent and neither the log nor the long tasks changed for a second; at most 60 s.
  while (Number.isNaN(sendSeconds) || performance.now() - changedAt < 1_000) {
    if (performance.now() - started > 60_000) break;
    const [nowRows, nowLongTasks] = [await rowsNow(), await longTasksNow()];
    if (nowRows !== rows || nowLongTasks !== longTasks) changedAt = performance.now();
    if (nowRows !== rows) grewAt = changedAt;
    [rows, longTasks] = [nowRows, nowLongTasks];
    await sleep(100);
  }
  await sending;
  const growSeconds = rows === rowsBefore ? 0 : (grewAt - started) / 1000;
  return { rowsBefore, rowsAfter: rows, sendSeconds, growSeconds };
}

/**
 * A page left open while MESSAGES more messages arrive through the bus (its live feed, not the
 * start-up request): the log then holds as many rows as the page keeps, and is scrolled once it stops
 * growing. Resolves null when the log shows no rows.
 */
async function liveScroll(
  browser: Browser,
  hub: ConfiguredHub,
  base: string,
  problems: string[],
): Promise<{ scroll: ScrollSample; ingest: LiveIngest } | null> {
  const { page, context, api } = await openDashboard(browser, base, problems);
  try {
    if (!(await waitInPage(page, 'window.__dashboardBench.rowsAt >= 0', 15_000))) return null;
    await api.settled(300, 15_000);
    const selector = loadSample.parse(await page.evaluate(COLLECT_SCRIPT)).rowSelector;
    const ingest = await ingestLive(hub, page, selector);
    const scroll = scrollSample.parse(await page.evaluate(scrollScript(selector)));
    return scroll === null ? null : { scroll, ingest };
  } finally {
    await context.close();
  }
}

/** Median reply time (request to last byte, from Node) and size of each start-up request. */
async function apiTimes(base: string): Promise<Map<string, { ms: number; bytes: number }>> {
  const times = new Map<string, { ms: number; bytes: number }>();
  for (const path of API_PATHS) {
    const samples: number[] = [];
    let bytes = 0;
    for (let k = 0; k < API_RUNS; k++) {
      const started = performance.now();
      const res = await fetch(`${base}${path}`);
      const body = await res.text();
      samples.push(performance.now() - started);
      if (!res.ok) throw new Error(`GET ${path}: HTTP ${res.status} ${body.slice(0, 200)}`);
      bytes = Buffer.byteLength(body);
    }
    times.set(path, { ms: percentile(samples, 50), bytes });
  }
  return times;
}

/** The median of the values that were measured (a probe reports -1 for "did not happen"). */
function medianOf(values: readonly number[]): number {
  return percentile(
    values.filter((v) => v >= 0),
    50,
  );
}

function loadRow(name: string, loads: readonly LoadSample[], baseline?: readonly LoadSample[]): BenchRow {
  const of = (pick: (s: LoadSample) => number): number => medianOf(loads.map(pick));
  const fp = of((s) => s.firstPaint);
  const row: BenchRow = {
    implementation: name,
    loads: loads.length,
    'first paint ms': fp,
    'FP max ms': Math.max(...loads.map((s) => s.firstPaint)),
    'FCP ms': of((s) => s.firstContentfulPaint),
    'LCP ms': of((s) => s.largestContentfulPaint),
    'DOMContentLoaded ms': of((s) => s.domContentLoaded),
    'log rows shown ms': loads.some((s) => s.rowsAt >= 0) ? of((s) => s.rowsAt) : '',
    'last API reply ms': of((s) => s.lastApiReply),
    'long tasks ms': of((s) => s.longTasksMs),
    'log rows in DOM': of((s) => s.domRows),
    'DOM nodes': of((s) => s.domNodes),
    'JS heap MiB': of((s) => s.heapMiB),
  };
  if (baseline === undefined) return { ...row, 'FP vs empty': 1 };
  return { ...row, 'FP vs empty': fp / medianOf(baseline.map((s) => s.firstPaint)) };
}

interface ScrollSummary {
  readonly row: BenchRow;
  readonly p95: number;
  readonly longFrames: number;
  readonly frames: number;
  readonly listRows: number;
  readonly maxRows: number;
  readonly longTasks: number;
  readonly longTasksMs: number;
}

function scrollSummary(name: string, scrolls: readonly ScrollSample[]): ScrollSummary {
  const intervals = scrolls.flatMap((s) => s.frames.slice(1).map((t, k) => t - (s.frames[k] ?? t)));
  const longFrames = intervals.filter((ms) => ms > LONG_FRAME_MS).length;
  const seconds = scrolls.reduce((a, s) => a + s.ms, 0) / 1000;
  const listRows = percentile(
    scrolls.map((s) => s.listRows),
    50,
  );
  const maxRows = Math.max(...scrolls.map((s) => s.maxRows));
  const p95 = percentile(intervals, 95);
  const longTasks = scrolls.reduce((n, s) => n + s.longTasks.length, 0);
  const longTasksMs = scrolls.reduce((n, s) => n + s.longTasks.reduce((a, b) => a + b, 0), 0);
  const row: BenchRow = {
    implementation: name,
    passes: scrolls.length,
    'rows in list': listRows,
    'DOM rows max': maxRows,
    'reached bottom': `${scrolls.filter((s) => s.isAtBottom).length}/${scrolls.length}`,
    frames: intervals.length,
    'frames/s': intervals.length / seconds,
    'p50 frame ms': percentile(intervals, 50),
    'p95 frame ms': p95,
    'max frame ms': Math.max(...intervals),
    [`frames > ${LONG_FRAME_MS} ms`]: longFrames,
    'long tasks': longTasks,
    'long tasks ms': longTasksMs,
  };
  return { row, p95, longFrames, frames: intervals.length, listRows, maxRows, longTasks, longTasksMs };
}

function apiRows(
  empty: Map<string, { ms: number; bytes: number }>,
  seeded: Map<string, { ms: number; bytes: number }>,
): BenchRow[] {
  return API_PATHS.map((path) => {
    const e = empty.get(path);
    const s = seeded.get(path);
    return {
      implementation: `GET ${path}`,
      'empty ms': e?.ms ?? Number.NaN,
      'seeded ms': s?.ms ?? Number.NaN,
      'seeded KiB': (s?.bytes ?? Number.NaN) / 1024,
      'seeded / empty': (s?.ms ?? Number.NaN) / (e?.ms ?? Number.NaN),
    };
  });
}

interface Measured {
  readonly stats: SeedStats;
  readonly emptyLoads: LoadSample[];
  readonly seededLoads: LoadSample[];
  readonly scrolls: ScrollSample[];
  readonly apiEmpty: Map<string, { ms: number; bytes: number }>;
  readonly apiSeeded: Map<string, { ms: number; bytes: number }>;
  readonly live: { scroll: ScrollSample; ingest: LiveIngest } | null;
  readonly problems: string[];
}

async function measure(root: string, closers: Array<() => Promise<void>>): Promise<Measured> {
  const empty = await startDashboardHub(mkdtempSync(join(root, 'empty-')));
  closers.push(() => empty.hub.close());
  const seeded = await startDashboardHub(mkdtempSync(join(root, 'seeded-')));
  closers.push(() => seeded.hub.close());
  const stats = await seed(seeded.hub, seeded.db);
  console.log(
    `seeded ${AGENTS} agents, ${MESSAGES.toLocaleString('en-US')} messages and ${TURNS.toLocaleString('en-US')} turns ` +
      `in ${stats.seconds.toFixed(1)} s (${stats.events.toLocaleString('en-US')} events, ${stats.dbMiB.toFixed(1)} MiB of SQLite)`,
  );
  const browser = await launchChromium();
  closers.push(() => browser.close());
  const problems: string[] = [];
  // One load of each first, not counted: the browser's own start-up and the server's JIT.
  await loadOnce(browser, empty.base, false, problems);
  await loadOnce(browser, seeded.base, true, problems);
  const emptyLoads: LoadSample[] = [];
  const seededLoads: LoadSample[] = [];
  const scrolls: ScrollSample[] = [];
  for (let i = 0; i < LOADS; i++) {
    emptyLoads.push((await loadOnce(browser, empty.base, false, problems)).load);
    const { load, scroll } = await loadOnce(browser, seeded.base, true, problems);
    seededLoads.push(load);
    if (scroll !== null) scrolls.push(scroll);
  }
  const apiEmpty = await apiTimes(empty.base);
  const apiSeeded = await apiTimes(seeded.base);
  // Last: it adds MESSAGES more messages to the seeded store.
  const live = await liveScroll(browser, seeded.hub, seeded.base, problems);
  return { stats, emptyLoads, seededLoads, scrolls, apiEmpty, apiSeeded, live, problems };
}

/** One sentence on a scroll pass: how many rows the list held, how many were built, the frames. */
function scrollVerdict(what: string, scroll: ScrollSummary): string {
  const isVirtual = scroll.maxRows < scroll.listRows / 2;
  return (
    `${what}: the log held ${scroll.listRows.toLocaleString('en-US')} rows (scroll height / row height), at most ` +
    `${scroll.maxRows.toLocaleString('en-US')} of them in the DOM while scrolling (${isVirtual ? 'virtualised' : 'every row built: not virtualised'}); ` +
    `p95 frame ${scroll.p95.toFixed(1)} ms, ${scroll.longFrames} of ${scroll.frames.toLocaleString('en-US')} frames over ${LONG_FRAME_MS} ms, ` +
    `while the page ran ${scroll.longTasks} long task${scroll.longTasks === 1 ? '' : 's'} (${Math.round(scroll.longTasksMs).toLocaleString('en-US')} ms in all).`
  );
}

const INTRO = [
  '`npm run bench -- dashboard` (bench/dashboard.bench.ts; runs `npm run build` first, `DASHBOARD_BENCH_BUILD=0`',
  'measures the dist/dashboard already there, `DASHBOARD_BENCH_LOADS` sets the loads, default 5). A hub as',
  '`musubi up` starts it (SQLite store in a temp dir, HTTP gateway on 127.0.0.1, port 0, serving dist/dashboard),',
  `seeded through its own code: ${AGENTS} agents in the agent directory (six protocols, idle, busy, waiting, error,`,
  `offline), ${MESSAGES.toLocaleString('en-US')} messages sent through the bus (70% acked; 5% each left waiting for an offline agent, leased,`,
  'nacked with an hour of delay, dead-lettered, nacked once then acked; 2.5% each discarded from and requeued',
  `out of the dead letters), and ${TURNS.toLocaleString('en-US')} turns recorded by the hub's turn log (8 transcript entries each:`,
  'messages, tool calls and results, usage). A second hub with an empty store is the baseline. Headless Debian',
  `Chromium (playwright-core) loads each page in a fresh context at ${VIEWPORT.width}x${VIEWPORT.height}, stores alternating, after one`,
  'uncounted load of each. Paint times are `performance` paint entries; "log rows shown" is when a message-log',
  'row first entered the DOM; "last API reply" is the end of the last start-up request; long tasks are',
  'main-thread tasks over 50 ms until then; DOM nodes and JS heap after a GC once the start-up requests are done.',
  `A scroll pass moves the log's scroll box from top to bottom in ${SCROLL_STEPS} scrollTop steps ${SCROLL_STEP_MS} ms apart while`,
  "requestAnimationFrame records every frame, and the page's long tasks meanwhile (which tell its own work from a",
  `busy machine's): once per seeded load, and once on a page left open while ${MESSAGES.toLocaleString('en-US')} more messages arrive`,
  'live (the log then holds what the page keeps). Targets: first paint under 1 s, the log virtualised (tens of',
  'rows in the DOM), no frames over 50 ms while it scrolls; measured here, not asserted in a test.',
];

function report(m: Measured, seconds: number): void {
  const seededName = `seeded store (${AGENTS} agents, ${MESSAGES.toLocaleString('en-US')} messages, ${TURNS.toLocaleString('en-US')} turns)`;
  const seededRow = loadRow(seededName, m.seededLoads, m.emptyLoads);
  const loadTable = printTable(
    `first load at ${VIEWPORT.width}x${VIEWPORT.height}, fresh context each (median of ${LOADS} loads, times from navigation start)`,
    [loadRow('empty store', m.emptyLoads), seededRow],
  );
  const selector = m.seededLoads.find((s) => s.rowSelector !== '')?.rowSelector;
  if (selector === undefined || m.scrolls.length === 0) {
    throw new Error(
      `the message log showed no rows: none of ${ROW_SELECTORS.join(', ')} matched (update ROW_SELECTORS)`,
    );
  }
  const steps = `${SCROLL_STEPS} steps`;
  const scroll = scrollSummary(`seeded store, after the first load (${steps})`, m.scrolls);
  const ingest = m.live?.ingest;
  const live =
    m.live === null
      ? undefined
      : scrollSummary(
          `page open while ${MESSAGES.toLocaleString('en-US')} more messages arrived (${steps})`,
          [m.live.scroll],
        );
  const scrollTable = printTable(
    'message log scroll, top to bottom (every animation frame while scrolling)',
    live === undefined ? [scroll.row] : [scroll.row, live.row],
  );
  const apiTable = printTable(
    `API replies from Node (median of ${API_RUNS})`,
    apiRows(m.apiEmpty, m.apiSeeded),
  );
  const fp = Number(seededRow['first paint ms']);
  const problems = [...new Set(m.problems)];
  console.log(`total ${seconds.toFixed(0)} s; log rows matched \`${selector}\``);
  for (const p of problems.slice(0, 5)) console.warn(`page: ${p}`);
  const heading = '## Dashboard at scale';
  const section = [
    heading,
    '',
    ...INTRO,
    '',
    `Last run: ${machineLine()} · load average ${(loadavg()[0] ?? 0).toFixed(1)} at the end · ${seconds.toFixed(0)} s in all · ` +
      `seeding ${m.stats.seconds.toFixed(1)} s (${m.stats.events.toLocaleString('en-US')} events, ${m.stats.dbMiB.toFixed(1)} MiB of SQLite) · ` +
      `log rows matched \`${selector}\``,
    '',
    loadTable,
    scrollTable,
    apiTable,
    `- First paint with the seeded store: ${fp.toFixed(0)} ms (${fp < FIRST_PAINT_TARGET_MS ? 'under' : 'over'} the 1 s target; ` +
      `${Number(seededRow['FP vs empty']).toFixed(2)}x the empty store's); the log's rows were in the DOM at ` +
      `${Number(seededRow['log rows shown ms']).toFixed(0)} ms.`,
    `- ${scrollVerdict('After the first load', scroll)}`,
    live === undefined || ingest === undefined
      ? '- Live: the open page showed no log rows.'
      : `- Live: ${MESSAGES.toLocaleString('en-US')} more messages were sent in ${ingest.sendSeconds.toFixed(1)} s while the page was open; ` +
        `its log went from ${ingest.rowsBefore.toLocaleString('en-US')} to ${ingest.rowsAfter.toLocaleString('en-US')} rows` +
        (ingest.growSeconds > 0
          ? `, the last of them ${ingest.growSeconds.toFixed(1)} s after the first send. `
          : '. ') +
        scrollVerdict('Then', live),
    ...(problems.length === 0
      ? []
      : ['', 'Page errors during the run:', ...problems.slice(0, 5).map((p) => `- ${p}`)]),
    '',
  ].join('\n');
  writeResultsSection(heading, section);
}

async function main(): Promise<void> {
  const started = performance.now();
  ensureBuiltPage();
  const root = mkdtempSync(join(tmpdir(), 'musubi-dashboard-bench-'));
  const closers: Array<() => Promise<void>> = [];
  try {
    const measured = await measure(root, closers);
    report(measured, (performance.now() - started) / 1000);
  } finally {
    for (const close of closers.reverse()) {
      await close().catch((err: unknown) => console.error('bench: cleanup failed', err));
    }
    rmSync(root, { recursive: true, force: true });
  }
}

try {
  await main();
} catch (err) {
  console.error(`dashboard bench: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
