import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import type { ConversationView, ModelAction, OfferedTool, PlannedResponse } from '../conversation.js';
import { parseRequestBody, type Dialect, type DialectRequest } from '../dialect.js';
import { openaiErrorBody } from './openai-error.js';
import { sendJson } from '../model-endpoint.js';
import { SseWriter } from '../sse-writer.js';
import { codeModeScript, codeModeTools } from './codex-code-mode.js';

/*
 * The OpenAI Responses API (`POST /v1/responses`) as codex 0.171 speaks it: the system prompt arrives as
 * `developer` messages (codex sends no `instructions`), AGENTS.md and `<environment_context>` as extra user
 * messages before the prompt, tool results as `function_call_output` / `custom_tool_call_output` items, and
 * the answer is always streamed (SSE with named events). Its free-form `apply_patch` is a `custom` tool
 * whose call is a `custom_tool_call` item carrying the patch text in `input`.
 */

const textPart = z.looseObject({ type: z.string().optional(), text: z.string().optional() });
const content = z.union([z.string(), z.array(textPart)]).optional();

const inputItem = z.looseObject({
  type: z.string().optional(),
  role: z.string().optional(),
  content,
  output: z.unknown().optional(),
});

const tool = z.looseObject({
  type: z.string(),
  name: z.string().optional(),
  parameters: z.unknown().optional(),
});

const bodySchema = z.looseObject({
  model: z.string().min(1, 'model is required'),
  input: z.union([z.string(), z.array(inputItem)]),
  instructions: z.string().nullish(),
  stream: z.boolean().nullish(),
  tools: z.array(tool).nullish(),
  text: z.looseObject({ format: z.looseObject({ type: z.string() }).optional() }).nullish(),
});

type InputItem = z.infer<typeof inputItem>;

const TOOL_RESULT_TYPES = new Set([
  'function_call_output',
  'custom_tool_call_output',
  'local_shell_call_output',
]);
const CWD = /<environment_context>[\s\S]*?<cwd>\s*([^<\n]+?)\s*<\/cwd>/;
/** Views of code-mode requests, whose tool calls are written as `exec` scripts (see codex-code-mode.ts). */
const CODE_MODE = new WeakSet<ConversationView>();

function textOf(c: InputItem['content']): string {
  if (c === undefined) return '';
  if (typeof c === 'string') return c;
  return c.flatMap((p) => (p.text !== undefined ? [p.text] : [])).join('\n');
}

function stringOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value))
    return value.map((p: unknown) => textPart.safeParse(p).data?.text ?? '').join('\n');
  return JSON.stringify(value) ?? '';
}

/** A message item: typed `message`, or the short form with a role and no type. */
function isMessage(item: InputItem): boolean {
  return item.type === 'message' || (item.type === undefined && item.role !== undefined);
}

function offeredTools(tools: readonly z.infer<typeof tool>[]): OfferedTool[] {
  return tools.flatMap((t): OfferedTool[] => {
    if (t.name === undefined) return [];
    if (t.type === 'function') return [{ name: t.name, schema: t.parameters, kind: 'function' }];
    if (t.type === 'custom') return [{ name: t.name, kind: 'custom' }];
    // Hosted tools (web_search, tool_search) and namespaces cannot be called by a scripted model.
    return [];
  });
}

function read(body: unknown): ConversationView {
  const b = parseRequestBody(bodySchema, body);
  const items: InputItem[] =
    typeof b.input === 'string' ? [{ type: 'message', role: 'user', content: b.input }] : b.input;
  const system: string[] = b.instructions ? [b.instructions] : [];
  const userTexts: string[] = [];
  let toolResultsSinceUser = 0;
  let lastToolOutput: string | undefined;
  let cwd: string | undefined;
  for (const item of items) {
    if (isMessage(item)) {
      const text = textOf(item.content);
      if (item.role === 'developer' || item.role === 'system') system.push(text);
      else if (item.role === 'user') {
        userTexts.push(text);
        toolResultsSinceUser = 0;
        lastToolOutput = undefined;
        cwd = CWD.exec(text)?.[1] ?? cwd;
      } else lastToolOutput = undefined;
    } else if (item.type !== undefined && TOOL_RESULT_TYPES.has(item.type)) {
      toolResultsSinceUser += 1;
      lastToolOutput = stringOf(item.output);
    }
  }
  const format = b.text?.format?.type;
  const codeMode = codeModeTools(items);
  const view: ConversationView = {
    model: b.model,
    stream: b.stream === true,
    tools: [...offeredTools(b.tools ?? []), ...(codeMode ?? [])],
    systemText: system.join('\n\n'),
    userTexts,
    toolResultsSinceUser,
    ...(lastToolOutput !== undefined && { lastToolOutput }),
    wantsJson: format === 'json_schema' || format === 'json_object',
    ...(cwd !== undefined && { cwd }),
    inputChars:
      JSON.stringify(b.input).length + (b.instructions?.length ?? 0) + JSON.stringify(b.tools ?? []).length,
  };
  if (codeMode !== undefined) CODE_MODE.add(view);
  return view;
}

function shortId(prefix: string): string {
  return `${prefix}_${randomUUID().replace(/-/g, '')}`;
}

/** The output item of an action (text or tool; errors and hangs never get here). */
function outputItem(action: ModelAction, view: ConversationView): Record<string, unknown> {
  if (action.kind === 'tool' && CODE_MODE.has(view)) {
    const input = codeModeScript(action);
    return {
      type: 'custom_tool_call',
      id: shortId('ctc'),
      status: 'completed',
      call_id: action.callId,
      name: 'exec',
      input,
    };
  }
  if (action.kind === 'tool' && action.freeform !== undefined) {
    return {
      type: 'custom_tool_call',
      id: shortId('ctc'),
      status: 'completed',
      call_id: action.callId,
      name: action.name,
      input: action.freeform,
    };
  }
  if (action.kind === 'tool') {
    const args = JSON.stringify(action.input);
    return {
      type: 'function_call',
      id: shortId('fc'),
      status: 'completed',
      call_id: action.callId,
      name: action.name,
      arguments: args,
    };
  }
  const text = action.kind === 'text' ? action.text : '';
  return {
    type: 'message',
    id: shortId('msg'),
    status: 'completed',
    role: 'assistant',
    content: [{ type: 'output_text', text, annotations: [] }],
  };
}

function usageOf(planned: PlannedResponse): Record<string, unknown> {
  const { inputTokens, outputTokens } = planned.usage;
  return {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: inputTokens + outputTokens,
  };
}

function responseObject(
  id: string,
  view: ConversationView,
  status: string,
  output: unknown[],
  usage: unknown,
): Record<string, unknown> {
  return {
    id,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status,
    model: view.model,
    output,
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
    usage,
    error: null,
    incomplete_details: null,
  };
}

/** The stream of one answer: created, the item with its deltas, completed (what codex waits for). */
function stream(res: ServerResponse, planned: PlannedResponse, view: ConversationView): void {
  const sse = new SseWriter(res, { isCut: planned.isCut });
  let seq = 0;
  const send = (type: string, data: Record<string, unknown>): void =>
    sse.event({ type, sequence_number: seq++, ...data }, type);
  const id = shortId('resp');
  const item = outputItem(planned.action, view);
  const itemId = item['id'];
  send('response.created', { response: responseObject(id, view, 'in_progress', [], null) });
  send('response.in_progress', { response: responseObject(id, view, 'in_progress', [], null) });
  const at = { output_index: 0 };
  if (item['type'] === 'message') {
    const text = planned.action.kind === 'text' ? planned.action.text : '';
    send('response.output_item.added', { ...at, item: { ...item, status: 'in_progress', content: [] } });
    const part = { item_id: itemId, ...at, content_index: 0 };
    send('response.content_part.added', {
      ...part,
      part: { type: 'output_text', text: '', annotations: [] },
    });
    send('response.output_text.delta', { ...part, delta: text });
    send('response.output_text.done', { ...part, text });
    send('response.content_part.done', { ...part, part: { type: 'output_text', text, annotations: [] } });
  } else if (item['type'] === 'function_call') {
    send('response.output_item.added', { ...at, item: { ...item, status: 'in_progress', arguments: '' } });
    send('response.function_call_arguments.delta', { item_id: itemId, ...at, delta: item['arguments'] });
    send('response.function_call_arguments.done', { item_id: itemId, ...at, arguments: item['arguments'] });
  } else {
    send('response.output_item.added', { ...at, item: { ...item, status: 'in_progress', input: '' } });
    send('response.custom_tool_call_input.delta', { item_id: itemId, ...at, delta: item['input'] });
    send('response.custom_tool_call_input.done', { item_id: itemId, ...at, input: item['input'] });
  }
  send('response.output_item.done', { ...at, item });
  send('response.completed', { response: responseObject(id, view, 'completed', [item], usageOf(planned)) });
  sse.end();
}

/** A websocket upgrade of the Responses route (codex's built-in OpenAI provider tries one first). */
function isWebsocketUpgrade(request: DialectRequest): boolean {
  const upgrade = request.headers.upgrade;
  return (
    request.method === 'GET' &&
    request.url.pathname.endsWith('/responses') &&
    /websocket/i.test(String(upgrade ?? ''))
  );
}

/**
 * The OpenAI Responses API: `POST …/responses`, streamed or not, with the API's error body. A websocket
 * upgrade of the same route is refused with 426 Upgrade Required, on which codex falls back to HTTP at
 * once (a 404 or a dropped socket costs it five retries first). codex 0.171 asks for nothing else: no
 * `/models`, and with the wiring of codex-wiring.ts no websocket either.
 */
export const openaiResponsesDialect: Dialect = {
  name: 'openai-responses',
  matches: ({ method, url }) => method === 'POST' && url.pathname.endsWith('/responses'),
  read: (request) => read(request.body),
  write: (res, planned, view) => {
    if (view.stream) return stream(res, planned, view);
    const id = shortId('resp');
    sendJson(
      res,
      200,
      responseObject(id, view, 'completed', [outputItem(planned.action, view)], usageOf(planned)),
    );
  },
  errorBody: openaiErrorBody,
  answerOther: (request, res) => {
    if (!isWebsocketUpgrade(request)) return false;
    sendJson(res, 426, openaiErrorBody(426, 'musubi model endpoint: websockets are not supported, use HTTP'));
    return true;
  },
};
