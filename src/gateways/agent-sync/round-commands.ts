import { RawJson, pyJson } from '../../core/python/json-dumps.js';
import { pyStr, pyTuple } from '../../core/python/repr.js';
import { PHASES, isPhase } from '../../teams/rounds/rounds-state.js';
import type { RoundsRefusal } from '../../teams/rounds/rounds-team.js';
import { valueOr, type CommandHandler } from './command-context.js';
import { hashKey, stringAddress } from './mailbox-address.js';
import { MAX_ITEM_BYTES, renderItem, seconds } from './mail-item.js';
import { WireErrors, errorReply, okReply, unhashableReply } from './replies.js';

function refusalReply(refusal: RoundsRefusal, expected: 'IMPLEMENT' | 'DISCUSS'): string {
  if (refusal.reason === 'wrong-phase') {
    return errorReply(`Not in ${expected} phase (current: ${refusal.phase})`);
  }
  if (refusal.reason === 'not-implementer') {
    return errorReply(`Only the implementer (${refusal.implementer}) can call impl-done`);
  }
  return errorReply('Invalid agent name');
}

/** join: a configured agent joins (or re-joins); the first joiner of an empty team implements. */
export const join: CommandHandler = async (request, ctx) => {
  const agent = valueOr(request, 'agent', '');
  const refused = errorReply(`Invalid agent name. Must be one of: ${pyTuple(ctx.team.members)}`);
  if (typeof agent !== 'string') return refused;
  const result = await ctx.team.join(agent);
  if (!result.ok) return refused;
  await ctx.attached(agent);
  const { phase, round, implementer } = result.state;
  return okReply({ message: `Joined as ${agent}`, phase, round, implementer });
};

/** impl-done: the implementer finished; logs IMPL_DONE, then IMPLEMENT -> TEST. */
export const implDone: CommandHandler = async (request, ctx) => {
  const agent = valueOr(request, 'agent', '');
  const summary = valueOr(request, 'summary', '');
  const result = await ctx.team.implDone(agent, async (state) => {
    await ctx.roundLog.append({
      round: state.round,
      section: 'IMPL_DONE',
      agent: pyStr(agent),
      text: pyStr(summary),
    });
  });
  if (!result.ok) return refusalReply(result, 'IMPLEMENT');
  await ctx.announce(result.change);
  return okReply({ phase: 'TEST' });
};

/** test-result: stores the result (any phase), logs it, and in TEST moves to DISCUSS. */
export const testResult: CommandHandler = async (request, ctx) => {
  const agent = valueOr(request, 'agent', '');
  const passed = valueOr(request, 'passed', false);
  const output = valueOr(request, 'output', '');
  const failures = valueOr(request, 'failures', []);
  const label = pyJson({ agent, passed, output, failures, ts: seconds(ctx.clock.now()) });
  if (Buffer.byteLength(label, 'utf8') > MAX_ITEM_BYTES) return errorReply(WireErrors.testResultTooLarge);
  const { change } = await ctx.team.testResult(label, async (state) => {
    await ctx.roundLog.append({
      round: state.round,
      section: 'TEST_RESULT',
      agent: pyStr(agent),
      text: `passed=${pyStr(passed)}\n\n${pyStr(output)}`,
    });
  });
  if (change !== null) await ctx.announce(change);
  return okReply({ passed });
};

/** discuss: appends to the discussion log and forwards to every other joined member. */
export const discuss: CommandHandler = async (request, ctx) => {
  const agent = valueOr(request, 'agent', '');
  const text = valueOr(request, 'text', '');
  const { phase, round } = ctx.team.state;
  if (phase !== 'DISCUSS') return errorReply(`Not in DISCUSS phase (current: ${phase})`);
  const nowMs = ctx.clock.now();
  const entry = (r: number): string => pyJson({ agent, text, round: r, ts: seconds(nowMs) });
  const item = { from: agent, type: 'discuss', text, tsMs: nowMs };
  const rendered = renderItem(item);
  if (Buffer.byteLength(entry(round), 'utf8') > MAX_ITEM_BYTES || rendered.bytes > MAX_ITEM_BYTES) {
    return errorReply(WireErrors.messageTooLarge);
  }
  const result = await ctx.team.discuss(agent, entry);
  if (!result.ok) return refusalReply(result, 'DISCUSS');
  await ctx.deliver(result.recipients.map(stringAddress), item, rendered);
  return okReply({ round: result.round });
};

/** discuss-done: marks the caller done; the last mark starts the next round. */
export const discussDone: CommandHandler = async (request, ctx) => {
  const { phase } = ctx.team.state;
  if (phase !== 'DISCUSS') return errorReply(`Not in DISCUSS phase (current: ${phase})`);
  const agent = valueOr(request, 'agent', '');
  const hashed = hashKey(agent);
  if ('unhashable' in hashed) return unhashableReply(hashed.unhashable);
  const next = valueOr(request, 'next_implementer', '');
  const result = await ctx.team.discussDone({ key: hashed.key, label: pyJson(agent) }, next);
  if (!result.ok) return refusalReply(result, 'DISCUSS');
  if (result.change !== null) await ctx.announce(result.change);
  const { discussDone: done, round, implementer } = result.state;
  return okReply({ discuss_done: done.map((d) => new RawJson(d.label)), round, implementer });
};

/** set-phase: any phase, no transition rules; always announces. */
export const setPhase: CommandHandler = async (request, ctx) => {
  const phase = valueOr(request, 'phase', '');
  if (!isPhase(phase)) return errorReply(`Invalid phase. Must be one of: ${pyTuple(PHASES)}`);
  const change = await ctx.team.setPhase(phase);
  await ctx.announce(change);
  return okReply({ phase: ctx.team.state.phase, round: ctx.team.state.round });
};

/** shutdown: phase SHUTDOWN (the server keeps serving). */
export const shutdown: CommandHandler = async (request, ctx) => {
  const reason = valueOr(request, 'reason', 'manual');
  await ctx.announce(await ctx.team.setPhase('SHUTDOWN'));
  return okReply({ message: 'Shutting down', reason });
};

/** heartbeat: records liveness of a joined agent; other names are ignored. */
export const heartbeat: CommandHandler = async (request, ctx) => {
  const agent = valueOr(request, 'agent', '');
  const hashed = hashKey(agent);
  if ('unhashable' in hashed) return unhashableReply(hashed.unhashable);
  const state = await ctx.team.heartbeat(agent);
  ctx.touch(agent);
  return okReply({ phase: state.phase, round: state.round });
};

/** write-log: appends a section to the current round's log file. */
export const writeLog: CommandHandler = async (request, ctx) => {
  const { phase, round } = ctx.team.state;
  const logFile = await ctx.roundLog.append({
    round,
    section: pyStr(valueOr(request, 'section', phase)),
    agent: pyStr(valueOr(request, 'agent', 'unknown')),
    text: pyStr(valueOr(request, 'text', '')),
  });
  return okReply({ log_file: logFile });
};
