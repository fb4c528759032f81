import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import type { ConversationView, ModelAction, OfferedTool, PlannedResponse } from '../conversation.js';
import { parseRequestBody, type Dialect, type DialectRequest } from '../dialect.js';
import { SseWriter } from '../sse-writer.js';
import { sendJson } from '../model-endpoint.js';

/** Models the endpoint lists on `GET /v1beta/models` (gemini 0.61 validates nothing against it). */
const LISTED_MODELS = [
  'gemini-3.1-pro-preview',
  'gemini-3-flash-preview',
  'gemini-2.5-pro',
  'gemini-3.5-flash',
];
const GENERATE = /\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;
const COUNT_TOKENS = /\/models\/[^/:]+:countTokens$/;
const MODEL_LIST = /^\/v1(beta|alpha)?\/models$/;
const MODEL_GET = /^\/v1(beta|alpha)?\/models\/([^/:]+)$/;
/** A text part that only carries the context gemini injects (date, OS, folder tree), not the user's words. */
const CONTEXT_ONLY = /^\s*<session_context>[\s\S]*<\/session_context>\s*$/;
/** Where gemini names its working directory in that context. */
const WORKSPACE_DIR = /\*\*Workspace Directories:\*\*\s*\n\s*-\s*(\/[^\n]+?)\s*$/m;

// Lenient on purpose: gemini sends fields (thoughtSignature, thinkingConfig, safety settings…) that do not
// change the planned answer; only the shapes read below are checked.
const partSchema = z.looseObject({
  text: z.string().optional(),
  thought: z.boolean().optional(),
  functionCall: z.looseObject({ name: z.string(), args: z.unknown().optional() }).optional(),
  functionResponse: z
    .looseObject({ name: z.string().optional(), response: z.unknown().optional() })
    .optional(),
});
const contentSchema = z.looseObject({ role: z.string().optional(), parts: z.array(partSchema).default([]) });
const requestSchema = z.looseObject({
  contents: z.array(contentSchema),
  systemInstruction: z.union([z.string(), contentSchema]).optional(),
  tools: z
    .array(
      z.looseObject({
        functionDeclarations: z
          .array(
            z.looseObject({
              name: z.string(),
              parameters: z.unknown().optional(),
              parametersJsonSchema: z.unknown().optional(),
            }),
          )
          .optional(),
      }),
    )
    .optional(),
  generationConfig: z
    .looseObject({
      responseMimeType: z.string().optional(),
      responseSchema: z.unknown().optional(),
      responseJsonSchema: z.unknown().optional(),
    })
    .optional(),
});
type Part = z.infer<typeof partSchema>;
type Request = z.infer<typeof requestSchema>;

function textOfParts(parts: readonly Part[]): string[] {
  return parts.flatMap((p) => (typeof p.text === 'string' && p.thought !== true ? [p.text] : []));
}

function responseText(response: unknown): string {
  if (typeof response !== 'object' || response === null) return JSON.stringify(response ?? '');
  const r: Record<string, unknown> = { ...response };
  const output = r['output'] ?? r['error'];
  return typeof output === 'string' ? output : JSON.stringify(response);
}

function toolsOf(req: Request): OfferedTool[] {
  return (req.tools ?? []).flatMap((t) =>
    (t.functionDeclarations ?? []).map((f) => {
      const schema = f.parametersJsonSchema ?? f.parameters;
      return { name: f.name, kind: 'function' as const, ...(schema !== undefined && { schema }) };
    }),
  );
}

function readView(body: unknown, model: string, stream: boolean): ConversationView {
  const req = parseRequestBody(requestSchema, body);
  const sys = req.systemInstruction;
  const systemText =
    sys === undefined ? '' : typeof sys === 'string' ? sys : textOfParts(sys.parts).join('\n');
  const userTexts: string[] = [];
  let context = '';
  let toolResults = 0;
  let lastToolOutput: string | undefined;
  for (const content of req.contents) {
    if (content.role === 'model') {
      lastToolOutput = undefined;
      continue;
    }
    const texts = textOfParts(content.parts);
    for (const t of texts.filter((t) => CONTEXT_ONLY.test(t))) context += t;
    const own = texts.filter((t) => !CONTEXT_ONLY.test(t));
    const results = content.parts.filter((p) => p.functionResponse !== undefined);
    if (own.length > 0) {
      userTexts.push(own.join('\n'));
      toolResults = 0;
    } else toolResults += results.length;
    const last = results.at(-1);
    lastToolOutput = last === undefined ? undefined : responseText(last.functionResponse?.response);
  }
  const cwd = WORKSPACE_DIR.exec(context)?.[1];
  const config = req.generationConfig;
  const schema = config?.responseJsonSchema ?? config?.responseSchema;
  const view: ConversationView = {
    model,
    stream,
    tools: toolsOf(req),
    systemText,
    userTexts,
    toolResultsSinceUser: toolResults,
    ...(lastToolOutput !== undefined && { lastToolOutput }),
    wantsJson: config?.responseMimeType === 'application/json' || schema !== undefined,
    ...(cwd !== undefined && { cwd }),
    ...(schema !== undefined && { jsonSchema: schema }),
    inputChars: JSON.stringify(body).length,
  };
  return view;
}

/** The model part of a planned text or tool action (errors and hangs never reach `write`). */
function partOf(action: ModelAction): Record<string, unknown> {
  if (action.kind === 'tool') {
    const args = action.freeform === undefined ? action.input : { ...action.input, input: action.freeform };
    return { functionCall: { id: action.callId, name: action.name, args } };
  }
  return { text: action.kind === 'text' ? action.text : '' };
}

function usageOf(planned: PlannedResponse): Record<string, number> {
  const { inputTokens, outputTokens } = planned.usage;
  return {
    promptTokenCount: inputTokens,
    candidatesTokenCount: outputTokens,
    totalTokenCount: inputTokens + outputTokens,
  };
}

/**
 * A streamed answer: the model's part first, then an empty model content with the finish reason and the
 * usage, so a stream cut after its first event has no finish reason (gemini retries such a stream).
 */
function writeStream(
  res: ServerResponse,
  planned: PlannedResponse,
  part: Record<string, unknown>,
  meta: object,
): void {
  const sse = new SseWriter(res, { isCut: planned.isCut });
  sse.event({ candidates: [{ content: { role: 'model', parts: [part] }, index: 0 }], ...meta });
  sse.event({
    candidates: [{ content: { role: 'model', parts: [] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: usageOf(planned),
    ...meta,
  });
  sse.end();
}

const STATUS_NAMES: Readonly<Record<number, string>> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'UNIMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** The google.rpc status name of an HTTP status (`INVALID_ARGUMENT`, `UNAVAILABLE`…). */
export function geminiStatusName(status: number): string {
  return (
    STATUS_NAMES[status] ?? (status >= 500 ? 'INTERNAL' : status >= 400 ? 'FAILED_PRECONDITION' : 'UNKNOWN')
  );
}

function modelInfo(name: string): Record<string, unknown> {
  return {
    name: `models/${name}`,
    displayName: name,
    inputTokenLimit: 1_048_576,
    outputTokenLimit: 65_536,
    supportedGenerationMethods: ['generateContent', 'streamGenerateContent', 'countTokens'],
  };
}

function isGeminiClient(request: Pick<DialectRequest, 'headers' | 'url'>): boolean {
  const h = request.headers;
  return (
    h['x-goog-api-key'] !== undefined ||
    h['x-goog-api-client'] !== undefined ||
    request.url.searchParams.has('key')
  );
}

/**
 * The Gemini API (gemini CLI through @google/genai): `POST /v1beta/models/{model}:generateContent`, and
 * `:streamGenerateContent?alt=sse` (SSE chunks `{candidates:[{content:{role:'model',parts}}]}`, the last
 * with `finishReason` and `usageMetadata`; without `alt=sse` one JSON array of the chunks). The user texts
 * skip the `<session_context>` part gemini adds to the first prompt (its workspace folder becomes `cwd`);
 * functionResponse parts after the last prompt count as the turn's earlier steps. A side request that
 * asks for JSON with a schema (routing classifier, next-speaker and loop checks) gets a minimal object
 * valid for that schema instead of `{}` (or of a reply scripted for the turn). Side routes: `:countTokens` and the model list / model get.
 */
export const geminiGenerateDialect: Dialect = {
  name: 'gemini',
  matches: ({ method, url }) => method === 'POST' && GENERATE.test(url.pathname),
  read: (request) => {
    const m = GENERATE.exec(request.url.pathname);
    return readView(request.body, decodeURIComponent(m?.[1] ?? ''), m?.[2] === 'streamGenerateContent');
  },
  write: (res, planned, view) => {
    const part = partOf(planned.action);
    const meta = { modelVersion: view.model, responseId: randomUUID().replace(/-/g, '').slice(0, 22) };
    if (view.stream) {
      if (res.req.url?.includes('alt=sse') === true) return writeStream(res, planned, part, meta);
      const chunk = {
        candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
      };
      return sendJson(res, 200, [{ ...chunk, usageMetadata: usageOf(planned), ...meta }]);
    }
    sendJson(res, 200, {
      candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: usageOf(planned),
      ...meta,
    });
  },
  errorBody: (status, message) => ({ error: { code: status, message, status: geminiStatusName(status) } }),
  answerOther: (request, res) => {
    const { pathname } = request.url;
    if (request.method === 'POST' && COUNT_TOKENS.test(pathname)) {
      sendJson(res, 200, {
        totalTokens: Math.max(1, Math.ceil(JSON.stringify(request.body ?? {}).length / 4)),
      });
      return true;
    }
    if (request.method !== 'GET' || !isGeminiClient(request)) return false;
    if (MODEL_LIST.test(pathname)) {
      sendJson(res, 200, { models: LISTED_MODELS.map(modelInfo) });
      return true;
    }
    const one = MODEL_GET.exec(pathname);
    if (one?.[2] !== undefined) {
      sendJson(res, 200, modelInfo(decodeURIComponent(one[2])));
      return true;
    }
    return false;
  },
};
