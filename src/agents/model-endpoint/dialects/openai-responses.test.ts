import { readFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ConversationView, ModelAction, PlannedResponse } from '../conversation.js';
import { DialectRequestError } from '../dialect.js';
import { ModelEndpoint } from '../model-endpoint.js';
import { openaiResponsesDialect } from './openai-responses.js';

/** A real codex 0.171 request (the follow-up after an apply_patch call), trimmed. */
const recorded: unknown = JSON.parse(
  readFileSync(
    new URL('../../../../test/fakes/recorded/codex/request-tool-result.json', import.meta.url),
    'utf8',
  ),
);

/** A real codex 0.171 code-mode request (gpt-6.2-sol, after an `exec` call of apply_patch), trimmed. */
const recordedCodeMode: unknown = JSON.parse(
  readFileSync(
    new URL('../../../../test/fakes/recorded/codex/request-code-mode-tool-result.json', import.meta.url),
    'utf8',
  ),
);

function read(body: unknown): ConversationView {
  return openaiResponsesDialect.read({
    method: 'POST',
    url: new URL('http://x/v1/responses'),
    headers: {},
    body,
  });
}

const user = (text: string) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });

const jsonObject = z.record(z.string(), z.unknown());

interface SseEvent {
  readonly event: string;
  readonly data: Record<string, unknown>;
}

function sseEvents(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((chunk) => chunk.trim() !== '')
    .map((chunk) => ({
      event: /^event: (.*)$/m.exec(chunk)?.[1] ?? '',
      data: jsonObject.parse(JSON.parse(/^data: (.*)$/m.exec(chunk)?.[1] ?? '{}')),
    }));
}

/** The body as far as it arrived (a cut stream ends in a network error after its first event). */
async function readUntilDropped(res: Response): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  try {
    for await (const chunk of res.body ?? []) text += decoder.decode(chunk, { stream: true });
  } catch {
    // The connection was dropped: what came before it is the answer.
  }
  return text;
}

describe('openai responses dialect: read', () => {
  it('reads a recorded codex request: tools, developer text, last user text, tool result and cwd', () => {
    const view = read(recorded);
    expect(view).toMatchObject({
      model: 'gpt-5.5',
      stream: true,
      wantsJson: false,
      toolResultsSinceUser: 1,
      cwd: '/tmp/cx/rec/work',
    });
    expect(view.tools.map((t) => [t.name, t.kind])).toEqual([
      ['exec_command', 'function'],
      ['apply_patch', 'custom'],
    ]);
    expect(view.tools[0]?.schema).toMatchObject({ properties: { cmd: { type: 'string' } } });
    expect(view.systemText).toMatch(/^You are Codex/);
    expect(view.userTexts).toHaveLength(2);
    expect(view.userTexts[0]).toMatch(/^<environment_context>/);
    expect(view.userTexts.at(-1)).toBe(
      'MUSUBI-MODEL: {"write":{"path":"hello.txt","content":"hello from codex\\n","then":"wrote it"}}',
    );
    expect(view.lastToolOutput).toContain('Success. Updated the following files:');
  });

  it('offers the tools nested in the exec tool of a recorded code-mode request', () => {
    const view = read(recordedCodeMode);
    expect(view).toMatchObject({ model: 'gpt-6.2-sol', toolResultsSinceUser: 1, cwd: '/tmp/cx/rec-cm/work' });
    expect(view.tools.map((t) => [t.name, t.kind])).toEqual([
      ['apply_patch', 'custom'],
      ['exec_command', 'function'],
    ]);
    expect(view.lastToolOutput).toContain('Script completed');
  });

  it('counts only the tool results after the last user message', () => {
    const view = read({
      model: 'm',
      input: [
        user('one'),
        { type: 'function_call', call_id: 'c1', name: 'exec_command', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'out 1' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'done' }] },
        user('two'),
        { type: 'function_call', call_id: 'c2', name: 'exec_command', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c2', output: 'out 2' },
        { type: 'custom_tool_call', call_id: 'c3', name: 'apply_patch', input: '*** Begin Patch' },
        { type: 'custom_tool_call_output', call_id: 'c3', output: 'patched' },
      ],
    });
    expect(view).toMatchObject({
      userTexts: ['one', 'two'],
      toolResultsSinceUser: 2,
      lastToolOutput: 'patched',
      stream: false,
    });
  });

  it('takes instructions as system text, a string input as the user text, and text.format as a JSON request', () => {
    const view = read({
      model: 'm',
      instructions: 'Be brief.',
      input: 'hello "there"\n',
      text: { format: { type: 'json_schema', name: 'x', schema: {} } },
    });
    expect(view).toMatchObject({
      systemText: 'Be brief.',
      userTexts: ['hello "there"\n'],
      wantsJson: true,
      tools: [],
    });
  });

  it('refuses a body without a model or input with a 400 DialectRequestError', () => {
    expect(() => read({ input: [] })).toThrow(DialectRequestError);
    expect(() => read({ model: 'm' })).toThrow(expect.objectContaining({ status: 400 }));
  });
});

describe('openai responses dialect: write', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
    server = undefined;
  });

  /** Serves one planned answer to whatever is posted, and fetches it. */
  async function answer(
    action: ModelAction,
    options: { stream?: boolean; isCut?: boolean; body?: unknown } = {},
  ): Promise<string> {
    const view = read(
      options.body ?? { model: 'gpt-5.5', stream: options.stream ?? true, input: [user('hi')] },
    );
    const planned: PlannedResponse = {
      action,
      isCut: options.isCut ?? false,
      usage: { inputTokens: 11, outputTokens: 3 },
    };
    server = createServer((_req, res) => openaiResponsesDialect.write(res, planned, view));
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', () => resolve()));
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const res = await fetch(`http://127.0.0.1:${port}/v1/responses`, { method: 'POST' });
    return readUntilDropped(res);
  }

  it('streams a text answer as created, item, deltas and completed with the usage', async () => {
    const events = sseEvents(await answer({ kind: 'text', text: 'Hello.' }));
    expect(events.map((e) => e.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.every((e) => e.data['type'] === e.event)).toBe(true);
    expect(events[4]?.data['delta']).toBe('Hello.');
    expect(events.at(-1)?.data['response']).toMatchObject({
      status: 'completed',
      output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello.' }] }],
      usage: {
        input_tokens: 11,
        output_tokens: 3,
        total_tokens: 14,
        input_tokens_details: { cached_tokens: 0 },
      },
    });
  });

  it('streams a function tool call with its arguments as JSON text', async () => {
    const action: ModelAction = {
      kind: 'tool',
      callId: 'call_1',
      name: 'exec_command',
      input: { cmd: 'ls' },
    };
    const events = sseEvents(await answer(action));
    const done = events.find((e) => e.event === 'response.output_item.done');
    expect(done?.data['item']).toMatchObject({
      type: 'function_call',
      call_id: 'call_1',
      name: 'exec_command',
      arguments: '{"cmd":"ls"}',
    });
  });

  it('streams a free-form tool call as a custom_tool_call with the text as input', async () => {
    const patch = '*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n';
    const action: ModelAction = {
      kind: 'tool',
      callId: 'call_2',
      name: 'apply_patch',
      input: {},
      freeform: patch,
    };
    const events = sseEvents(await answer(action));
    expect(events.map((e) => e.event)).toContain('response.custom_tool_call_input.delta');
    const done = events.find((e) => e.event === 'response.output_item.done');
    expect(done?.data['item']).toMatchObject({
      type: 'custom_tool_call',
      call_id: 'call_2',
      name: 'apply_patch',
      input: patch,
    });
  });

  it('wraps a tool call of a code-mode request in an exec script', async () => {
    const patch = '*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n';
    const action: ModelAction = {
      kind: 'tool',
      callId: 'call_3',
      name: 'apply_patch',
      input: {},
      freeform: patch,
    };
    const events = sseEvents(await answer(action, { body: recordedCodeMode }));
    const done = events.find((e) => e.event === 'response.output_item.done');
    expect(done?.data['item']).toMatchObject({
      type: 'custom_tool_call',
      call_id: 'call_3',
      name: 'exec',
      input: `text(await tools.apply_patch(${JSON.stringify(patch)}));\n`,
    });
  });

  it('answers a request without stream with one response object', async () => {
    const body = jsonObject.parse(
      JSON.parse(await answer({ kind: 'text', text: 'plain' }, { stream: false })),
    );
    expect(body).toMatchObject({
      object: 'response',
      status: 'completed',
      output: [{ type: 'message', content: [{ type: 'output_text', text: 'plain' }] }],
      usage: { input_tokens: 11, output_tokens: 3 },
    });
  });

  it('drops a cut stream after its first event', async () => {
    const events = sseEvents(await answer({ kind: 'text', text: 'never seen' }, { isCut: true }));
    expect(events.map((e) => e.event)).toEqual(['response.created']);
  });
});

/** The status a websocket upgrade request gets (fetch cannot send `upgrade`). */
function upgradeStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers: { connection: 'upgrade', upgrade: 'websocket' } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('upgrade', () => reject(new Error('the endpoint accepted a websocket')));
    req.on('error', reject);
    req.end();
  });
}

describe('openai responses dialect: errors and side routes', () => {
  it('writes the API error object with a type per status', () => {
    expect(openaiResponsesDialect.errorBody(400, 'bad')).toEqual({
      error: { message: 'bad', type: 'invalid_request_error', param: null, code: null },
    });
    expect(openaiResponsesDialect.errorBody(401, 'key')).toMatchObject({
      error: { code: 'invalid_api_key' },
    });
    expect(openaiResponsesDialect.errorBody(429, 'slow')).toMatchObject({
      error: { type: 'rate_limit_error' },
    });
    expect(openaiResponsesDialect.errorBody(503, 'busy')).toMatchObject({ error: { type: 'server_error' } });
  });

  it('refuses a websocket upgrade with 426 and answers real requests through the endpoint', async () => {
    await using endpoint = new ModelEndpoint({ dialects: [openaiResponsesDialect] });
    const url = await endpoint.start();
    expect(await upgradeStatus(`${url}/v1/responses`)).toBe(426);
    const plain = await fetch(`${url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', input: 'MUSUBI-MODEL: {"reply":"pong"}' }),
    });
    expect(jsonObject.parse(await plain.json())).toMatchObject({ output: [{ content: [{ text: 'pong' }] }] });
    const error = await fetch(`${url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      // With a tool offered: a request without tools is a side request, which never gets a scripted error.
      body: JSON.stringify({
        model: 'm',
        input: 'MUSUBI-MODEL: {"error":{"status":400,"message":"nope"}}',
        tools: [{ type: 'function', name: 'exec_command', parameters: { type: 'object', properties: {} } }],
      }),
    });
    expect(error.status).toBe(400);
    expect(await error.json()).toMatchObject({ error: { message: 'nope', type: 'invalid_request_error' } });
  });
});
