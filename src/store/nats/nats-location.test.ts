import { describe, expect, it } from 'vitest';
import { isMusubiError } from '../../core/errors.js';
import { parseNatsUrl, redactNatsUrl, resolveReplicas } from './nats-location.js';

function codeOf(call: () => unknown): string | undefined {
  try {
    call();
  } catch (err) {
    return isMusubiError(err) ? err.code : String(err);
  }
  return undefined;
}

describe('parseNatsUrl', () => {
  it('fills the default port, prefix, retry budget and retention', () => {
    expect(parseNatsUrl('nats://127.0.0.1')).toEqual({
      kind: 'nats',
      servers: ['127.0.0.1:4222'],
      prefix: 'musubi',
      auth: { kind: 'none' },
      connectTimeoutMs: 10_000,
      retain: 100_000,
    });
  });

  it('reads a cluster, a prefix and every option', () => {
    const location = parseNatsUrl(
      'nats://a:4222,b.example:5222?prefix=team-1&connectTimeoutMs=500&retain=50&replicas=3',
    );
    expect(location).toMatchObject({
      servers: ['a:4222', 'b.example:5222'],
      prefix: 'team-1',
      connectTimeoutMs: 500,
      retain: 50,
      replicas: 3,
    });
  });

  it('asks for 3 replicas on a cluster of at least 3 servers unless a count is given', () => {
    expect([1, 2, 3, 5].map((size) => resolveReplicas(undefined, size))).toEqual([1, 1, 3, 3]);
    expect(resolveReplicas(1, 5)).toBe(1);
    expect(resolveReplicas(5, 1)).toBe(5);
  });

  it('reads a user and password, a token or a creds file', () => {
    expect(parseNatsUrl('nats://bob:s%40cret@h:1').auth).toEqual({
      kind: 'user',
      user: 'bob',
      pass: 's@cret',
    });
    expect(parseNatsUrl('nats://t0ken@h:1').auth).toEqual({ kind: 'token', token: 't0ken' });
    expect(parseNatsUrl('nats://h:1?token=abc').auth).toEqual({ kind: 'token', token: 'abc' });
    expect(parseNatsUrl('nats://h:1?creds=/etc/musubi/user.creds').auth).toEqual({
      kind: 'creds',
      path: '/etc/musubi/user.creds',
    });
  });

  it('reads TLS settings and nkey seeds from a file or an environment variable name', () => {
    expect(parseNatsUrl('tls://10.0.0.5:4222').tls).toEqual({});
    expect(parseNatsUrl('nats://h:1?tls=1').tls).toEqual({});
    expect(parseNatsUrl('nats://h:1').tls).toBeUndefined();
    expect(
      parseNatsUrl('nats://10.0.0.5?ca=/etc/ca.pem&cert=/etc/c.pem&key=/etc/c.key&servername=nats.internal')
        .tls,
    ).toEqual({
      caFile: '/etc/ca.pem',
      certFile: '/etc/c.pem',
      keyFile: '/etc/c.key',
      servername: 'nats.internal',
    });
    expect(parseNatsUrl('nats://h:1?nkey=/etc/musubi/user.nk').auth).toEqual({
      kind: 'nkey',
      seedFile: '/etc/musubi/user.nk',
    });
    expect(parseNatsUrl('nats://h:1?nkeyEnv=MUSUBI_NKEY_SEED').auth).toEqual({
      kind: 'nkey',
      seedEnv: 'MUSUBI_NKEY_SEED',
    });
  });

  it('rejects malformed URLs with STORE_URL_INVALID', () => {
    for (const url of [
      'nats://',
      'nats://h:1?prefix=has.dot',
      'nats://h:1?prefix=',
      'nats://h:1?nope=1',
      'nats://h:1?connectTimeoutMs=0',
      'nats://h:1?retain=x',
      'nats://h:1?replicas=0',
      'nats://h:1?replicas=6',
      'nats://h:1?replicas=two',
      'nats://h:1?cert=/c.pem',
      'nats://h:1?key=/c.key',
      'nats://h:1?tls=maybe',
      'tls://h:1?tls=0',
      'nats://h:1?tls=0&ca=/ca.pem',
      'nats://h:1?servername=-bad-',
      'nats://h:1?nkeyEnv=1BAD',
      'nats://h:1?nkey=',
      'nats://h:1?nkey=/a&token=t',
      'nats://u:p@h:1?token=t',
      'nats://h/path',
      'http://h:1',
    ]) {
      expect(
        codeOf(() => parseNatsUrl(url)),
        url,
      ).toBe('STORE_URL_INVALID');
    }
  });

  it('never repeats a password or token in its error messages', () => {
    let message = '';
    try {
      parseNatsUrl('nats://bob:hunter2@h:1?token=abc&bad=1');
    } catch (err) {
      message = String(err);
    }
    expect(message).toContain('nats://***@h:1');
    expect(message).not.toContain('hunter2');
    expect(message).not.toContain('abc');
  });
});

describe('redactNatsUrl', () => {
  it('hides user info and token parameters', () => {
    expect(redactNatsUrl('nats://bob:pw@h:1?prefix=x&token=t')).toBe('nats://***@h:1?prefix=x&token=***');
    expect(redactNatsUrl('nats://h:1?prefix=x')).toBe('nats://h:1?prefix=x');
  });
});
