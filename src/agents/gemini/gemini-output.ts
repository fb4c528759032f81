import { z } from 'zod';
import type { AgentRunEvent, AgentUsage } from '../agent-runner.js';
import type { CliOutput, OutputParser, ParsedOutput } from '../cli/cli-backend.js';
import { parseJsonLine } from '../cli/json-line.js';
import { cutText, toolEvent, toolResultEvent } from '../cli/tool-event.js';

const count = z.number().nonnegative().catch(0);

const tokensSchema = z.object({
  prompt: count.optional(),
  input: count.optional(),
  candidates: count.default(0),
  thoughts: count.default(0),
});

const outputSchema = z.object({
  session_id: z.string().optional(),
  response: z.string().optional(),
  stats: z
    .object({ models: z.record(z.string(), z.object({ tokens: tokensSchema.optional() })).default({}) })
    .optional(),
  error: z.object({ message: z.string().default(''), code: z.unknown().optional() }).optional(),
});
type GeminiOutput = z.infer<typeof outputSchema>;

const STDERR_TAIL_CHARS = 64 * 1024;

const errorSchema = z.object({ message: z.string().default('') });

/**
 * One line of `-o stream-json`: `init` (session), `message` (user and assistant text, the assistant's in
 * `delta` chunks), `tool_use`, `tool_result`, `error` (a warning or error the turn goes on after) and the
 * final `result` (status, error, token stats of the turn).
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
  z.object({ type: z.literal('error'), message: z.string().catch('error') }),
  z.object({
    type: z.literal('result'),
    status: z.string().catch('success'),
    error: errorSchema.optional().catch(undefined),
    stats: z
      .object({ input_tokens: count.default(0), output_tokens: count.default(0) })
      .optional()
      .catch(undefined),
  }),
]);
type StreamEvent = z.infer<typeof streamEventSchema>;

/** What the `result` line of `-o stream-json` said. */
interface StreamResult {
  readonly isError: boolean;
  readonly errorMessage?: string;
  readonly usage?: AgentUsage;
}

/** The API's own error body, which gemini puts JSON-encoded in `error.message` for an HTTP error. */
const apiErrorSchema = z.object({
  error: z.object({ message: z.string(), code: z.number().optional(), status: z.string().optional() }),
});

function parseObject(text: string): GeminiOutput | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = outputSchema.safeParse(raw);
  if (!parsed.success) return undefined;
  const out = parsed.data;
  return out.response === undefined && out.error === undefined && out.session_id === undefined
    ? undefined
    : out;
}

/** The JSON object in gemini's stdout: the whole output, else the span from the first `{` to the last `}`. */
function fromStdout(stdout: string): GeminiOutput | undefined {
  const whole = stdout.trim();
  if (whole.startsWith('{')) {
    const out = parseObject(whole);
    if (out !== undefined) return out;
  }
  const span = stdout.slice(stdout.indexOf('{'), stdout.lastIndexOf('}') + 1);
  return span.startsWith('{') ? parseObject(span) : undefined;
}

/**
 * The last gemini object in stderr, where `-o json` writes its error object (pretty-printed, after
 * warnings and stack traces that have braces of their own): tried from each line that opens an object,
 * last first, up to each line that closes one.
 */
function fromStderr(stderr: string): GeminiOutput | undefined {
  // The object is the last thing gemini writes; the tail bounds the work on a long, noisy stderr.
  const lines = stderr.slice(-STDERR_TAIL_CHARS).split(/\r?\n/);
  for (let start = lines.length - 1; start >= 0; start--) {
    if (!(lines[start] ?? '').startsWith('{')) continue;
    for (let end = start; end < lines.length; end++) {
      if (!(lines[end] ?? '').trimEnd().endsWith('}')) continue;
      const out = parseObject(lines.slice(start, end + 1).join('\n'));
      if (out !== undefined) return out;
    }
  }
  return undefined;
}

/** gemini's error message, with the API's own message unwrapped from the JSON body it embeds. */
function errorText(message: string): string {
  let raw: unknown;
  try {
    raw = JSON.parse(message);
  } catch {
    return message;
  }
  const api = apiErrorSchema.safeParse(raw);
  if (!api.success) return message;
  const { code, status } = api.data.error;
  const tag = [code, status].filter((t) => t !== undefined).join(' ');
  return tag === '' ? api.data.error.message : `${api.data.error.message} (${tag})`;
}

function streamResult(ev: Extract<StreamEvent, { type: 'result' }>): StreamResult {
  const errorMessage = ev.error === undefined ? undefined : errorText(ev.error.message);
  return {
    isError: ev.status !== 'success' || ev.error !== undefined,
    ...(errorMessage !== undefined && errorMessage !== '' && { errorMessage }),
    ...(ev.stats !== undefined && {
      usage: { inputTokens: ev.stats.input_tokens, outputTokens: ev.stats.output_tokens, costUsd: 0 },
    }),
  };
}

/**
 * Parses `gemini -o json` and `-o stream-json`.
 *
 * `-o json` prints one object at the end, so everything happens in `finish` and no progress events come
 * out. A turn that succeeded prints it on stdout; a failed one (API error, auth, dropped stream) prints
 * its error object on stderr instead, so stderr is read when stdout has none.
 *
 * `-o stream-json` prints a line per event: `init` (session), assistant `message` deltas (joined into one
 * `message` event per stretch of text), `tool_use` → `tool`, `tool_result` → `tool_result`, `error` →
 * `error`, and the final `result` (→ `usage` from its stats, `error` when it failed), which decides the
 * outcome; the answer is the assistant text of the turn.
 */
export class GeminiOutputParser implements OutputParser {
  #sessionId: string | undefined;
  #isStream = false;
  #text = '';
  /** Assistant text not yet reported as a `message` event. */
  #pendingText = '';
  #result: StreamResult | undefined;

  onLine(line: string, stream: 'stdout' | 'stderr'): readonly AgentRunEvent[] {
    if (stream !== 'stdout') return [];
    const parsed = streamEventSchema.safeParse(parseJsonLine(line));
    if (!parsed.success) return [];
    this.#isStream = true;
    const ev = parsed.data;
    if (ev.type === 'message') {
      if (ev.role === 'assistant') {
        this.#text += ev.content;
        this.#pendingText += ev.content;
      }
      return [];
    }
    const events: AgentRunEvent[] = this.#flushText();
    switch (ev.type) {
      case 'init':
        if (ev.session_id !== undefined && ev.session_id !== this.#sessionId) {
          this.#sessionId = ev.session_id;
          events.push({ type: 'session', sessionId: ev.session_id });
        }
        break;
      case 'tool_use':
        events.push(toolEvent({ name: ev.tool_name, args: ev.parameters, callId: ev.tool_id }));
        break;
      case 'tool_result':
        events.push(
          toolResultEvent({
            output: ev.output ?? ev.error?.message ?? '',
            isError: ev.status !== 'success',
            callId: ev.tool_id,
          }),
        );
        break;
      case 'error':
        events.push({ type: 'error', message: cutText(ev.message) });
        break;
      case 'result':
        this.#result = streamResult(ev);
        if (this.#result.usage !== undefined) events.push({ type: 'usage', usage: this.#result.usage });
        if (this.#result.errorMessage !== undefined)
          events.push({ type: 'error', message: cutText(this.#result.errorMessage) });
        break;
    }
    return events;
  }

  #flushText(): AgentRunEvent[] {
    const text = this.#pendingText;
    this.#pendingText = '';
    return text === '' ? [] : [{ type: 'message', text }];
  }

  finish(output: CliOutput): ParsedOutput | null {
    return this.#isStream ? this.#fromStream() : fromObject(output);
  }

  #fromStream(): ParsedOutput {
    // No result line: gemini died mid-turn, which is a failure whatever it printed before.
    const r = this.#result ?? { isError: true };
    return {
      text: this.#text !== '' ? this.#text : (r.errorMessage ?? ''),
      isError: r.isError,
      ...(r.errorMessage !== undefined && { errorMessage: r.errorMessage }),
      ...(this.#sessionId !== undefined && { sessionId: this.#sessionId }),
      ...(r.usage !== undefined && { usage: r.usage }),
    };
  }
}

/** The outcome of `-o json`: its object on stdout, else the error object on stderr. */
function fromObject({ stdout, stderr }: CliOutput): ParsedOutput | null {
  const out = fromStdout(stdout) ?? fromStderr(stderr);
  if (out === undefined) return null;
  let inputTokens = 0;
  let outputTokens = 0;
  for (const model of Object.values(out.stats?.models ?? {})) {
    inputTokens += model.tokens?.prompt ?? model.tokens?.input ?? 0;
    outputTokens += (model.tokens?.candidates ?? 0) + (model.tokens?.thoughts ?? 0);
  }
  const errorMessage = out.error === undefined ? undefined : errorText(out.error.message);
  return {
    text: out.response ?? errorMessage ?? '',
    isError: out.error !== undefined,
    ...(errorMessage !== undefined && errorMessage !== '' && { errorMessage }),
    ...(out.session_id !== undefined && { sessionId: out.session_id }),
    ...(out.stats !== undefined && { usage: { inputTokens, outputTokens, costUsd: 0 } }),
  };
}
