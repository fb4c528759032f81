import { z } from 'zod';
import type { AgentRunEvent, AgentUsage } from '../agent-runner.js';
import type { CliOutput, OutputParser, ParsedOutput } from '../cli/cli-backend.js';
import { parseJsonLine } from '../cli/json-line.js';
import { cutText, toolEvent, toolResultEvent } from '../cli/tool-event.js';
import { errorText, fromJsonOutput, STDERR_TAIL_CHARS } from './gemini-json-output.js';

const count = z.number().nonnegative().catch(0);

const errorSchema = z.object({ message: z.string().default('') });

/** Token counts of a stream-json `result`, for the whole turn and per model. */
const streamTokensSchema = z.object({
  input_tokens: count.default(0),
  output_tokens: count.default(0),
  total_tokens: count.default(0),
});
const streamStatsSchema = streamTokensSchema.extend({
  models: z.record(z.string(), streamTokensSchema).optional().catch(undefined),
});
type StreamStats = z.infer<typeof streamStatsSchema>;

/**
 * One line of `-o stream-json` (recorded: test/fakes/recorded/gemini/tool.stream.jsonl): `init` (session),
 * `message` (the user's prompt, then the assistant's text in `delta` chunks), `tool_use`, `tool_result`
 * (`output` only when the tool's display is text: none for write_file), `error` (a `warning`, or with
 * severity `error` the reason an invalid stream fails the turn) and the final `result` (status, error,
 * token stats of the turn).
 */
const streamEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('init'), session_id: z.string().optional().catch(undefined) }),
  z.object({ type: z.literal('message'), role: z.string().catch(''), content: z.string().catch('') }),
  z.object({
    type: z.literal('tool_use'),
    tool_name: z.string(),
    tool_id: z.string().optional().catch(undefined),
    parameters: z.unknown(),
  }),
  z.object({
    type: z.literal('tool_result'),
    tool_id: z.string().optional().catch(undefined),
    status: z.string().catch('success'),
    output: z.string().optional().catch(undefined),
    error: errorSchema.optional().catch(undefined),
  }),
  z.object({
    type: z.literal('error'),
    severity: z.string().catch('error'),
    message: z.string().catch('error'),
  }),
  z.object({
    type: z.literal('result'),
    status: z.string().catch('success'),
    error: errorSchema.optional().catch(undefined),
    stats: streamStatsSchema.optional().catch(undefined),
  }),
]);
type StreamEvent = z.infer<typeof streamEventSchema>;

/** What the `result` line of `-o stream-json` said. */
interface StreamResult {
  readonly isError: boolean;
  /** The error gemini raised (its `error`): the turn's answer is then this message, as with `-o json`. */
  readonly hasError: boolean;
  readonly errorMessage?: string;
  readonly usage?: AgentUsage;
}

/**
 * stream-json's wrapping of every error it reports through its error handler (API errors, a dropped
 * stream's `terminated`): `[API Error: <the message -o json reports>]`, with a hint line after it for a 429.
 */
const API_ERROR_WRAPPED = /^\[API Error: ([\s\S]*)\](?:\n[\s\S]*)?$/;

/** gemini's exit code for a failed auth check (no key, an unknown auth type). */
const AUTH_FAILED_EXIT_CODE = 41;
/** What gemini writes to stderr while it loads its config, before it checks auth. */
const STARTUP_NOTICE = /^(YOLO mode is enabled|Approval mode overridden|Warning: |\[STARTUP\] )/;

/** An error message of a stream-json `result`, in the words `-o json` reports it. */
function streamErrorText(message: string): string {
  return errorText(API_ERROR_WRAPPED.exec(message)?.[1] ?? message);
}

/**
 * The turn's usage from a `result`'s stats, counted as `-o json` counts its stats. Its `output_tokens`
 * are the candidates only, without the thinking tokens that `-o json` adds (`tokens.thoughts`, billed as
 * output); those are in `total_tokens` (the API's totalTokenCount: prompt, candidates, thoughts and any
 * tool-use prompt), so a model's output is what its total has beyond its input. Counted per model, so a
 * model whose API reported no total (0) does not hide another's thoughts.
 */
function streamUsage(stats: StreamStats): AgentUsage {
  const models = Object.values(stats.models ?? {});
  let inputTokens = 0;
  let outputTokens = 0;
  for (const t of models.length > 0 ? models : [stats]) {
    inputTokens += t.input_tokens;
    outputTokens += Math.max(t.output_tokens, t.total_tokens - t.input_tokens);
  }
  return { inputTokens, outputTokens, costUsd: 0 };
}

/**
 * What a `result` line said. A failed result without an `error` is an invalid stream, whose reason came
 * just before as an `error` line of severity `error` (`-o json` puts that reason in its `error`).
 */
function streamResult(ev: Extract<StreamEvent, { type: 'result' }>, lastError?: string): StreamResult {
  const isError = ev.status !== 'success' || ev.error !== undefined;
  const errorMessage =
    ev.error !== undefined ? streamErrorText(ev.error.message) : isError ? lastError : undefined;
  return {
    isError,
    hasError: ev.error !== undefined,
    ...(errorMessage !== undefined && errorMessage !== '' && { errorMessage }),
    ...(ev.stats !== undefined && { usage: streamUsage(ev.stats) }),
  };
}

/**
 * Parses `gemini -o stream-json` and `-o json`.
 *
 * `-o stream-json` prints a line per event: `init` (session), assistant `message` deltas (joined into one
 * `message` event per stretch of text), `tool_use` → `tool`, `tool_result` → `tool_result`, `error` →
 * `error`, and the final `result` (→ `usage` from its stats, `error` when it failed), which decides the
 * outcome. The answer is what `-o json` answers: the text of the turn's last model request (the one after
 * the last tool results), or the error gemini raised. A failed auth check comes before any line: gemini
 * then writes only its message to stderr and exits with 41.
 *
 * `-o json` ({@link fromJsonOutput}) prints one object at the end, so everything happens in `finish`
 * and no progress events come out.
 */
export class GeminiOutputParser implements OutputParser {
  #sessionId: string | undefined;
  #isStream = false;
  /** The assistant text of the current model request (gemini starts a new one after tool results). */
  #text = '';
  /** Tool results came after the last assistant text: the next text starts a new model request. */
  #hasToolResults = false;
  /** Assistant text not yet reported as a `message` event. */
  #pendingText = '';
  /** The last `error` line of severity `error`. */
  #lastError: string | undefined;
  #result: StreamResult | undefined;

  onLine(line: string, stream: 'stdout' | 'stderr'): readonly AgentRunEvent[] {
    if (stream !== 'stdout') return [];
    const parsed = streamEventSchema.safeParse(parseJsonLine(line));
    if (!parsed.success) return [];
    this.#isStream = true;
    const ev = parsed.data;
    if (ev.type === 'message') {
      if (ev.role === 'assistant') this.#addText(ev.content);
      return [];
    }
    return [...this.#flushText(), ...this.#eventsOf(ev)];
  }

  #addText(text: string): void {
    if (this.#hasToolResults) {
      this.#text = '';
      this.#hasToolResults = false;
    }
    this.#text += text;
    this.#pendingText += text;
  }

  #eventsOf(ev: Exclude<StreamEvent, { type: 'message' }>): AgentRunEvent[] {
    switch (ev.type) {
      case 'init':
        if (ev.session_id === undefined || ev.session_id === this.#sessionId) return [];
        this.#sessionId = ev.session_id;
        return [{ type: 'session', sessionId: ev.session_id }];
      case 'tool_use':
        return [toolEvent({ name: ev.tool_name, args: ev.parameters, callId: ev.tool_id })];
      case 'tool_result':
        this.#hasToolResults = true;
        return [
          toolResultEvent({
            output: ev.output ?? ev.error?.message ?? '',
            isError: ev.status !== 'success',
            callId: ev.tool_id,
          }),
        ];
      case 'error':
        if (ev.severity === 'error') this.#lastError = ev.message;
        return [{ type: 'error', message: cutText(ev.message) }];
      case 'result': {
        const result = streamResult(ev, this.#lastError);
        this.#result = result;
        const events: AgentRunEvent[] = [];
        if (result.usage !== undefined) events.push({ type: 'usage', usage: result.usage });
        // An invalid stream's reason was already reported by its own `error` line.
        if (result.hasError && result.errorMessage !== undefined)
          events.push({ type: 'error', message: cutText(result.errorMessage) });
        return events;
      }
    }
  }

  #flushText(): AgentRunEvent[] {
    const text = this.#pendingText;
    this.#pendingText = '';
    return text === '' ? [] : [{ type: 'message', text }];
  }

  finish(output: CliOutput): ParsedOutput | null {
    return this.#isStream ? this.#fromStream() : (fromJsonOutput(output) ?? fromAuthFailure(output));
  }

  #fromStream(): ParsedOutput {
    // No result line: gemini died mid-turn, which is a failure whatever it printed before.
    const r = this.#result ?? { isError: true, hasError: false };
    return {
      text: r.hasError ? (r.errorMessage ?? '') : this.#text,
      isError: r.isError,
      ...(r.errorMessage !== undefined && { errorMessage: r.errorMessage }),
      ...(this.#sessionId !== undefined && { sessionId: this.#sessionId }),
      ...(r.usage !== undefined && { usage: r.usage }),
    };
  }
}

/**
 * A failed auth check of `-o stream-json` (exit code 41, no line on stdout): its message is what stderr
 * holds besides the startup notices (`-o json` reports it in an error object, with the id of a session
 * that never started and cannot be resumed).
 */
function fromAuthFailure({ stderr, exitCode }: CliOutput): ParsedOutput | null {
  if (exitCode !== AUTH_FAILED_EXIT_CODE) return null;
  const message = stderr
    .slice(-STDERR_TAIL_CHARS)
    .split(/\r?\n/)
    .filter((l) => l.trim() !== '' && !STARTUP_NOTICE.test(l))
    .join('\n')
    .trim();
  return message === '' ? null : { text: message, isError: true, errorMessage: message };
}
