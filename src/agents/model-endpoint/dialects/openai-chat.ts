import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import type { ConversationView, ModelAction, OfferedTool, PlannedResponse } from '../conversation.js';
import { parseRequestBody, type Dialect, type DialectRequest } from '../dialect.js';
import { openaiErrorBody } from './openai-error.js';
import { sendJson } from '../model-endpoint.js';
import { SseWriter } from '../sse-writer.js';

/** Models listed on `GET /v1/models`; any name is served (opencode and copilot validate nothing against it). */
const LISTED_MODELS = ['musubi-model', 'gpt-5.1', 'gpt-5.1-mini'];
/** Tool arguments are streamed in pieces of this size, as the real API splits them. */
const ARGUMENT_CHUNK_CHARS = 4096;
const CREATED = 1_767_225_600; // 2026-01-01, a fixed `created`: the answers are deterministic but for ids
/** Whether a read request asked for the usage chunk (`stream_options.include_usage`), by its view. */
const usageWanted = new WeakMap<ConversationView, boolean>();

// Lenient on purpose: clients send many fields (max_tokens, temperature, parallel_tool_calls, provider
// extras…) that do not change the planned answer; only the shapes read below are checked.
const partSchema = z.looseObject({ type: z.string(), text: z.unknown().optional() });
const contentSchema = z.union([z.string(), z.array(partSchema), z.null()]);
const messageSchema = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
  content: contentSchema.optional(),
});
const toolSchema = z.looseObject({
  type: z.string().default('function'),
  function: z.looseObject({ name: z.string(), parameters: z.unknown().optional() }).optional(),
  custom: z.looseObject({ name: z.string() }).optional(),
});
const requestSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(messageSchema).min(1),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
  tools: z.array(toolSchema).nullish(),
  /** The legacy form of `tools`. */
  functions: z.array(z.looseObject({ name: z.string(), parameters: z.unknown().optional() })).nullish(),
  response_format: z.looseObject({ type: z.string() }).nullish(),
});
type Request = z.infer<typeof requestSchema>;
type Content = z.infer<typeof contentSchema>;

/** The text of a message's content: the string, or its text parts joined (images and files skipped). */
function textOf(content: Content | undefined): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  return content.flatMap((p) => (p.type === 'text' && typeof p.text === 'string' ? [p.text] : [])).join('\n');
}

function toolsOf(req: Request): OfferedTool[] {
  const tools: OfferedTool[] = [];
  for (const t of req.tools ?? []) {
    if (t.type === 'custom' && t.custom !== undefined) tools.push({ name: t.custom.name, kind: 'custom' });
    else if (t.function !== undefined) {
      const { name, parameters } = t.function;
      tools.push({ name, kind: 'function', ...(parameters !== undefined && { schema: parameters }) });
    }
  }
  for (const f of req.functions ?? []) {
    tools.push({
      name: f.name,
      kind: 'function',
      ...(f.parameters !== undefined && { schema: f.parameters }),
    });
  }
  return tools;
}

function wantsJson(req: Request): boolean {
  const type = req.response_format?.type;
  return type === 'json_object' || type === 'json_schema';
}

function readView(body: unknown): ConversationView {
  const req = parseRequestBody(requestSchema, body);
  const systemParts: string[] = [];
  const userTexts: string[] = [];
  let toolResults = 0;
  let lastToolOutput: string | undefined;
  for (const message of req.messages) {
    const text = textOf(message.content);
    lastToolOutput = undefined;
    switch (message.role) {
      case 'system':
      case 'developer':
        systemParts.push(text);
        break;
      case 'user':
        userTexts.push(text);
        toolResults = 0;
        break;
      case 'tool':
      case 'function':
        // One message per tool result; those after the last user text are this turn's earlier steps.
        toolResults += 1;
        lastToolOutput = text;
        break;
      case 'assistant':
        break;
    }
  }
  const view: ConversationView = {
    model: req.model,
    stream: req.stream === true,
    tools: toolsOf(req),
    systemText: systemParts.filter((s) => s !== '').join('\n'),
    userTexts,
    toolResultsSinceUser: toolResults,
    ...(lastToolOutput !== undefined && { lastToolOutput }),
    wantsJson: wantsJson(req),
    inputChars: JSON.stringify(body).length,
  };
  usageWanted.set(view, req.stream_options?.include_usage === true);
  return view;
}

/** A tool call as the API writes it: a function call with JSON arguments, or a custom tool's text input. */
function toolCall(action: Extract<ModelAction, { kind: 'tool' }>): Record<string, unknown> {
  if (action.freeform !== undefined) {
    return { id: action.callId, type: 'custom', custom: { name: action.name, input: action.freeform } };
  }
  return {
    id: action.callId,
    type: 'function',
    function: { name: action.name, arguments: JSON.stringify(action.input) },
  };
}

function usageOf(planned: PlannedResponse): Record<string, unknown> {
  const { inputTokens, outputTokens } = planned.usage;
  return {
    prompt_tokens: inputTokens,
    completion_tokens: outputTokens,
    total_tokens: inputTokens + outputTokens,
    prompt_tokens_details: { cached_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0 },
  };
}

function chunks(text: string, size: number): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length; at += size) out.push(text.slice(at, at + size));
  return out.length === 0 ? [''] : out;
}

function finishReason(action: ModelAction): 'stop' | 'tool_calls' {
  return action.kind === 'tool' ? 'tool_calls' : 'stop';
}

/** The deltas of one streamed answer: the text in one piece, or the tool call's name then its arguments. */
function deltas(action: ModelAction): Record<string, unknown>[] {
  if (action.kind !== 'tool') return [{ content: action.kind === 'text' ? action.text : '' }];
  const call = toolCall(action);
  if (action.freeform !== undefined) return [{ tool_calls: [{ index: 0, ...call }] }];
  const head = {
    index: 0,
    id: action.callId,
    type: 'function',
    function: { name: action.name, arguments: '' },
  };
  const args = chunks(JSON.stringify(action.input), ARGUMENT_CHUNK_CHARS);
  return [
    { tool_calls: [head] },
    ...args.map((a) => ({ tool_calls: [{ index: 0, function: { arguments: a } }] })),
  ];
}

function writeStream(
  res: ServerResponse,
  planned: PlannedResponse,
  view: ConversationView,
  includeUsage: boolean,
): void {
  const sse = new SseWriter(res, { isCut: planned.isCut });
  const id = `chatcmpl-${randomUUID().replace(/-/g, '').slice(0, 24)}`;
  const base = {
    id,
    object: 'chat.completion.chunk',
    created: CREATED,
    model: view.model,
    system_fingerprint: null,
  };
  // With include_usage every chunk carries `usage: null` but the last, which has no choices.
  const usageNull = includeUsage ? { usage: null } : {};
  const chunk = (delta: Record<string, unknown>, finish: string | null) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...usageNull,
  });
  sse.event(chunk({ role: 'assistant', content: '', refusal: null }, null));
  for (const delta of deltas(planned.action)) sse.event(chunk(delta, null));
  sse.event(chunk({}, finishReason(planned.action)));
  if (includeUsage) sse.event({ ...base, choices: [], usage: usageOf(planned) });
  sse.event('[DONE]');
  sse.end();
}

function completion(planned: PlannedResponse, view: ConversationView): Record<string, unknown> {
  const { action } = planned;
  const message =
    action.kind === 'tool'
      ? { role: 'assistant', content: null, refusal: null, tool_calls: [toolCall(action)] }
      : { role: 'assistant', content: action.kind === 'text' ? action.text : '', refusal: null };
  return {
    id: `chatcmpl-${randomUUID().replace(/-/g, '').slice(0, 24)}`,
    object: 'chat.completion',
    created: CREATED,
    model: view.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(action) }],
    usage: usageOf(planned),
    system_fingerprint: null,
  };
}

const MODEL_LIST = /^(\/.*)?\/models$/;

/** A model list asked by a client of another API (Anthropic, Gemini): its own dialect answers it. */
function isOtherClient(request: Pick<DialectRequest, 'headers' | 'url'>): boolean {
  const h = request.headers;
  if (
    h['anthropic-version'] !== undefined ||
    h['x-goog-api-key'] !== undefined ||
    h['x-goog-api-client'] !== undefined
  )
    return true;
  return request.url.searchParams.has('key') || /\/v1(beta|alpha)\//.test(request.url.pathname);
}

/**
 * The OpenAI Chat Completions API (opencode through `@ai-sdk/openai-compatible`, and any client of the
 * same API): `POST …/chat/completions`, streamed (SSE `chat.completion.chunk`s: the role, the text or the
 * tool call's name then its arguments, the finish reason, a usage chunk when `stream_options.include_usage`,
 * then `[DONE]`) or one `chat.completion` object, with the API's error body. `system`/`developer` messages
 * are the system text, `tool` messages after the last user message the turn's earlier steps,
 * `response_format` json the JSON wish. Side route: `GET …/models`.
 */
export const openaiChatDialect: Dialect = {
  name: 'openai-chat',
  matches: ({ method, url }) => method === 'POST' && url.pathname.endsWith('/chat/completions'),
  read: (request) => readView(request.body),
  write: (res, planned, view) => {
    if (!view.stream) return sendJson(res, 200, completion(planned, view));
    writeStream(res, planned, view, usageWanted.get(view) ?? false);
  },
  errorBody: openaiErrorBody,
  answerOther: (request, res) => {
    if (request.method !== 'GET' || !MODEL_LIST.test(request.url.pathname) || isOtherClient(request))
      return false;
    const data = LISTED_MODELS.map((id) => ({ id, object: 'model', created: CREATED, owned_by: 'musubi' }));
    sendJson(res, 200, { object: 'list', data });
    return true;
  },
};
