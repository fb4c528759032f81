import { RawJson, pyJsonString, type PyJsonInput } from '../../core/python/json-dumps.js';
import { JsonNumber, isJsonObject, parseJson, type JsonValue } from '../../core/python/json-loads.js';
import { pyStr } from '../../core/python/repr.js';
import type { RoundsState } from '../../teams/rounds/rounds-state.js';
import type { CommandContext, CommandHandler } from './command-context.js';
import { seconds } from './mail-item.js';
import { ReplyBudget } from './reservation.js';
import { WireErrors, errorReply, okReply } from './replies.js';

/** The original clients read at most 64 KiB per line: a status line (with `\n`) stays below that. */
const MAX_STATUS_LINE_BYTES = 65_535;

function statusReply(ctx: CommandContext, s: RoundsState, testResult: PyJsonInput): string {
  const now = ctx.clock.now();
  const agents = new Map<string, PyJsonInput>();
  for (const a of s.agents) {
    const lastSeenMs = ctx.liveness.lastSeenMs(a);
    agents.set(a.name, {
      status: 'idle',
      joined_at: seconds(a.joinedAtMs),
      last_heartbeat: a.lastHeartbeatMs === undefined ? undefined : seconds(a.lastHeartbeatMs),
      last_seen: seconds(lastSeenMs),
      stale: !ctx.isWaiting(a.name) && now - lastSeenMs > ctx.staleAfterMs,
    });
  }
  const discussDone = s.discussDone.map((d) => new RawJson(d.label));
  return okReply({
    data: {
      phase: s.phase,
      round: s.round,
      agents,
      implementer: s.implementer,
      discuss_done: discussDone,
      test_result: testResult,
    },
  });
}

/** Cuts `test_result.output` so the status line fits, marking it `output_truncated`. */
function truncatedStatus(ctx: CommandContext, s: RoundsState, label: string): string {
  const parsed = parseJson(label);
  if (!parsed.ok || !isJsonObject(parsed.value)) return statusReply(ctx, s, null);
  const result = new Map<string, JsonValue | boolean>(parsed.value);
  const output = result.get('output') ?? '';
  const full = typeof output === 'string' ? output : pyStr(output);
  result.set('output', '');
  result.set('output_truncated', true);
  const base = Buffer.byteLength(statusReply(ctx, s, result), 'utf8') + 1;
  let budget = MAX_STATUS_LINE_BYTES - base;
  let cut = '';
  for (const ch of full) {
    const cost = Buffer.byteLength(pyJsonString(ch, false), 'utf8') - 2;
    if (cost > budget) break;
    budget -= cost;
    cut += ch;
  }
  result.set('output', cut);
  return statusReply(ctx, s, result);
}

/** status: the whole state under `data`, plus `last_seen` and `stale` per agent. */
export const status: CommandHandler = async (_request, ctx) => {
  const s = ctx.team.state;
  const reply = statusReply(ctx, s, s.testResult === null ? null : new RawJson(s.testResult));
  if (s.testResult === null || Buffer.byteLength(reply, 'utf8') + 1 <= MAX_STATUS_LINE_BYTES) return reply;
  return truncatedStatus(ctx, s, s.testResult);
};

/** The round a filter value equals under Python `==` (true is 1), or null when it equals no integer. */
function roundFilter(v: JsonValue): number | null {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (!(v instanceof JsonNumber)) return null;
  return Number.isFinite(v.value) ? v.value : null;
}

/** A non-negative integer token (capped), or null for anything else. */
function intAtLeast(v: JsonValue, min: number): number | null {
  if (!(v instanceof JsonNumber) || !v.isInteger) return null;
  const n = BigInt(v.token);
  if (n < BigInt(min)) return null;
  return n > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(n);
}

/** get-discussion: entries of one round (or all), paged to stay within 60 KiB. */
export const getDiscussion: CommandHandler = async (request, ctx) => {
  const offsetValue = request.get('offset');
  const limitValue = request.get('limit');
  const offset = offsetValue === undefined ? 0 : intAtLeast(offsetValue, 0);
  if (offset === null) return errorReply(WireErrors.invalidOffset);
  const limit = limitValue === undefined ? Infinity : intAtLeast(limitValue, 1);
  if (limit === null) return errorReply(WireErrors.invalidLimit);
  const roundValue = request.get('round');
  const wanted = roundValue === undefined || roundValue === null ? undefined : roundFilter(roundValue);
  const all = ctx.team.discussion();
  const entries = wanted === undefined ? all : all.filter((e) => e.round === wanted);
  const total = entries.length;
  const head = `{"ok": true, "discussion": [], "total": ${total}, "next_offset": }\n`;
  const budget = new ReplyBudget(Buffer.byteLength(head) + Math.max(4, String(total).length));
  const page: RawJson[] = [];
  let index = offset;
  while (index < total && page.length < limit) {
    const label = entries[index]?.label ?? '';
    if (!budget.take(Buffer.byteLength(label, 'utf8'))) break;
    page.push(new RawJson(label));
    index++;
  }
  return okReply({ discussion: page, total, next_offset: index < total ? index : null });
};
