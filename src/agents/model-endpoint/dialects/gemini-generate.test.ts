import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DialectRequestError } from '../dialect.js';
import { ModelEndpoint } from '../model-endpoint.js';
import { minimalJson } from '../minimal-json.js';
import { geminiGenerateDialect, geminiStatusName } from './gemini-generate.js';

const RECORDED = join(import.meta.dirname, '..', '..', '..', '..', 'test', 'fakes', 'recorded', 'gemini');
const recordedSchema = z.object({ path: z.string(), body: z.record(z.string(), z.unknown()) });

/** A request gemini 0.61 really sent (trimmed: system prompt cut, three of its fifteen tools kept). */
function recorded(name: string): z.infer<typeof recordedSchema> {
  return recordedSchema.parse(JSON.parse(readFileSync(join(RECORDED, name), 'utf8')));
}

function read(path: string, body: unknown) {
  const url = new URL(path, 'http://127.0.0.1');
  return geminiGenerateDialect.read({ method: 'POST', url, headers: {}, body });
}

const chunkSchema = z.looseObject({
  candidates: z.array(
    z.looseObject({
      content: z.object({ role: z.literal('model'), parts: z.array(z.record(z.string(), z.unknown())) }),
      finishReason: z.string().optional(),
    }),
  ),
  usageMetadata: z
    .object({ promptTokenCount: z.number(), candidatesTokenCount: z.number(), totalTokenCount: z.number() })
    .optional(),
});

function sseChunks(text: string): z.infer<typeof chunkSchema>[] {
  return text
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => chunkSchema.parse(JSON.parse(e.slice('data: '.length))));
}

describe('gemini generateContent dialect: read', () => {
  it('reads the prompts, tool result, tools and cwd of a recorded tool-result request', () => {
    const { path, body } = recorded('request-tool-result.json');
    const view = read(path, body);
    expect(view).toMatchObject({
      model: 'gemini-3.8-flash',
      stream: true,
      userTexts: ['Reply with one word.', 'MUSUBI-MODEL: {"write":{"path":"a.txt","content":"hi\\n"}}'],
      toolResultsSinceUser: 1,
      wantsJson: false,
      cwd: '/tmp/musubi-real-cli-AbC123/work',
    });
    expect(view.lastToolOutput).toContain('Successfully created and wrote to new file');
    expect(view.systemText).toMatch(/^You are Gemini CLI/);
    const write = view.tools.find((t) => t.name === 'write_file');
    expect(write?.schema).toMatchObject({
      properties: { file_path: { type: 'string' }, content: { type: 'string' } },
    });
    expect(view.inputChars).toBe(JSON.stringify(body).length);
  });

  it('reads the routing classifier side request as tool-less and wanting JSON', () => {
    const { path, body } = recorded('request-router.json');
    const view = read(path, body);
    expect(view).toMatchObject({ model: 'gemini-3.5-flash-lite', stream: false, tools: [], wantsJson: true });
    expect(view.userTexts.at(-1)).toBe('MUSUBI-MODEL: {"write":{"path":"a.txt","content":"hi\\n"}}');
  });

  it('counts only the function responses after the last prompt when a new prompt follows a tool step', () => {
    const view = read('/v1beta/models/m:generateContent', {
      contents: [
        { role: 'user', parts: [{ text: 'first' }] },
        { role: 'model', parts: [{ functionCall: { name: 'write_file', args: {} } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'write_file', response: { output: 'ok' } } }] },
        { role: 'model', parts: [{ text: 'done' }] },
        { role: 'user', parts: [{ text: 'second' }] },
      ],
    });
    expect(view).toMatchObject({ userTexts: ['first', 'second'], toolResultsSinceUser: 0, stream: false });
  });

  it('rejects a body without contents with a 400 the API would give', () => {
    expect(() => read('/v1beta/models/m:generateContent', { generationConfig: {} })).toThrow(
      DialectRequestError,
    );
  });

  it('matches the generate routes only', () => {
    const m = (method: string, path: string) =>
      geminiGenerateDialect.matches({ method, url: new URL(path, 'http://127.0.0.1') });
    expect(m('POST', '/v1beta/models/gemini-2.5-pro:generateContent')).toBe(true);
    expect(m('POST', '/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse')).toBe(true);
    expect(m('POST', '/v1/projects/p/locations/l/publishers/google/models/x:generateContent')).toBe(true);
    expect(m('POST', '/v1beta/models/x:countTokens')).toBe(false);
    expect(m('POST', '/v1/messages')).toBe(false);
    expect(m('GET', '/v1beta/models/x:generateContent')).toBe(false);
  });
});

describe('gemini generateContent dialect: schemas and errors', () => {
  it('builds a minimal object gemini accepts for its routing, next-speaker and loop-check schemas', () => {
    const routing = recorded('request-router.json').body;
    const config = z
      .object({ generationConfig: z.object({ responseJsonSchema: z.unknown() }) })
      .parse(routing);
    expect(minimalJson(config.generationConfig.responseJsonSchema)).toEqual({
      complexity_reasoning: 'musubi model endpoint',
      complexity_score: 1,
    });
    const nextSpeaker = {
      type: 'object',
      properties: {
        reasoning: { type: 'string' },
        next_speaker: { type: 'string', enum: ['user', 'model'] },
      },
      required: ['reasoning', 'next_speaker'],
    };
    expect(minimalJson(nextSpeaker)).toMatchObject({ next_speaker: 'user' });
    expect(minimalJson({ type: 'OBJECT', properties: { confidence: { type: 'NUMBER' } } })).toEqual({
      confidence: 0,
    });
  });

  it('gives the google.rpc error body for an HTTP status', () => {
    expect(geminiGenerateDialect.errorBody(400, 'bad')).toEqual({
      error: { code: 400, message: 'bad', status: 'INVALID_ARGUMENT' },
    });
    expect(geminiStatusName(401)).toBe('UNAUTHENTICATED');
    expect(geminiStatusName(429)).toBe('RESOURCE_EXHAUSTED');
    expect(geminiStatusName(503)).toBe('UNAVAILABLE');
  });
});

describe('gemini generateContent dialect: write (through the endpoint)', () => {
  let endpoint: ModelEndpoint;
  let url: string;
  beforeEach(async () => {
    endpoint = new ModelEndpoint({ dialects: [geminiGenerateDialect] });
    url = await endpoint.start();
  });
  afterEach(() => endpoint.close());

  const tool = {
    name: 'write_file',
    parametersJsonSchema: {
      type: 'object',
      properties: { file_path: { type: 'string' }, content: { type: 'string' } },
      required: ['file_path', 'content'],
    },
  };
  const post = (path: string, prompt: string, extra: object = {}) =>
    fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': 'k' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: prompt }] }], ...extra }),
    });

  it('answers a plain request with one candidate and the usage of the planned answer', async () => {
    const res = await post('/v1beta/models/m:generateContent', 'MUSUBI-MODEL: {"reply":"hi there"}');
    expect(res.status).toBe(200);
    const body = chunkSchema.parse(await res.json());
    expect(body.candidates[0]).toMatchObject({
      content: { parts: [{ text: 'hi there' }] },
      finishReason: 'STOP',
    });
    const usage = endpoint.requests()[0]?.usage;
    expect(body.usageMetadata).toEqual({
      promptTokenCount: usage?.inputTokens,
      candidatesTokenCount: usage?.outputTokens,
      totalTokenCount: (usage?.inputTokens ?? 0) + (usage?.outputTokens ?? 0),
    });
  });

  it('streams a function call, then the finish reason and usage in a last chunk', async () => {
    const directive = 'MUSUBI-MODEL: {"write":{"path":"/w/a.txt","content":"x"}}';
    const res = await post('/v1beta/models/m:streamGenerateContent?alt=sse', directive, {
      tools: [{ functionDeclarations: [tool] }],
    });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const chunks = sseChunks(await res.text());
    expect(chunks).toHaveLength(2);
    expect(chunks[0]?.candidates[0]?.content.parts[0]).toMatchObject({
      functionCall: { name: 'write_file', args: { file_path: '/w/a.txt', content: 'x' } },
    });
    expect(chunks[0]?.candidates[0]?.finishReason).toBeUndefined();
    expect(chunks[1]?.candidates[0]).toMatchObject({ finishReason: 'STOP', content: { parts: [] } });
    expect(chunks[1]?.usageMetadata?.promptTokenCount).toBe(endpoint.requests()[0]?.usage?.inputTokens);
  });

  it('answers a side request that wants JSON with an object valid for its schema', async () => {
    const { body } = recorded('request-router.json');
    const res = await fetch(`${url}/v1beta/models/gemini-3.5-flash-lite:generateContent`, {
      method: 'POST',
      body: JSON.stringify(body),
    });
    const chunk = chunkSchema.parse(await res.json());
    const text = z.object({ text: z.string() }).parse(chunk.candidates[0]?.content.parts[0]).text;
    expect(JSON.parse(text)).toEqual({ complexity_reasoning: 'musubi model endpoint', complexity_score: 1 });
  });

  it('answers a side request with a schema-valid object when the prompt scripts a plain reply', async () => {
    const { body } = recorded('request-router.json');
    const contents = [{ role: 'user', parts: [{ text: 'MUSUBI-MODEL: {"reply":"not json"}' }] }];
    const res = await fetch(`${url}/v1beta/models/gemini-3.5-flash-lite:generateContent`, {
      method: 'POST',
      body: JSON.stringify({ ...body, contents }),
    });
    const chunk = chunkSchema.parse(await res.json());
    const text = z.object({ text: z.string() }).parse(chunk.candidates[0]?.content.parts[0]).text;
    expect(JSON.parse(text)).toMatchObject({ complexity_score: 1 });
  });

  it('drops a cut stream after the first chunk, before any finish reason', async () => {
    const directive = 'MUSUBI-MODEL: {"cut":{"then":{"reply":"whole"}}}';
    const tools = [{ functionDeclarations: [tool] }];
    const res = await post('/v1beta/models/m:streamGenerateContent?alt=sse', directive, { tools });
    const text = await res.text().catch(() => 'terminated');
    expect(text).not.toContain('finishReason');
    const again = await post('/v1beta/models/m:streamGenerateContent?alt=sse', directive, { tools });
    expect(sseChunks(await again.text()).at(-1)?.candidates[0]?.finishReason).toBe('STOP');
  });

  it('answers a scripted error with the API error body and status', async () => {
    const res = await post(
      '/v1beta/models/m:generateContent',
      'MUSUBI-MODEL: {"error":{"status":429,"message":"slow down"}}',
      {
        tools: [{ functionDeclarations: [tool] }],
      },
    );
    expect(res.status).toBe(429);
    expect(await res.json()).toEqual({
      error: { code: 429, message: 'slow down', status: 'RESOURCE_EXHAUSTED' },
    });
  });

  it('answers countTokens and the model list as side routes', async () => {
    const count = await fetch(`${url}/v1beta/models/m:countTokens`, {
      method: 'POST',
      body: '{"contents":[]}',
    });
    expect(await count.json()).toEqual({ totalTokens: expect.any(Number) });
    const list = await fetch(`${url}/v1beta/models`, { headers: { 'x-goog-api-key': 'k' } });
    const models = z
      .object({ models: z.array(z.object({ name: z.string() }).loose()) })
      .parse(await list.json());
    expect(models.models.map((m) => m.name)).toContain('models/gemini-2.5-pro');
  });
});
