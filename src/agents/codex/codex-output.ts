import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import type { AgentRunEvent, AgentUsage } from '../agent-runner.js';
import type {
  CliOutput,
  CliTurn,
  OutputParser,
  ParsedOutput,
  ParserContext,
  SessionMemory,
} from '../cli/cli-backend.js';
import { parseJsonLine } from '../cli/json-line.js';
import { cutText, toolEvent, toolResultEvent } from '../cli/tool-event.js';
import { codexItemSchema, codexToolCall, codexToolOutcome, type CodexItem } from './codex-items.js';
import { findRollout, totalsBeforeLastTurns, type CodexTotals } from './codex-rollout.js';

const count = z.number().nonnegative().catch(0);

const eventSchema = z.union([
  z.object({ type: z.literal('thread.started'), thread_id: z.string() }),
  z.object({ type: z.literal('turn.started') }),
  z.object({ type: z.enum(['item.started', 'item.completed']), item: codexItemSchema }),
  z.object({
    type: z.literal('turn.completed'),
    usage: z
      .object({
        input_tokens: count.default(0),
        cached_input_tokens: count.default(0),
        output_tokens: count.default(0),
      })
      .optional(),
  }),
  z.object({ type: z.literal('turn.failed'), error: z.object({ message: z.string() }).optional() }),
  z.object({ type: z.literal('error'), message: z.string().default('') }),
]);

const totalsSchema = z.object({ inputTokens: z.number(), outputTokens: z.number() });
const apiErrorSchema = z.object({ error: z.object({ message: z.string().min(1) }) });

/**
 * The readable part of a codex error message: codex passes an API error body through verbatim
 * (`{"error":{"message":"…","type":…}}` for a 400), so its `message` is taken out; anything else is kept.
 */
export function codexErrorText(message: string): string {
  const parsed = apiErrorSchema.safeParse(parseJsonLine(message));
  return parsed.success ? parsed.data.error.message : message;
}

/** Where codex keeps its sessions for this turn: `$CODEX_HOME`, else `~/.codex` of the child's HOME. */
export function codexHomeOf(turn: Pick<CliTurn, 'childEnv'>): string {
  return turn.childEnv['CODEX_HOME'] || join(turn.childEnv['HOME'] || homedir(), '.codex');
}

function minus(a: CodexTotals, b: CodexTotals): CodexTotals {
  return {
    inputTokens: Math.max(0, a.inputTokens - b.inputTokens),
    outputTokens: Math.max(0, a.outputTokens - b.outputTokens),
  };
}

/**
 * Parses `codex exec --json` JSONL: `thread.started` (session), `item.completed` agent messages (the last
 * one is the answer), `turn.completed` usage and `turn.failed` / `error` (failure).
 *
 * Progress events: `message` (agent_message items), `tool` (an `item.started` of a command_execution,
 * file_change, mcp_tool_call or web_search, or its `item.completed` when no start was printed),
 * `tool_result` (its `item.completed`), `usage` (at each `turn.completed`, this turn's share as below),
 * `error` (`error` events, `error` items, `turn.failed`).
 *
 * A turn failed when codex said `turn.failed`, or printed an `error` with no `turn.completed` after it:
 * codex also prints `error` events for attempts it then retries (`Reconnecting... 1/5 (…)`, a cut stream,
 * a websocket fallback) and still completes the turn, which is a success.
 *
 * `turn.completed.usage` is the thread's running total, so a resumed turn reports earlier turns again. The
 * turn's own usage is the total minus the total before it: remembered in the runner's session memory after
 * each turn, else (a new process) read from the thread's rollout under `$CODEX_HOME/sessions`, else (no
 * rollout) the total is reported as it is. Codex reports no cost.
 */
export class CodexOutputParser implements OutputParser {
  readonly #turn: CliTurn | undefined;
  readonly #memory: SessionMemory | undefined;
  #sessionId: string | undefined;
  #text = '';
  #total: CodexTotals | undefined;
  #turnsStarted = 0;
  #failure: string | undefined;
  #pendingError: string | undefined;
  #isRecognised = false;
  /** Items whose `item.started` was seen (their `tool` event is out) and whose completion was not. */
  readonly #startedItems = new Set<string>();

  /** The thread's totals remembered from an earlier turn of this runner (resumed threads only). */
  readonly #remembered: CodexTotals | undefined;

  constructor(context?: ParserContext) {
    this.#turn = context?.turn;
    this.#memory = context?.memory;
    const resumed = context?.turn.sessionId;
    // Read now: this turn's own total replaces it in finish().
    this.#remembered =
      resumed === undefined ? undefined : totalsSchema.safeParse(context?.memory.get(resumed)).data;
  }

  onLine(line: string, stream: 'stdout' | 'stderr'): readonly AgentRunEvent[] {
    if (stream !== 'stdout') return [];
    const parsed = eventSchema.safeParse(parseJsonLine(line));
    if (!parsed.success) return [];
    this.#isRecognised = true;
    const ev = parsed.data;
    switch (ev.type) {
      case 'thread.started':
        this.#sessionId = ev.thread_id;
        return [{ type: 'session', sessionId: ev.thread_id }];
      case 'turn.started':
        this.#turnsStarted += 1;
        return [];
      case 'item.started': {
        const call = codexToolCall(ev.item);
        if (call === undefined) return [];
        if (ev.item.id !== undefined) this.#startedItems.add(ev.item.id);
        return [toolEvent(call)];
      }
      case 'item.completed':
        return this.#itemCompleted(ev.item);
      case 'turn.completed':
        // A completed turn outweighs the retries reported before it.
        this.#pendingError = undefined;
        // `cached_input_tokens` is a subset of `input_tokens` in codex's accounting.
        if (ev.usage === undefined) return [];
        this.#total = { inputTokens: ev.usage.input_tokens, outputTokens: ev.usage.output_tokens };
        return [{ type: 'usage', usage: this.#turnUsage(this.#total) }];
      case 'turn.failed': {
        const pending = this.#pendingError;
        this.#failure = codexErrorText(ev.error?.message ?? pending ?? 'turn failed');
        // codex prints the error that fails a turn twice, as `error` and in `turn.failed`.
        return this.#failure === pending ? [] : [{ type: 'error', message: cutText(this.#failure) }];
      }
      case 'error':
        this.#pendingError = codexErrorText(ev.message);
        return [{ type: 'error', message: cutText(this.#pendingError) }];
    }
  }

  #itemCompleted(item: CodexItem): readonly AgentRunEvent[] {
    if (item.type === 'agent_message') {
      if (item.text === undefined) return [];
      this.#text = item.text;
      return [{ type: 'message', text: item.text }];
    }
    if (item.type === 'error') return [{ type: 'error', message: cutText(item.message ?? 'error') }];
    const call = codexToolCall(item);
    if (call === undefined) return [];
    const result = toolResultEvent(codexToolOutcome(item));
    const isStarted = item.id !== undefined && this.#startedItems.delete(item.id);
    return isStarted ? [result] : [toolEvent(call), result];
  }

  finish(_output: CliOutput): ParsedOutput | null {
    if (!this.#isRecognised) return null;
    const errorMessage = this.#failure ?? this.#pendingError;
    const total = this.#total;
    const usage = total === undefined ? undefined : this.#turnUsage(total);
    if (total !== undefined && this.#sessionId !== undefined) this.#memory?.set(this.#sessionId, total);
    return {
      text: this.#text !== '' ? this.#text : (errorMessage ?? ''),
      isError: errorMessage !== undefined,
      ...(this.#sessionId !== undefined && { sessionId: this.#sessionId }),
      ...(usage !== undefined && { usage }),
      ...(errorMessage !== undefined && errorMessage !== '' && { errorMessage }),
    };
  }

  /** This turn's share of the thread's total `total`. */
  #turnUsage(total: CodexTotals): AgentUsage {
    const before =
      this.#turn?.sessionId === undefined
        ? undefined
        : (this.#remembered ?? this.#fromRollout(this.#sessionId));
    return { ...(before === undefined ? total : minus(total, before)), costUsd: 0 };
  }

  /** The resumed thread's totals before this process's turns, from its rollout file. */
  #fromRollout(id: string | undefined): CodexTotals | undefined {
    if (this.#turn === undefined || id === undefined) return undefined;
    const rollout = findRollout(codexHomeOf(this.#turn), id);
    return rollout === undefined
      ? undefined
      : totalsBeforeLastTurns(rollout, Math.max(1, this.#turnsStarted));
  }
}
