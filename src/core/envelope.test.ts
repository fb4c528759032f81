import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../test/fakes/fake-clock.js';
import { createEnvelope, envelopeInputSchema, isOneLine, parseEnvelope } from './envelope.js';
import { isMusubiError } from './errors.js';
import { createIdGenerator } from './ids.js';
import { assertKvKey, assertMailboxName } from './names.js';

const clock = new FakeClock();
const deps = { clock, ids: createIdGenerator(clock) };

describe('envelope', () => {
  it('fills id, priority, headers, body, createdAt and attempt when created from minimal input', () => {
    const e = createEnvelope({ from: 'lead', to: 'worker-1', type: 'task' }, deps);
    expect(e).toMatchObject({
      from: 'lead',
      to: 'worker-1',
      priority: 'normal',
      headers: {},
      body: '',
      attempt: 0,
    });
    expect(e.createdAt).toBe(clock.now());
    expect(parseEnvelope(e)).toEqual(e);
  });

  it.each([
    [{ from: 'a', to: 'b' }, 'type'],
    [{ from: 'a', to: '../b', type: 't' }, 'to'],
    [{ from: 'a', to: 'b', type: 't', priority: 'urgent' }, 'priority'],
    [{ from: 'a', to: 'b', type: 't', id: 'x:y' }, 'id'],
    [{ from: 'a', to: 'b', type: 't', headers: { 'x-h': 'a\r\nInjected: 1' } }, 'headers'],
    ...['\u2028', '\u2029', '\u0085', '\v', '\f', '\u001e', '\u007f', '\0'].map((c): [object, string] => [
      { from: 'a', to: 'b', type: 't', headers: { 'x-h': `a${c}b` } },
      'headers',
    ]),
    [{ from: 'a', to: 'b', type: 't', thread: 'a\u2028b' }, 'thread'],
    [{ from: 'a', to: 'b', type: 't', body: 'x'.repeat(1024 * 1024 + 1) }, 'body'],
    [{ from: 'a', to: 'b', type: 't', extra: 1 }, '(root)'],
  ])('rejects %j with ENVELOPE_INVALID naming %s', (input, field) => {
    let caught: unknown;
    try {
      createEnvelope(input, deps);
    } catch (err) {
      caught = err;
    }
    expect(isMusubiError(caught, 'ENVELOPE_INVALID')).toBe(true);
    expect(String(caught instanceof Error ? caught.message : '')).toContain(field);
  });

  it('accepts exactly what the input schema accepts (the hand-written fast check never widens it)', () => {
    const base = { from: 'lead', to: 'worker-1', type: 'task' };
    const variants: Record<string, unknown[]> = {
      id: [undefined, 'abc', 'a'.repeat(128), 'a'.repeat(129), '.x', '', 'x y', 7],
      from: ['lead', '', '-a', 'a/b', 'a'.repeat(129), null],
      to: ['w', '../b', 'A_b.c-d', 3],
      type: ['task', 'a:b/c', ':a', 'a b', '', 'a'.repeat(129)],
      priority: [undefined, 'critical', 'low', 'urgent', 1],
      thread: [undefined, 't', '', 'x'.repeat(256), 'x'.repeat(257), 'a\tb', 'a\u2028b', 5],
      headers: [
        undefined,
        {},
        { 'x-h': 'v' },
        { 'x-h': 'a'.repeat(4096) },
        { 'x-h': 'a'.repeat(4097) },
        { _h: 'v' },
        { 'x-h': 'a\nb' },
        { 'x-h': 1 },
        Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`h${i}`, 'v'])),
        Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`h${i}`, 'v'])),
        [],
        null,
      ],
      body: [undefined, '', 'hello', '\u00e9'.repeat(524_288), '\u00e9'.repeat(524_289), 4],
      createdAt: [undefined, 0, 1_700_000_000_000, -1, 1.5, Number.MAX_SAFE_INTEGER + 2, Number.NaN, '1'],
    };
    const inputs: unknown[] = [null, [], 'text', { ...base, extra: 1 }, Object.create({ from: 'a' })];
    for (const [field, values] of Object.entries(variants)) {
      for (const value of values) inputs.push({ ...base, [field]: value });
    }
    for (const input of inputs) {
      const isAccepted = envelopeInputSchema.safeParse(input).success;
      let created: unknown;
      try {
        created = createEnvelope(input, deps);
      } catch (err) {
        expect(isMusubiError(err, 'ENVELOPE_INVALID'), JSON.stringify(input)?.slice(0, 200)).toBe(true);
      }
      expect(created !== undefined, JSON.stringify(input)?.slice(0, 200)).toBe(isAccepted);
    }
  });

  it("copies the sender's headers into the envelope", () => {
    const headers = { 'x-h': 'v' };
    const e = createEnvelope({ from: 'a', to: 'b', type: 't', headers }, deps);
    headers['x-h'] = 'changed';
    expect(e.headers).toEqual({ 'x-h': 'v' });
  });
});

describe('one-line text (header values, threads)', () => {
  it('keeps tabs and non-ASCII text', () => {
    const e = createEnvelope(
      { from: 'a', to: 'b', type: 't', thread: 'a\tb', headers: { 'x-h': 'tab\there · 日本 é' } },
      deps,
    );
    expect(e.headers['x-h']).toBe('tab\there · 日本 é');
    expect(isOneLine('x\ty')).toBe(true);
    expect(isOneLine('x\u2029y')).toBe(false);
  });
});

describe('stored envelopes written before the one-line rule', () => {
  it('still decode with a U+2028 or a vertical tab in a header value or thread', () => {
    const stored = { ...createEnvelope({ from: 'a', to: 'b', type: 't' }, deps), thread: 'x\u2028y' };
    const old = { ...stored, headers: { 'x-h': 'a\vb' } };
    expect(parseEnvelope(old)).toEqual(old);
    expect(() => parseEnvelope({ ...stored, headers: { 'x-h': 'a\nb' } })).toThrow(/CR, LF or NUL/);
  });
});

describe('names', () => {
  it.each(['worker-1', 'agent_sync.a', '_x', 'A'.repeat(128)])('accepts mailbox name %s', (name) => {
    expect(assertMailboxName(name)).toBe(name);
  });

  it.each(['', '../x', 'a/b', '.x', '-x', 'a\0b', 'a b', 'A'.repeat(129), 42])(
    'rejects mailbox name %j',
    (name) => {
      expect(() => assertMailboxName(name)).toThrow(/MAILBOX_NAME_INVALID|invalid mailbox name/);
    },
  );

  it.each(['rounds/phase', 'task.1', 'a=b'])('accepts KV key %s', (key) =>
    expect(assertKvKey(key)).toBe(key),
  );
  it.each(['', '.a', 'a.', 'a..b', 'a b', 'x'.repeat(256)])('rejects KV key %j', (key) => {
    expect(() => assertKvKey(key)).toThrow(/invalid key/);
  });
});
