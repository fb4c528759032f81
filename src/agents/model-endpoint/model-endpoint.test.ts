import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { isMusubiError } from '../../core/errors.js';
import { lastUserText, type ConversationView } from './conversation.js';
import { DialectRequestError, type Dialect } from './dialect.js';
import { ModelEndpoint, sendJson } from './model-endpoint.js';

/** A minimal dialect for the server's own behaviour: `{prompt, tools?}` in, `{text}` out. */
const echoDialect: Dialect = {
  name: 'openai-chat',
  matches: ({ method, url }) => method === 'POST' && url.pathname === '/test',
  read: ({ body }) => {
    if (typeof body !== 'object' || body === null || !('prompt' in body) || typeof body.prompt !== 'string') {
      throw new DialectRequestError(422, 'prompt missing');
    }
    return {
      model: 'test',
      stream: false,
      tools: 'tools' in body ? [{ name: 'Write', kind: 'function' }] : [],
      systemText: '',
      userTexts: [body.prompt],
      toolResultsSinceUser: 0,
      wantsJson: false,
      inputChars: body.prompt.length,
    } satisfies ConversationView;
  },
  write: (res: ServerResponse, planned, view) =>
    sendJson(res, 200, {
      text: planned.action.kind === 'text' ? planned.action.text : '',
      prompt: lastUserText(view),
    }),
  errorBody: (status, message) => ({ failure: { status, message } }),
};

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${url}/test?key=sekret`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

describe('model endpoint server', () => {
  it('answers through the matching dialect and logs the request with secrets masked', async () => {
    await using endpoint = new ModelEndpoint({ dialects: [echoDialect] });
    const url = await endpoint.start();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await post(
      url,
      { prompt: 'MUSUBI-MODEL: {"reply": "héllo \\"q\\""}', tools: true },
      {
        authorization: 'Bearer sk-secret',
      },
    );
    expect(await res.json()).toEqual({
      text: 'héllo "q"',
      prompt: 'MUSUBI-MODEL: {"reply": "héllo \\"q\\""}',
    });
    const [entry] = endpoint.requests();
    expect(entry).toMatchObject({
      dialect: 'openai-chat',
      status: 200,
      answer: 'text',
      path: '/test?key=%5Bredacted%5D',
    });
    expect(entry?.headers['authorization']).toBe('[redacted]');
    expect(JSON.stringify(endpoint.requests())).not.toContain('sekret');
    expect(JSON.stringify(endpoint.requests())).not.toContain('sk-secret');
  });

  it('answers scripted errors, bad bodies and unknown routes in the API error shape', async () => {
    await using endpoint = new ModelEndpoint({ dialects: [echoDialect] });
    const url = await endpoint.start();
    const scripted = await post(url, {
      prompt: 'MUSUBI-MODEL: {"error": {"status": 429, "message": "slow down"}}',
      tools: 1,
    });
    expect(scripted.status).toBe(429);
    expect(await scripted.json()).toEqual({ failure: { status: 429, message: 'slow down' } });
    const invalid = await post(url, { nothing: true });
    expect(invalid.status).toBe(422);
    expect(await invalid.json()).toEqual({ failure: { status: 422, message: 'prompt missing' } });
    const notJson = await fetch(`${url}/test`, { method: 'POST', body: '{oops' });
    expect(notJson.status).toBe(400);
    const unknown = await fetch(`${url}/v9/nothing`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: { message: 'no model API at GET /v9/nothing' } });
  });

  it('keeps a hanging answer open until the endpoint closes', async () => {
    const endpoint = new ModelEndpoint({ dialects: [echoDialect] });
    const url = await endpoint.start();
    const pending = post(url, { prompt: 'MUSUBI-MODEL: "hang"', tools: 1 }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 100));
    await endpoint.close();
    expect(await pending).toBeInstanceOf(Error);
    await endpoint.close(); // idempotent
    expect(endpoint.requests()[0]).toMatchObject({ answer: 'hang' });
  });

  it('refuses a host that is not loopback', async () => {
    const err: unknown = await new ModelEndpoint({ dialects: [], host: '0.0.0.0' })
      .start()
      .catch((e: unknown) => e);
    expect(isMusubiError(err, 'CONFIG_INVALID')).toBe(true);
  });
});
