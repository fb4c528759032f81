import { JsonNumber, isJsonArray, isJsonObject, type JsonValue } from '../../core/python/json-loads.js';
import { pyStr } from '../../core/python/repr.js';
import { ask, pause } from './poll.js';

const PHASE_ICONS: Readonly<Record<string, string>> = {
  IMPLEMENT: '\u{1F528}',
  TEST: '\u{1F9EA}',
  DISCUSS: '\u{1F4AC}',
  SHUTDOWN: '\u{1F6D1}',
};
const DISCUSSION_LINES = 10;
const EVENT_LINES = 8;
const CLEAR_SCREEN = '\x1b[2J\x1b[H';

/** Settings of {@link runMonitor}. */
export interface MonitorOptions {
  readonly host: string;
  readonly port: number;
  readonly intervalMs: number;
  readonly stdout: NodeJS.WritableStream;
  /** Plain output (no screen clearing): NO_COLOR, TERM=dumb or not a terminal. */
  readonly isPlain: boolean;
  readonly signal?: AbortSignal;
}

interface Snapshot {
  readonly phase: string;
  readonly round: string;
  readonly implementer: string;
  readonly agents: ReadonlyArray<{
    readonly name: string;
    readonly isStale: boolean;
    readonly pending: number;
  }>;
  readonly discussion: readonly string[];
  readonly discussionTotal: number;
}

const clock = (seconds: number): string => new Date(seconds * 1000).toTimeString().slice(0, 8);
const num = (v: JsonValue | undefined): number => (v instanceof JsonNumber ? v.value : 0);

function discussionLine(entry: JsonValue): string {
  if (!isJsonObject(entry)) return pyStr(entry);
  const text = pyStr(entry.get('text') ?? '');
  const cut = Array.from(text).length > 80 ? `${Array.from(text).slice(0, 77).join('')}...` : text;
  return `[R${pyStr(entry.get('round') ?? '')} ${clock(num(entry.get('ts')))}] ${pyStr(entry.get('agent') ?? '')}: ${cut}`;
}

/** One poll: status, the discussion tail and one peek per joined agent. Null when unreachable. */
async function poll(target: { host: string; port: number }): Promise<Snapshot | null> {
  const data = (await ask(target, { cmd: 'status' }))?.get('data');
  if (data === undefined || !isJsonObject(data)) return null;
  const first = await ask(target, { cmd: 'get-discussion' });
  let reply = first;
  const total = num(first?.get('total'));
  if (first?.get('next_offset') !== null && total > DISCUSSION_LINES) {
    reply = await ask(target, { cmd: 'get-discussion', offset: total - DISCUSSION_LINES });
  }
  const entries = reply?.get('discussion');
  const discussion = isJsonArray(entries) ? entries.slice(-DISCUSSION_LINES).map(discussionLine) : [];
  const agentsValue = data.get('agents');
  const agents = [];
  for (const [name, info] of isJsonObject(agentsValue) ? agentsValue : new Map<string, JsonValue>()) {
    const peeked = await ask(target, { cmd: 'peek', agent: name });
    const isStale = isJsonObject(info) && info.get('stale') === true;
    agents.push({ name, isStale, pending: num(peeked?.get('pending')) });
  }
  return {
    phase: pyStr(data.get('phase') ?? ''),
    round: pyStr(data.get('round') ?? ''),
    implementer: pyStr(data.get('implementer') ?? ''),
    agents,
    discussion,
    discussionTotal: total,
  };
}

/** What changed between two polls, as event lines. */
function changes(before: Snapshot | null | undefined, after: Snapshot | null, at: string): string[] {
  if (after === null) return before === null ? [] : [`${at}  server unreachable`];
  if (before === undefined || before === null)
    return [`${at}  connected: ${after.phase}, round ${after.round}`];
  const events: string[] = [];
  if (before.phase !== after.phase || before.round !== after.round) {
    events.push(`${at}  phase ${before.phase} -> ${after.phase} (round ${after.round})`);
  }
  if (before.implementer !== after.implementer) events.push(`${at}  implementer: ${after.implementer}`);
  for (const agent of after.agents) {
    const old = before.agents.find((a) => a.name === agent.name);
    if (old === undefined) events.push(`${at}  ${agent.name} joined`);
    else if (agent.pending > old.pending)
      events.push(`${at}  ${agent.name}: +${agent.pending - old.pending} pending`);
    if (old !== undefined && agent.isStale && !old.isStale) events.push(`${at}  ${agent.name} went stale`);
  }
  if (after.discussionTotal > before.discussionTotal) {
    events.push(`${at}  discussion: +${after.discussionTotal - before.discussionTotal} entries`);
  }
  return events;
}

function draw(o: MonitorOptions, snap: Snapshot | null, events: readonly string[]): string {
  const lines = [`agent_sync monitor \u2014 ${o.host}:${o.port} \u2014 ${clock(Date.now() / 1000)}`, ''];
  if (snap === null) lines.push(`\u23F3 Waiting for server on port ${o.port}...`);
  else {
    const icon = PHASE_ICONS[snap.phase] ?? '';
    lines.push(
      `Phase: ${icon} ${snap.phase}   Round: ${snap.round}   Implementer: ${snap.implementer || '-'}`,
      '',
    );
    lines.push('Agents:');
    for (const a of snap.agents) {
      const mail = a.pending > 0 ? `\u{1F4EC} ${a.pending} pending` : '\u{1F4ED} 0 pending';
      lines.push(`  ${a.name.padEnd(16)} ${mail}${a.isStale ? '  stale' : ''}`);
    }
    if (snap.agents.length === 0) lines.push('  (none joined)');
    lines.push('', `Discussion (last ${DISCUSSION_LINES}):`, ...snap.discussion.map((l) => `  ${l}`));
  }
  lines.push('', `Events (last ${EVENT_LINES}):`, ...events.map((e) => `  ${e}`));
  return `${o.isPlain ? '' : CLEAR_SCREEN}${lines.join('\n')}\n${o.isPlain ? '\n' : ''}`;
}

/**
 * The read-only live view: polls every interval (never listens) and redraws. Exits 0 after drawing a
 * SHUTDOWN state, or when `signal` aborts.
 */
export async function runMonitor(o: MonitorOptions): Promise<number> {
  const events: string[] = [];
  let previous: Snapshot | null | undefined;
  while (o.signal?.aborted !== true) {
    const snap = await poll({ host: o.host, port: o.port });
    events.push(...changes(previous, snap, clock(Date.now() / 1000)));
    events.splice(0, Math.max(0, events.length - EVENT_LINES));
    previous = snap;
    o.stdout.write(draw(o, snap, events));
    if (snap?.phase === 'SHUTDOWN') {
      o.stdout.write('\u{1F6D1} Server in SHUTDOWN. Monitor exiting.\n');
      return 0;
    }
    await pause(o.intervalMs, o.signal);
  }
  return 0;
}
