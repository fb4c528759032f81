import { describe, expect, it } from 'vitest';
import { isMusubiError } from '../../core/errors.js';
import { RequestGuard, type GuardedRequest } from './request-guard.js';

const req = (method: string, url: string, headers: GuardedRequest['headers']): GuardedRequest => ({
  method,
  url,
  headers,
});

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return isMusubiError(err) ? err.code : 'not a MusubiError';
  }
}

describe('request guard', () => {
  const loopback = new RequestGuard({ host: '127.0.0.1', port: () => 7420 });

  it('lets loopback names with the bound port through and refuses any other Host', () => {
    for (const host of ['127.0.0.1:7420', 'localhost:7420', '[::1]:7420', 'LOCALHOST:7420']) {
      expect(loopback.check(req('GET', '/', { host }))).toEqual({ kind: 'pass' });
    }
    for (const host of ['evil.example:7420', '127.0.0.1:80', '127.0.0.1', undefined]) {
      expect(codeOf(() => loopback.check(req('GET', '/', { host })))).toBe('GATEWAY_FORBIDDEN');
    }
  });

  it('refuses mutations from a foreign origin or a cross-site fetch, but not from clients without Origin', () => {
    const host = '127.0.0.1:7420';
    expect(
      codeOf(() => loopback.check(req('POST', '/api/say', { host, origin: 'http://evil.example' }))),
    ).toBe('GATEWAY_FORBIDDEN');
    expect(codeOf(() => loopback.check(req('POST', '/api/say', { host, origin: 'null' })))).toBe(
      'GATEWAY_FORBIDDEN',
    );
    expect(codeOf(() => loopback.check(req('DELETE', '/x', { host, 'sec-fetch-site': 'cross-site' })))).toBe(
      'GATEWAY_FORBIDDEN',
    );
    expect(loopback.check(req('POST', '/api/say', { host, origin: 'http://127.0.0.1:7420' }))).toEqual({
      kind: 'pass',
    });
    expect(loopback.check(req('POST', '/api/say', { host }))).toEqual({ kind: 'pass' });
    expect(loopback.check(req('GET', '/api/agents', { host, origin: 'http://evil.example' }))).toEqual({
      kind: 'pass',
    });
  });

  it('needs the token beyond loopback, from a Bearer header, the cookie, or once as /?token=', () => {
    const token = 'abcdefghijklmnop-123';
    const guard = new RequestGuard({ host: '0.0.0.0', port: () => 7420, token });
    const host = 'box.lan:7420';
    expect(codeOf(() => guard.check(req('GET', '/api/agents', { host })))).toBe('GATEWAY_UNAUTHORIZED');
    expect(codeOf(() => guard.check(req('GET', '/api/agents', { host, authorization: 'Bearer nope' })))).toBe(
      'GATEWAY_UNAUTHORIZED',
    );
    expect(guard.check(req('GET', '/api/agents', { host, authorization: `Bearer ${token}` }))).toEqual({
      kind: 'pass',
    });
    expect(guard.check(req('GET', '/api/x', { host, cookie: `a=b; musubi_token_7420=${token}` }))).toEqual({
      kind: 'pass',
    });
    // A cookie of another port's hub (browsers send cookies to every port of a host) is not this one's.
    expect(
      codeOf(() => guard.check(req('GET', '/api/x', { host, cookie: `musubi_token_7421=${token}` }))),
    ).toBe('GATEWAY_UNAUTHORIZED');
    expect(guard.check(req('GET', `/?token=${token}`, { host }))).toEqual({
      kind: 'login',
      setCookie: `musubi_token_7420=${token}; HttpOnly; SameSite=Strict; Path=/`,
      location: '/',
    });
    expect(codeOf(() => guard.check(req('GET', `/api/agents?token=${token}`, { host })))).toBe(
      'GATEWAY_UNAUTHORIZED',
    );
  });

  it('lets a GET or HEAD of a public path through without the token, and nothing else', () => {
    const guard = new RequestGuard({
      host: '127.0.0.1',
      port: () => 7420,
      token: 'abcdefghijklmnop-123',
      publicPaths: new Set(['/', '/app.js', '/api/health']),
    });
    const host = '127.0.0.1:7420';
    for (const [method, url] of [
      ['GET', '/'],
      ['HEAD', '/app.js'],
      ['GET', '/api/health'],
      ['GET', '/?token=wrong'],
    ] as const) {
      expect(guard.check(req(method, url, { host }))).toEqual({ kind: 'pass' });
    }
    for (const [method, url] of [
      ['POST', '/'],
      ['GET', '/api/turns'],
      ['POST', '/api/runs'],
      ['GET', '/api/health/../turns'],
      ['GET', '/app.js/x'],
    ] as const) {
      expect(codeOf(() => guard.check(req(method, url, { host })))).toBe('GATEWAY_UNAUTHORIZED');
    }
  });

  it('answers a request target that is no URL (`//`) 401 like any request without the token', () => {
    const guard = new RequestGuard({ host: '0.0.0.0', port: () => 7420, token: 'abcdefghijklmnop-123' });
    expect(codeOf(() => guard.check(req('GET', '//', { host: 'box.lan:7420' })))).toBe(
      'GATEWAY_UNAUTHORIZED',
    );
  });
});
