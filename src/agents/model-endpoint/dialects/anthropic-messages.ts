import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import type {
  ConversationView,
  MadeToolCall,
  ModelAction,
  OfferedTool,
  PlannedResponse,
} from '../conversation.js';
import { parseRequestBody, type Dialect, type DialectRequest } from '../dialect.js';
import { sendJson } from '../model-endpoint.js';
import { SseWriter } from '../sse-writer.js';

/** Models the endpoint lists on `GET /v1/models` (claude validates nothing against it; any name is served). */
const LISTED_MODELS = ['claude-opus-4-8', 'claude-sonnet-5', 'claude-haiku-4-5-20251001'];
/** Tool input is streamed in pieces of this size, as the real API splits `input_json_delta`. */
const JSON_CHUNK_CHARS = 4096;

// Lenient on purpose: the CLI sends many fields (cache_control, thinking, metadata, context_management…)
// that do not change the planned answer; only the shapes read below are checked.
const blockSchema = z.looseObject({
  type: z.string(),
  text: z.unknown().optional(),
  content: z.unknown().optional(),
  name: z.unknown().optional(),
  input: z.unknown().optional(),
});
const contentSchema = z.union([z.string(), z.array(blockSchema)]);
const requestSchema = z.looseObject({
  model: z.string().min(1),
  max_tokens: z.number().int().positive(),
  stream: z.boolean().optional(),
  system: contentSchema.optional(),
  messages: z.array(z.looseObject({ role: z.enum(['user', 'assistant', 'system']), content: contentSchema })),
  tools: z
    .array(
      z.looseObject({ name: z.string(), input_schema: z.unknown().optional(), type: z.string().optional() }),
    )
    .optional(),
  output_format: z.unknown().optional(),
  output_config: z.looseObject({ format: z.unknown().optional() }).optional(),
});
type Block = z.infer<typeof blockSchema>;
type Content = z.infer<typeof contentSchema>;

/** A text block that only carries context the CLI injected (date, CLAUDE.md, reminders), not the user's words. */
const REMINDER_ONLY = /^\s*(<system-reminder>[\s\S]*?<\/system-reminder>\s*)+$/;
const CWD_LINE = /Primary working directory:\s*(\/[^\n]+?)\s*$/m;

function blocksOf(content: Content): Block[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

function textOf(block: Block): string | undefined {
  return block.type === 'text' && typeof block.text === 'string' ? block.text : undefined;
}

/** The user's own text of a user message: text blocks without the CLI's `<system-reminder>` blocks. */
function userText(content: Content): string | undefined {
  const texts = blocksOf(content).flatMap((b) => {
    const t = textOf(b);
    return t === undefined || REMINDER_ONLY.test(t) ? [] : [t];
  });
  return texts.length === 0 ? undefined : texts.join('\n');
}

function plainText(content: Content): string {
  return blocksOf(content)
    .flatMap((b) => textOf(b) ?? [])
    .join('\n');
}

/** The tool_use blocks of an assistant message, as calls. */
function toolCallsOf(content: Content): MadeToolCall[] {
  return blocksOf(content).flatMap((b) =>
    b.type === 'tool_use' && typeof b.name === 'string' ? [{ name: b.name, input: b.input }] : [],
  );
}

function toolOutput(block: Block): string {
  const c = block.content;
  if (typeof c === 'string') return c;
  const parsed = contentSchema.safeParse(c);
  return parsed.success ? plainText(parsed.data) : '';
}

function wantsJson(body: z.infer<typeof requestSchema>): boolean {
  const format = body.output_config?.format ?? body.output_format;
  return typeof format === 'object' && format !== null;
}

function readView(body: unknown): ConversationView {
  const req = parseRequestBody(requestSchema, body);
  // claude sends some context as mid-conversation `system` messages: instructions, never user text.
  const systemParts = [req.system === undefined ? '' : plainText(req.system)];
  const userTexts: string[] = [];
  let toolResults = 0;
  let calls: MadeToolCall[] = [];
  let lastToolOutput: string | undefined;
  for (const message of req.messages) {
    if (message.role === 'system') systemParts.push(plainText(message.content));
    if (message.role === 'assistant') calls.push(...toolCallsOf(message.content));
    if (message.role !== 'user') {
      lastToolOutput = undefined;
      continue;
    }
    const results = blocksOf(message.content).filter((b) => b.type === 'tool_result');
    const text = userText(message.content);
    // The API puts tool results first in a user message; a text after them is a new prompt, so results
    // in the same message belong to the previous step, not to the turn the text starts.
    if (text !== undefined) {
      userTexts.push(text);
      toolResults = 0;
      calls = [];
    } else toolResults += results.length;
    const last = results.at(-1);
    lastToolOutput = last === undefined ? undefined : toolOutput(last);
  }
  const systemText = systemParts.filter((s) => s !== '').join('\n');
  const cwd = CWD_LINE.exec(systemText)?.[1];
  const tools: OfferedTool[] = (req.tools ?? []).map((t) => ({
    name: t.name,
    kind: 'function',
    ...(t.input_schema !== undefined && { schema: t.input_schema }),
  }));
  return {
    model: req.model,
    stream: req.stream === true,
    tools,
    systemText,
    userTexts,
    toolResultsSinceUser: toolResults,
    toolCallsSinceUser: calls,
    ...(lastToolOutput !== undefined && { lastToolOutput }),
    wantsJson: wantsJson(req),
    ...(cwd !== undefined && { cwd }),
    inputChars: JSON.stringify(body).length,
  };
}

/** The content block of a planned text or tool action (errors and hangs never reach `write`). */
function contentBlock(action: ModelAction): Record<string, unknown> {
  if (action.kind === 'tool') {
    const input = action.freeform === undefined ? action.input : { ...action.input, input: action.freeform };
    return { type: 'tool_use', id: action.callId, name: action.name, input };
  }
  return { type: 'text', text: action.kind === 'text' ? action.text : '' };
}

function usageOf(planned: PlannedResponse): Record<string, number> {
  return {
    input_tokens: planned.usage.inputTokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: planned.usage.outputTokens,
  };
}

function chunks(text: string, size: number): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length; at += size) out.push(text.slice(at, at + size));
  return out.length === 0 ? [''] : out;
}

function writeStream(res: ServerResponse, planned: PlannedResponse, message: Record<string, unknown>): void {
  const sse = new SseWriter(res, { isCut: planned.isCut });
  const usage = usageOf(planned);
  const start = {
    ...message,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { ...usage, output_tokens: 1 },
  };
  sse.event({ type: 'message_start', message: start }, 'message_start');
  const block = contentBlock(planned.action);
  const isTool = block['type'] === 'tool_use';
  sse.event(
    {
      type: 'content_block_start',
      index: 0,
      content_block: isTool ? { ...block, input: {} } : { type: 'text', text: '' },
    },
    'content_block_start',
  );
  sse.event({ type: 'ping' }, 'ping');
  const pieces = isTool ? chunks(JSON.stringify(block['input']), JSON_CHUNK_CHARS) : [String(block['text'])];
  for (const piece of pieces) {
    const delta = isTool
      ? { type: 'input_json_delta', partial_json: piece }
      : { type: 'text_delta', text: piece };
    sse.event({ type: 'content_block_delta', index: 0, delta }, 'content_block_delta');
  }
  sse.event({ type: 'content_block_stop', index: 0 }, 'content_block_stop');
  const stopReason = isTool ? 'tool_use' : 'end_turn';
  sse.event(
    { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage },
    'message_delta',
  );
  sse.event({ type: 'message_stop' }, 'message_stop');
  sse.end();
}

const ERROR_TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  503: 'overloaded_error',
  529: 'overloaded_error',
};

/** The Anthropic error `type` for an HTTP status. */
export function anthropicErrorType(status: number): string {
  return ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

function isAnthropicClient(request: Pick<DialectRequest, 'headers'>): boolean {
  return request.headers['anthropic-version'] !== undefined;
}

const countSchema = z.looseObject({ messages: z.array(z.unknown()).optional() });

/**
 * The Anthropic Messages API (claude): `POST /v1/messages`, streamed (SSE `message_start`,
 * `content_block_start/delta/stop`, `message_delta` with the stop reason and usage, `message_stop`) or
 * one message JSON. The user texts skip the `<system-reminder>` blocks claude adds to a prompt (date,
 * CLAUDE.md) and its mid-conversation `system` messages, so they hold the prompt exactly; tool_result
 * blocks after the last prompt count as the turn's earlier steps. Side routes: `POST
 * /v1/messages/count_tokens` and `GET /v1/models` (only for a client sending `anthropic-version`).
 */
export const anthropicMessagesDialect: Dialect = {
  name: 'anthropic',
  matches: ({ method, url }) => method === 'POST' && url.pathname.endsWith('/v1/messages'),
  read: (request) => readView(request.body),
  write: (res, planned, view) => {
    const message = {
      id: `msg_${randomUUID().replace(/-/g, '').slice(0, 24)}`,
      type: 'message',
      role: 'assistant',
      model: view.model,
    };
    if (view.stream) return writeStream(res, planned, message);
    const block = contentBlock(planned.action);
    sendJson(res, 200, {
      ...message,
      content: [block],
      stop_reason: block['type'] === 'tool_use' ? 'tool_use' : 'end_turn',
      stop_sequence: null,
      usage: usageOf(planned),
    });
  },
  errorBody: (status, message) => ({ type: 'error', error: { type: anthropicErrorType(status), message } }),
  answerOther: (request, res) => {
    const { pathname } = request.url;
    if (request.method === 'POST' && pathname.endsWith('/v1/messages/count_tokens')) {
      const parsed = countSchema.safeParse(request.body);
      if (!parsed.success) {
        sendJson(
          res,
          400,
          anthropicMessagesDialect.errorBody(400, 'count_tokens: body is not a messages request'),
        );
        return true;
      }
      sendJson(res, 200, { input_tokens: Math.max(1, Math.ceil(JSON.stringify(request.body).length / 4)) });
      return true;
    }
    if (request.method === 'GET' && pathname.endsWith('/v1/models') && isAnthropicClient(request)) {
      const data = LISTED_MODELS.map((id) => ({
        type: 'model',
        id,
        display_name: id,
        created_at: '2026-01-01T00:00:00Z',
      }));
      sendJson(res, 200, {
        data,
        has_more: false,
        first_id: data[0]?.id ?? null,
        last_id: data.at(-1)?.id ?? null,
      });
      return true;
    }
    return false;
  },
};
