import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DialectRequestError } from '../dialect.js';
import { ModelEndpoint } from '../model-endpoint.js';
import { anthropicErrorType, anthropicMessagesDialect } from './anthropic-messages.js';

/** A real claude 2.1.197 request (the 2nd turn of a resumed session, after a Write tool call), trimmed. */
const recorded: unknown = JSON.parse(
  readFileSync(
    new URL('../../../../test/fakes/recorded/claude/request-resumed-tool-result.json', import.meta.url),
    'utf8',
  ),
);

const WRITE_TOOL = {
  name: 'Write',
  input_schema: {
    type: 'object',
    properties: { file_path: { type: 'string' }, content: { type: 'string' } },
    required: ['file_path', 'content'],
  },
};

function read(body: unknown) {
  return anthropicMessagesDialect.read({
    method: 'POST',
    url: new URL('http://x/v1/messages?beta=true'),
    headers: {},
    body,
  });
}

function request(prompt: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model: 'claude-opus-4-8',
    max_tokens: 1024,
    system: [{ type: 'text', text: 'Primary working directory: /work/here' }],
    messages: [{ role: 'user', content: [{ type: 'text', text: prompt }] }],
    tools: [WRITE_TOOL],
    ...extra,
  };
}

const jsonObject = z.record(z.string(), z.unknown());
const jsonDelta = z.object({ delta: z.object({ partial_json: z.string() }) });

interface SseEvent {
  readonly event: string;
  readonly data: Record<string, unknown>;
}

function sseEvents(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((chunk) => chunk.trim() !== '')
    .map((chunk) => {
      const event = /^event: (.*)$/m.exec(chunk)?.[1] ?? '';
      const data = chunk
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      return { event, data: jsonObject.parse(JSON.parse(data)) };
    });
}

async function post(url: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': 'k' },
    body: JSON.stringify(body),
  });
}

describe('anthropic messages dialect: read', () => {
  it('reads the prompts exactly, without reminders or system messages, from a recorded claude request', () => {
    const view = read(recorded);
    expect(view.model).toBe('claude-opus-4-8');
    expect(view.stream).toBe(true);
    expect(view.userTexts).toEqual([
      'MUSUBI-MODEL: {"write":{"path":"hello.txt","content":"hi\\n","then":"Wrote hello.txt."}}',
      'and now: "quotes"\nline two — ünïcødé 日本語',
    ]);
    expect(view.toolResultsSinceUser).toBe(1);
    expect(view.lastToolOutput).toContain('/tmp/musubi-real-cli-rec/work/hello.txt');
    expect(view.cwd).toBe('/tmp/musubi-real-cli-rec/work');
    expect(view.systemText).toContain('Available agent types');
    expect(view.systemText).toContain("You are a Claude agent, built on Anthropic's Claude Agent SDK.");
    expect(view.tools.map((t) => t.name)).toEqual(['Bash', 'Write']);
    expect(view.tools[1]?.schema).toMatchObject({ properties: { file_path: { type: 'string' } } });
    expect(view.wantsJson).toBe(false);
    expect(view.inputChars).toBeGreaterThan(1000);
  });

  it('counts tool results and calls after the last prompt only when a new prompt follows them in one message', () => {
    const view = read(
      request('first', {
        messages: [
          { role: 'user', content: 'first' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Write', input: {} }] },
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'ok' }] }],
          },
          {
            role: 'assistant',
            content: [{ type: 'tool_use', id: 't2', name: 'Read', input: { file_path: '/w/a' } }],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 't2', content: 'done' },
              { type: 'text', text: '<system-reminder>\nnote\n</system-reminder>' },
            ],
          },
        ],
      }),
    );
    expect(view).toMatchObject({ userTexts: ['first'], toolResultsSinceUser: 2, lastToolOutput: 'done' });
    expect(view.toolCallsSinceUser).toEqual([
      { name: 'Write', input: {} },
      { name: 'Read', input: { file_path: '/w/a' } },
    ]);
    const merged = read(
      request('x', {
        messages: [
          { role: 'user', content: 'first' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Write', input: {} }] },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 't1', content: 'ok' },
              { type: 'text', text: 'next' },
            ],
          },
        ],
      }),
    );
    expect(merged).toMatchObject({ userTexts: ['first', 'next'], toolResultsSinceUser: 0 });
    expect(merged.toolCallsSinceUser).toEqual([]);
  });

  it('sees a JSON output format as wantsJson', () => {
    const format = { type: 'json_schema', schema: { type: 'object' } };
    expect(read(request('x', { output_config: { format } })).wantsJson).toBe(true);
    expect(read(request('x', { output_format: format })).wantsJson).toBe(true);
  });

  it('refuses a body without model, max_tokens or messages with a 400 DialectRequestError', () => {
    expect(() => read({ model: 'm', messages: [] })).toThrow(DialectRequestError);
    try {
      read({ max_tokens: 1, messages: [] });
    } catch (err) {
      expect(err).toMatchObject({ status: 400 });
    }
  });

  it('matches POST /v1/messages only (count_tokens and models are side routes)', () => {
    const m = (method: string, path: string) =>
      anthropicMessagesDialect.matches({ method, url: new URL(`http://x${path}`) });
    expect(m('POST', '/v1/messages?beta=true')).toBe(true);
    expect(m('POST', '/v1/messages/count_tokens?beta=true')).toBe(false);
    expect(m('GET', '/v1/messages')).toBe(false);
    expect(m('POST', '/v1/chat/completions')).toBe(false);
  });
});

describe('anthropic messages dialect: write', () => {
  it('streams a text answer with the usage in message_start and message_delta', async () => {
    await using endpoint = new ModelEndpoint({ dialects: [anthropicMessagesDialect] });
    const url = await endpoint.start();
    const res = await post(
      url,
      '/v1/messages',
      request('MUSUBI-MODEL: {"reply":"hi there"}', { stream: true }),
    );
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const events = sseEvents(await res.text());
    expect(events.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const usage = endpoint.requests()[0]?.usage;
    expect(events[0]?.data).toMatchObject({
      message: { role: 'assistant', model: 'claude-opus-4-8', usage: { input_tokens: usage?.inputTokens } },
    });
    expect(events[3]?.data).toMatchObject({ delta: { type: 'text_delta', text: 'hi there' } });
    expect(events[5]?.data).toMatchObject({
      delta: { stop_reason: 'end_turn' },
      usage: { input_tokens: usage?.inputTokens, output_tokens: usage?.outputTokens },
    });
  });

  it('streams a tool call as tool_use with input_json_delta and stop_reason tool_use', async () => {
    await using endpoint = new ModelEndpoint({ dialects: [anthropicMessagesDialect] });
    const url = await endpoint.start();
    const prompt = `MUSUBI-MODEL: {"write":{"path":"a.txt","content":"${'x'.repeat(9000)}"}}`;
    const events = sseEvents(
      await (await post(url, '/v1/messages', request(prompt, { stream: true }))).text(),
    );
    const start = events.find((e) => e.event === 'content_block_start')?.data;
    expect(start).toMatchObject({ content_block: { type: 'tool_use', name: 'Write', input: {} } });
    const json = events
      .filter((e) => e.event === 'content_block_delta')
      .map((e) => jsonDelta.parse(e.data).delta.partial_json);
    expect(json.length).toBeGreaterThan(1);
    expect(JSON.parse(json.join(''))).toEqual({ file_path: '/work/here/a.txt', content: 'x'.repeat(9000) });
    expect(events.find((e) => e.event === 'message_delta')?.data).toMatchObject({
      delta: { stop_reason: 'tool_use' },
    });
  });

  it('answers a request without stream with one message JSON', async () => {
    await using endpoint = new ModelEndpoint({ dialects: [anthropicMessagesDialect] });
    const url = await endpoint.start();
    const res = await post(
      url,
      '/v1/messages',
      request('MUSUBI-MODEL: {"write":{"path":"/abs/b.txt","content":"y"}}'),
    );
    const usage = endpoint.requests()[0]?.usage;
    expect(await res.json()).toMatchObject({
      type: 'message',
      role: 'assistant',
      content: [{ type: 'tool_use', name: 'Write', input: { file_path: '/abs/b.txt', content: 'y' } }],
      stop_reason: 'tool_use',
      usage: { input_tokens: usage?.inputTokens, output_tokens: usage?.outputTokens },
    });
  });

  it('answers an error directive with the API error body and status', async () => {
    await using endpoint = new ModelEndpoint({ dialects: [anthropicMessagesDialect] });
    const url = await endpoint.start();
    const res = await post(
      url,
      '/v1/messages',
      request('MUSUBI-MODEL: {"error":{"status":429,"message":"slow down"}}'),
    );
    expect(res.status).toBe(429);
    expect(await res.json()).toEqual({
      type: 'error',
      error: { type: 'rate_limit_error', message: 'slow down' },
    });
    expect([400, 401, 500, 503, 529].map(anthropicErrorType)).toEqual([
      'invalid_request_error',
      'authentication_error',
      'api_error',
      'overloaded_error',
      'overloaded_error',
    ]);
  });

  it('drops a cut stream after message_start', async () => {
    await using endpoint = new ModelEndpoint({ dialects: [anthropicMessagesDialect] });
    const url = await endpoint.start();
    const res = await post(
      url,
      '/v1/messages',
      request('MUSUBI-MODEL: {"cut":{"then":{"reply":"x"}}}', { stream: true }),
    );
    const text = await res.text().catch(() => 'event: message_start\ndata: {}\n\n');
    expect(sseEvents(text).map((e) => e.event)).toEqual(['message_start']);
  });

  it('answers count_tokens and the model list as side routes', async () => {
    await using endpoint = new ModelEndpoint({ dialects: [anthropicMessagesDialect] });
    const url = await endpoint.start();
    const count = await post(url, '/v1/messages/count_tokens', request('hello'));
    expect(
      z.object({ input_tokens: z.number().int().positive() }).safeParse(await count.json()).success,
    ).toBe(true);
    const models = await fetch(`${url}/v1/models`, { headers: { 'anthropic-version': '2023-06-01' } });
    expect(await models.json()).toMatchObject({
      data: expect.arrayContaining([expect.objectContaining({ type: 'model' })]),
    });
    const other = await fetch(`${url}/v1/models`);
    expect(other.status).toBe(404);
  });
});
