import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DialectRequestError, type DialectRequest } from '../dialect.js';
import { ModelEndpoint } from '../model-endpoint.js';
import { openaiChatDialect } from './openai-chat.js';

// Real request bodies of opencode 1.18.33 (system prompt and tool descriptions trimmed), see the README there.
const recordedDir = new URL('../../../../test/fakes/recorded/opencode/', import.meta.url);
const recorded = (name: string): unknown => JSON.parse(readFileSync(new URL(name, recordedDir), 'utf8'));

function request(body: unknown, path = '/v1/chat/completions'): DialectRequest {
  return { method: 'POST', url: new URL(path, 'http://127.0.0.1'), headers: {}, body };
}

const user = (content: unknown) => ({ role: 'user', content });
const writeTool = {
  type: 'function',
  function: {
    name: 'write',
    parameters: { type: 'object', properties: { filePath: { type: 'string' }, content: { type: 'string' } } },
  },
};

describe('openai-chat dialect: read', () => {
  it('reads a recorded opencode request after a tool call as one tool result since the prompt', () => {
    const view = openaiChatDialect.read(request(recorded('chat-request-tool-result.json')));
    expect(view).toMatchObject({
      model: 'musubi-model',
      stream: true,
      userTexts: ['MUSUBI-MODEL: {"write":{"path":"a.txt","content":"hi\\n"}}'],
      toolResultsSinceUser: 1,
      lastToolOutput: 'Wrote file successfully.',
      wantsJson: false,
    });
    expect(view.systemText).toMatch(/^You are opencode/);
    expect(view.systemText).toContain('Working directory: /');
    expect(view.tools.map((t) => [t.name, t.kind])).toEqual([
      ['bash', 'function'],
      ['read', 'function'],
      ['write', 'function'],
    ]);
    expect(view.tools.find((t) => t.name === 'write')?.schema).toMatchObject({
      properties: { filePath: { type: 'string' }, content: { type: 'string' } },
    });
  });

  it('reads a recorded opencode title request as a request without tools', () => {
    const view = openaiChatDialect.read(request(recorded('chat-request-title.json')));
    expect(view.tools).toEqual([]);
    expect(view.systemText).toMatch(/^You are a title generator/);
    expect(view.userTexts.at(-1)).toBe('MUSUBI-MODEL: {"write":{"path":"a.txt","content":"hi\\n"}}');
    expect(view.toolResultsSinceUser).toBe(0);
  });

  it('joins text parts, takes developer messages as system text and skips non-text parts when content is an array', () => {
    const view = openaiChatDialect.read(
      request({
        model: 'm',
        messages: [
          { role: 'developer', content: [{ type: 'text', text: 'rules' }] },
          { role: 'system', content: 'more rules' },
          user([
            { type: 'text', text: 'line one' },
            { type: 'image_url', image_url: { url: 'data:,' } },
            { type: 'text', text: 'line two' },
          ]),
        ],
      }),
    );
    expect(view.systemText).toBe('rules\nmore rules');
    expect(view.userTexts).toEqual(['line one\nline two']);
    expect(view.stream).toBe(false);
  });

  it('counts only the tool results after the last user message when a new prompt follows earlier steps', () => {
    const call = { id: 'c1', type: 'function', function: { name: 'write', arguments: '{}' } };
    const messages = [
      user('first'),
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: 'c1', content: 'ok 1' },
      { role: 'assistant', content: 'done' },
      user('second'),
      { role: 'assistant', content: null, tool_calls: [call, { ...call, id: 'c2' }] },
      { role: 'tool', tool_call_id: 'c1', content: 'ok 2' },
      { role: 'tool', tool_call_id: 'c2', content: [{ type: 'text', text: 'ok 3' }] },
    ];
    const view = openaiChatDialect.read(request({ model: 'm', messages, tools: [writeTool] }));
    expect(view.userTexts).toEqual(['first', 'second']);
    expect(view.toolResultsSinceUser).toBe(2);
    expect(view.lastToolOutput).toBe('ok 3');
  });

  it('reads custom tools, legacy functions and a JSON response_format when the request has them', () => {
    const view = openaiChatDialect.read(
      request({
        model: 'm',
        messages: [user('x')],
        tools: [writeTool, { type: 'custom', custom: { name: 'apply_patch', format: { type: 'text' } } }],
        functions: [{ name: 'legacy', parameters: { type: 'object' } }],
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } },
      }),
    );
    expect(view.tools.map((t) => [t.name, t.kind])).toEqual([
      ['write', 'function'],
      ['apply_patch', 'custom'],
      ['legacy', 'function'],
    ]);
    expect(view.wantsJson).toBe(true);
    expect(
      openaiChatDialect.read(
        request({ model: 'm', messages: [user('x')], response_format: { type: 'text' } }),
      ).wantsJson,
    ).toBe(false);
  });

  it('refuses a body without model or messages with a 400 naming the field', () => {
    const read = (body: unknown) => () => openaiChatDialect.read(request(body));
    expect(read({ messages: [user('x')] })).toThrow(DialectRequestError);
    expect(read({ model: 'm', messages: [] })).toThrow(/messages/);
    try {
      read({ model: 'm' })();
    } catch (err) {
      expect(err).toMatchObject({ status: 400 });
    }
  });

  it('matches POST …/chat/completions only', () => {
    const at = (method: string, path: string) =>
      openaiChatDialect.matches({ method, url: new URL(path, 'http://h') });
    expect(at('POST', '/v1/chat/completions')).toBe(true);
    expect(at('POST', '/openai/v1/chat/completions')).toBe(true);
    expect(at('GET', '/v1/chat/completions')).toBe(false);
    expect(at('POST', '/v1/responses')).toBe(false);
    expect(at('POST', '/v1/messages')).toBe(false);
  });

  it('writes the API error object with type and code when asked for an error body', () => {
    expect(openaiChatDialect.errorBody(401, 'bad key')).toEqual({
      error: { message: 'bad key', type: 'invalid_request_error', param: null, code: 'invalid_api_key' },
    });
    expect(openaiChatDialect.errorBody(429, 'slow')).toMatchObject({
      error: { type: 'rate_limit_error', code: 'rate_limit_exceeded' },
    });
    expect(openaiChatDialect.errorBody(503, 'busy')).toMatchObject({
      error: { message: 'busy', type: 'server_error' },
    });
  });
});

const chunkSchema = z.looseObject({
  object: z.literal('chat.completion.chunk'),
  model: z.string(),
  choices: z.array(
    z.looseObject({
      index: z.number(),
      delta: z.looseObject({
        role: z.string().optional(),
        content: z.string().nullish(),
        tool_calls: z
          .array(
            z.looseObject({
              index: z.number(),
              id: z.string().optional(),
              type: z.string().optional(),
              function: z
                .looseObject({ name: z.string().optional(), arguments: z.string().optional() })
                .optional(),
            }),
          )
          .optional(),
      }),
      finish_reason: z.string().nullable(),
    }),
  ),
  usage: z
    .looseObject({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number() })
    .nullish(),
});
type Chunk = z.infer<typeof chunkSchema>;

/** The `data:` payloads of an SSE body, `[DONE]` kept as a string. */
function sseData(text: string): (Chunk | '[DONE]')[] {
  return text
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => e.slice('data: '.length))
    .map((d) => (d === '[DONE]' ? d : chunkSchema.parse(JSON.parse(d))));
}

describe('openai-chat dialect through the endpoint', () => {
  let endpoint: ModelEndpoint;
  let url: string;
  beforeEach(async () => {
    endpoint = new ModelEndpoint({ dialects: [openaiChatDialect] });
    url = await endpoint.start();
  });
  afterEach(() => endpoint.close());

  const post = (body: unknown) =>
    fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
      body: JSON.stringify(body),
    });
  const turn = (prompt: string, extra: Record<string, unknown> = {}) => ({
    model: 'musubi-model',
    messages: [{ role: 'system', content: 'sys' }, user(prompt)],
    tools: [writeTool],
    ...extra,
  });
  const loggedUsage = () => {
    const usage = endpoint.requests().at(-1)?.usage;
    if (usage === undefined) throw new Error('no usage logged');
    return {
      prompt_tokens: usage.inputTokens,
      completion_tokens: usage.outputTokens,
      total_tokens: usage.inputTokens + usage.outputTokens,
    };
  };

  it('streams role, text, the stop finish, a usage chunk and [DONE] when stream and include_usage are set', async () => {
    const res = await post(
      turn('MUSUBI-MODEL: {"reply":"hello there"}', {
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const events = sseData(await res.text());
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.filter((e): e is Chunk => e !== '[DONE]');
    expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('hello there');
    expect(chunks.flatMap((c) => c.choices.map((ch) => ch.finish_reason)).filter((f) => f !== null)).toEqual([
      'stop',
    ]);
    const last = chunks.at(-1);
    expect(last?.choices).toEqual([]);
    expect(last?.usage).toMatchObject(loggedUsage());
  });

  it('streams no usage chunk when include_usage is not asked for', async () => {
    const events = sseData(await (await post(turn('MUSUBI-MODEL: {"reply":"x"}', { stream: true }))).text());
    const chunks = events.filter((e): e is Chunk => e !== '[DONE]');
    expect(chunks.every((c) => c.usage === undefined && c.choices.length === 1)).toBe(true);
  });

  it('streams a tool call as id and name, then the arguments, with finish_reason tool_calls', async () => {
    const prompt = 'MUSUBI-MODEL: {"write":{"path":"/tmp/x/a.txt","content":"hi \\"there\\"\\n"}}';
    const events = sseData(
      await (await post(turn(prompt, { stream: true, stream_options: { include_usage: true } }))).text(),
    );
    const chunks = events.filter((e): e is Chunk => e !== '[DONE]');
    const calls = chunks.flatMap((c) => c.choices.flatMap((ch) => ch.delta.tool_calls ?? []));
    expect(calls[0]).toMatchObject({
      index: 0,
      type: 'function',
      function: { name: 'write', arguments: '' },
    });
    expect(calls[0]?.id).toMatch(/^call_/);
    const args = calls.map((c) => c.function?.arguments ?? '').join('');
    expect(JSON.parse(args)).toEqual({ filePath: '/tmp/x/a.txt', content: 'hi "there"\n' });
    expect(chunks.flatMap((c) => c.choices.map((ch) => ch.finish_reason)).filter((f) => f !== null)).toEqual([
      'tool_calls',
    ]);
  });

  it('answers one chat.completion object with text or a tool call when stream is false', async () => {
    const text = z
      .looseObject({
        object: z.literal('chat.completion'),
        choices: z.array(
          z.looseObject({
            message: z.looseObject({ role: z.string(), content: z.string().nullable() }),
            finish_reason: z.string(),
          }),
        ),
        usage: z.looseObject({ prompt_tokens: z.number() }),
      })
      .parse(await (await post(turn('MUSUBI-MODEL: {"reply":"plain"}'))).json());
    expect(text.choices[0]).toMatchObject({
      message: { role: 'assistant', content: 'plain' },
      finish_reason: 'stop',
    });
    expect(text.usage).toMatchObject(loggedUsage());
    const tool = z
      .looseObject({
        choices: z.array(
          z.looseObject({
            message: z.looseObject({
              content: z.null(),
              tool_calls: z.array(
                z.looseObject({
                  type: z.literal('function'),
                  function: z.looseObject({ name: z.string(), arguments: z.string() }),
                }),
              ),
            }),
            finish_reason: z.literal('tool_calls'),
          }),
        ),
      })
      .parse(await (await post(turn('MUSUBI-MODEL: {"write":{"path":"/a.txt","content":"x"}}'))).json());
    expect(tool.choices[0]?.message.tool_calls[0]?.function).toEqual({
      name: 'write',
      arguments: '{"filePath":"/a.txt","content":"x"}',
    });
  });

  it('answers the API error body with the status when the script asks for an error', async () => {
    const res = await post(
      turn('MUSUBI-MODEL: {"error":{"status":400,"message":"context too long"}}', { stream: true }),
    );
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: { message: 'context too long', type: 'invalid_request_error', param: null, code: null },
    });
  });

  it('answers a body the API would refuse with a 400 error body', async () => {
    const res = await post({ messages: [user('x')] });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: { type: 'invalid_request_error', message: expect.stringMatching(/model/) },
    });
  });

  it('drops the stream after its first chunk when the script cuts it, and answers the retry in full', async () => {
    const body = turn('MUSUBI-MODEL: {"cut":{"then":{"reply":"second try"}}}', { stream: true });
    const first = await post(body);
    await expect(first.text()).rejects.toThrow();
    const events = sseData(await (await post(body)).text());
    expect(events.at(-1)).toBe('[DONE]');
  });

  it('lists models on GET /v1/models and leaves an Anthropic client to its own dialect', async () => {
    const list = await (await fetch(`${url}/v1/models`, { headers: { authorization: 'Bearer k' } })).json();
    expect(list).toMatchObject({
      object: 'list',
      data: expect.arrayContaining([expect.objectContaining({ id: 'musubi-model', object: 'model' })]),
    });
    const anthropic = await fetch(`${url}/v1/models`, { headers: { 'anthropic-version': '2023-06-01' } });
    expect(anthropic.status).toBe(404);
  });
});
