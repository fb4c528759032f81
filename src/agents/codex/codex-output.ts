import { z } from 'zod';
import type { AgentRunEvent, AgentUsage } from '../agent-runner.js';
import type { CliOutput, OutputParser, ParsedOutput } from '../cli/cli-backend.js';
import { parseJsonLine } from '../cli/json-line.js';

const count = z.number().nonnegative().catch(0);

const eventSchema = z.union([
  z.object({ type: z.literal('thread.started'), thread_id: z.string() }),
  z.object({
    type: z.literal('item.completed'),
    item: z.object({ type: z.string(), text: z.string().optional() }),
  }),
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

/**
 * Parses `codex exec --json` JSONL: `thread.started` (session), `item.completed` agent messages (the
 * last one is the answer), `turn.completed` usage (summed over turns; codex reports no cost) and
 * `turn.failed` / `error` (failure).
 */
export class CodexOutputParser implements OutputParser {
  #sessionId: string | undefined;
  #text = '';
  #usage: { inputTokens: number; outputTokens: number } | undefined;
  #error: string | undefined;
  #isRecognised = false;

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
      case 'item.completed':
        if (ev.item.type !== 'agent_message' || ev.item.text === undefined) return [];
        this.#text = ev.item.text;
        return [{ type: 'message', text: ev.item.text }];
      case 'turn.completed': {
        const u = ev.usage;
        if (u === undefined) return [];
        const prev = this.#usage ?? { inputTokens: 0, outputTokens: 0 };
        // `cached_input_tokens` is a subset of `input_tokens` in codex's accounting.
        this.#usage = {
          inputTokens: prev.inputTokens + u.input_tokens,
          outputTokens: prev.outputTokens + u.output_tokens,
        };
        return [];
      }
      case 'turn.failed':
        this.#error = ev.error?.message ?? 'turn failed';
        return [];
      case 'error':
        this.#error = ev.message;
        return [];
    }
  }

  finish(_output: CliOutput): ParsedOutput | null {
    if (!this.#isRecognised) return null;
    const usage: AgentUsage | undefined = this.#usage && { ...this.#usage, costUsd: 0 };
    return {
      text: this.#text !== '' ? this.#text : (this.#error ?? ''),
      isError: this.#error !== undefined,
      ...(this.#sessionId !== undefined && { sessionId: this.#sessionId }),
      ...(usage !== undefined && { usage }),
    };
  }
}
