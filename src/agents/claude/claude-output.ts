import { z } from 'zod';
import type { AgentRunEvent, AgentUsage } from '../agent-runner.js';
import type { CliOutput, OutputParser, ParsedOutput } from '../cli/cli-backend.js';
import { parseJsonLine } from '../cli/json-line.js';
import { argsSummary, cutText, oneLine, toolEvent, toolResultEvent } from '../cli/tool-event.js';

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
  /** Tool calls refused in the turn (a permission mode that does not allow them, a question it cannot ask). */
  permission_denials: z
    .array(z.object({ tool_name: z.string(), tool_use_id: z.string().optional(), tool_input: z.unknown() }))
    .default([])
    .catch([]),
});

/** A content block of an assistant or user message: text, tool_use, tool_result (others are skipped). */
const blockSchema = z.object({
  type: z.string(),
  text: z.string().optional().catch(undefined),
  id: z.string().optional().catch(undefined),
  name: z.string().optional().catch(undefined),
  input: z.unknown().optional(),
  tool_use_id: z.string().optional().catch(undefined),
  content: z
    .union([z.string(), z.array(z.object({ type: z.string(), text: z.string().optional() }))])
    .optional()
    .catch(undefined),
  is_error: z.boolean().optional().catch(undefined),
});
type Block = z.infer<typeof blockSchema>;

/** `system/api_retry`: claude retries a failed API request (overloaded, rate limit, a cut stream). */
const retrySchema = z.object({
  type: z.literal('system'),
  subtype: z.literal('api_retry'),
  session_id: z.string().optional(),
  attempt: z.number().optional().catch(undefined),
  max_retries: z.number().optional().catch(undefined),
  retry_delay_ms: z.number().optional().catch(undefined),
  error_status: z.number().nullable().optional().catch(undefined),
  error: z.string().optional().catch(undefined),
});
type Retry = z.infer<typeof retrySchema>;

const lineSchema = z.union([
  resultSchema,
  retrySchema,
  z.object({ type: z.literal('system'), session_id: z.string().optional() }),
  z.object({
    type: z.literal('assistant'),
    session_id: z.string().optional(),
    message: z.object({
      id: z.string().optional().catch(undefined),
      content: z.array(blockSchema).default([]),
      usage: usageSchema.optional().catch(undefined),
    }),
  }),
  z.object({
    type: z.literal('user'),
    session_id: z.string().optional(),
    message: z.object({ content: z.union([z.string(), z.array(blockSchema)]).catch([]) }),
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

/** The text of a tool_result block: a string, or text blocks (others named by their type). */
function resultText(content: Block['content']): string {
  if (content === undefined) return '';
  if (typeof content === 'string') return content;
  return content.map((c) => (c.type === 'text' ? (c.text ?? '') : `[${c.type}]`)).join('\n');
}

function retryMessage(r: Retry): string {
  const status = r.error_status === undefined || r.error_status === null ? '' : ` (HTTP ${r.error_status})`;
  const attempt =
    r.attempt === undefined ? '' : ` ${r.attempt}${r.max_retries === undefined ? '' : `/${r.max_retries}`}`;
  const delay = r.retry_delay_ms === undefined ? '' : ` in ${r.retry_delay_ms} ms`;
  return `API request failed: ${r.error ?? 'unknown error'}${status}; retry${attempt}${delay}`;
}

const questionsSchema = z.object({ questions: z.array(z.object({ question: z.string() })).min(1) });
const planSchema = z.object({ plan: z.string() });

type Denial = Result['permission_denials'][number];

/**
 * A refused tool call: a question (`AskUserQuestion`) or a plan to approve (`ExitPlanMode`) leaves the
 * agent waiting for an answer; any other tool is an error the turn went on after.
 */
function denialEvent(denial: Denial): AgentRunEvent {
  const questions = questionsSchema.safeParse(denial.tool_input);
  if (questions.success)
    return { type: 'waiting', question: cutText(questions.data.questions.map((q) => q.question).join('\n')) };
  const plan = planSchema.safeParse(denial.tool_input);
  if (plan.success) return { type: 'waiting', question: cutText(`Approve this plan?\n${plan.data.plan}`) };
  const what = argsSummary(denial.tool_input);
  const detail = what === undefined ? '' : `: ${oneLine(what)}`;
  return { type: 'error', message: `permission denied for ${denial.tool_name}${detail}` };
}

/**
 * Parses claude's `stream-json` lines (system init and api_retry, assistant messages with text and
 * tool_use, user messages with tool results, one final result) and also the single object of
 * `--output-format json`. The final result decides text, session, usage and failure; on `is_error` its
 * text is the error message.
 *
 * Progress events: `message` (assistant text), `tool` (tool_use blocks), `tool_result` (tool_result
 * blocks of user messages), `usage` (the assistant messages' usage summed so far; claude reports no cost
 * before the result), `error` (api_retry, refused tools of the result) and `waiting` (a refused question
 * or plan approval, which `-p` cannot ask).
 */
export class ClaudeOutputParser implements OutputParser {
  #sessionId: string | undefined;
  #lastAssistantText = '';
  #result: Result | undefined;
  /** Tokens per assistant message id: claude prints a message once per content block, usage repeated. */
  readonly #messageTokens = new Map<string, { inputTokens: number; outputTokens: number }>();

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
      for (const block of msg.message.content)
        if (block.type === 'tool_use' && block.name !== undefined)
          events.push(toolEvent({ name: block.name, args: block.input, callId: block.id }));
      const usage = this.#addUsage(msg.message.id, msg.message.usage);
      if (usage !== undefined) events.push({ type: 'usage', usage });
    } else if (msg.type === 'user') {
      if (typeof msg.message.content !== 'string')
        for (const block of msg.message.content)
          if (block.type === 'tool_result')
            events.push(
              toolResultEvent({
                output: resultText(block.content),
                isError: block.is_error ?? false,
                callId: block.tool_use_id,
              }),
            );
    } else if (msg.type === 'result') {
      this.#result = msg;
      events.push(...msg.permission_denials.map(denialEvent));
    } else if (msg.type === 'system' && 'subtype' in msg) {
      events.push({ type: 'error', message: retryMessage(msg) });
    }
    return events;
  }

  /** Records one assistant message's usage; the new running total, or undefined when unchanged. */
  #addUsage(id: string | undefined, usage: Result['usage']): AgentUsage | undefined {
    if (usage === undefined) return undefined;
    const tokens = {
      inputTokens: usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens,
      outputTokens: usage.output_tokens,
    };
    const key = id ?? `#${this.#messageTokens.size}`;
    const before = this.#messageTokens.get(key);
    if (before?.inputTokens === tokens.inputTokens && before.outputTokens === tokens.outputTokens)
      return undefined;
    this.#messageTokens.set(key, tokens);
    let inputTokens = 0;
    let outputTokens = 0;
    for (const t of this.#messageTokens.values()) {
      inputTokens += t.inputTokens;
      outputTokens += t.outputTokens;
    }
    return { inputTokens, outputTokens, costUsd: 0 };
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
