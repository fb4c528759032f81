import { z } from 'zod';
import type { AgentRunEvent, AgentUsage } from '../agent-runner.js';
import type { CliOutput, OutputParser, ParsedOutput } from '../cli/cli-backend.js';
import { parseJsonLine } from '../cli/json-line.js';

const count = z.number().nonnegative().catch(0);

const usageSchema = z.object({
  input_tokens: count.default(0),
  output_tokens: count.default(0),
  cache_creation_input_tokens: count.default(0),
  cache_read_input_tokens: count.default(0),
});

/** Per-model totals of the invocation (`modelUsage`); camelCase, unlike `usage`. */
const modelUsageSchema = z.object({
  inputTokens: count.default(0),
  outputTokens: count.default(0),
  cacheReadInputTokens: count.default(0),
  cacheCreationInputTokens: count.default(0),
});

const resultSchema = z.object({
  type: z.literal('result'),
  is_error: z.boolean().default(false),
  result: z.string().default(''),
  session_id: z.string().optional(),
  total_cost_usd: z.number().nonnegative().optional(),
  usage: usageSchema.optional(),
  modelUsage: z.record(z.string(), modelUsageSchema).optional().catch(undefined),
});

const lineSchema = z.union([
  resultSchema,
  z.object({ type: z.literal('system'), session_id: z.string().optional() }),
  z.object({
    type: z.literal('assistant'),
    session_id: z.string().optional(),
    message: z.object({
      content: z.array(z.object({ type: z.string(), text: z.string().optional() })).default([]),
    }),
  }),
]);

type Result = z.infer<typeof resultSchema>;

/**
 * This invocation's tokens (claude reports per invocation, also after `--resume`). `modelUsage` is
 * preferred: after a dropped stream claude retries without streaming and that answer is missing from
 * `usage` (all zeros) but counted in `modelUsage` and the cost.
 */
function toUsage(r: Result): AgentUsage | undefined {
  const models = Object.values(r.modelUsage ?? {});
  const costUsd = r.total_cost_usd;
  if (models.length > 0) {
    return {
      inputTokens: models.reduce(
        (n, m) => n + m.inputTokens + m.cacheReadInputTokens + m.cacheCreationInputTokens,
        0,
      ),
      outputTokens: models.reduce((n, m) => n + m.outputTokens, 0),
      costUsd: costUsd ?? 0,
    };
  }
  const usage = r.usage;
  if (usage === undefined && costUsd === undefined) return undefined;
  const u = usage ?? {
    input_tokens: 0,
    output_tokens: 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
  return {
    // Cache writes and reads are input the model processed; budgets count them as input tokens.
    inputTokens: u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens,
    outputTokens: u.output_tokens,
    costUsd: costUsd ?? 0,
  };
}

/**
 * Parses claude's `stream-json` lines (system init and api_retry, assistant messages with text and
 * tool_use, user messages with tool results, one final result) and also the single object of
 * `--output-format json`. The final result decides text, session, usage and failure; on `is_error` its
 * text is the error message.
 */
export class ClaudeOutputParser implements OutputParser {
  #sessionId: string | undefined;
  #lastAssistantText = '';
  #result: Result | undefined;

  onLine(line: string, stream: 'stdout' | 'stderr'): readonly AgentRunEvent[] {
    if (stream !== 'stdout') return [];
    const parsed = lineSchema.safeParse(parseJsonLine(line));
    if (!parsed.success) return [];
    const msg = parsed.data;
    const events: AgentRunEvent[] = [];
    if (msg.session_id !== undefined && msg.session_id !== this.#sessionId) {
      this.#sessionId = msg.session_id;
      events.push({ type: 'session', sessionId: msg.session_id });
    }
    if (msg.type === 'assistant') {
      const text = msg.message.content.flatMap((c) => (c.type === 'text' && c.text ? [c.text] : [])).join('');
      if (text !== '') {
        this.#lastAssistantText = text;
        events.push({ type: 'message', text });
      }
    } else if (msg.type === 'result') {
      this.#result = msg;
    }
    return events;
  }

  finish({ stdout }: CliOutput): ParsedOutput | null {
    // `--output-format json` prints one object, possibly without a trailing newline: parse it whole.
    if (this.#result === undefined && this.#sessionId === undefined) this.onLine(stdout, 'stdout');
    const r = this.#result;
    if (r === undefined) {
      if (this.#sessionId === undefined) return null;
      return { text: this.#lastAssistantText, sessionId: this.#sessionId, isError: true };
    }
    const sessionId = r.session_id ?? this.#sessionId;
    const usage = toUsage(r);
    // On is_error the result text is claude's own error line ("API Error: 400 …", "Invalid API key · …").
    const errorMessage = r.is_error ? r.result || this.#lastAssistantText : '';
    return {
      text: r.result,
      isError: r.is_error,
      ...(sessionId !== undefined && { sessionId }),
      ...(usage !== undefined && { usage }),
      ...(errorMessage !== '' && { errorMessage }),
    };
  }
}
