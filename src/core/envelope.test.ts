import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../test/fakes/fake-clock.js';
import { createEnvelope, envelopeInputSchema, parseEnvelope } from './envelope.js';
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
});

function withProto(proto: object | null, fields: object): object {
  return Object.assign(Object.create(proto) as object, fields);
}

const base = { from: 'a', to: 'b', type: 't' };
const symbolHeaders = { 'x-a': '1', [Symbol('s')]: '2' };
const hiddenHeaders = Object.defineProperty({ 'x-a': '1' }, 'x-hidden', { value: 3, enumerable: false });
class HeaderBag {
  'x-a' = '1';
}

// createEnvelope checks common inputs by hand and leaves the rest to the schema: both must agree.
const edgeInputs: [string, unknown][] = [
  ['minimal', base],
  [
    'all fields',
    { ...base, id: 'm1', priority: 'high', thread: 't', headers: { 'x-a': '1' }, body: 'b', createdAt: 5 },
  ],
  [
    'undefined optionals',
    {
      ...base,
      id: undefined,
      priority: undefined,
      thread: undefined,
      headers: undefined,
      body: undefined,
      createdAt: undefined,
    },
  ],
  ['null', null],
  ['array', [base]],
  ['string', 'a'],
  ['inherited fields', withProto(base, {})],
  ['null prototype', withProto(null, base)],
  ['attempt given', { ...base, attempt: 0 }],
  ['missing to', { from: 'a', type: 't' }],
  ['empty thread', { ...base, thread: '' }],
  ['thread of 256', { ...base, thread: 'x'.repeat(256) }],
  ['thread of 257', { ...base, thread: 'x'.repeat(257) }],
  ['thread with LF', { ...base, thread: 'a\nb' }],
  ['null priority', { ...base, priority: null }],
  ['createdAt -0', { ...base, createdAt: -0 }],
  ['createdAt 2^53', { ...base, createdAt: 2 ** 53 }],
  ['createdAt 1.5', { ...base, createdAt: 1.5 }],
  ['createdAt -1', { ...base, createdAt: -1 }],
  ['createdAt string', { ...base, createdAt: '5' }],
  ['ascii body at the limit', { ...base, body: 'x'.repeat(1024 * 1024) }],
  ['multi-byte body over the limit', { ...base, body: 'é'.repeat(512 * 1024 + 1) }],
  ['body number', { ...base, body: 5 }],
  [
    '64 headers',
    { ...base, headers: Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`h${i}`, 'v'])) },
  ],
  [
    '65 headers',
    { ...base, headers: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`h${i}`, 'v'])) },
  ],
  ['numeric header names', { ...base, headers: { '2': 'b', '1': 'a', z: 'c' } }],
  ['header value of 4097', { ...base, headers: { h: 'x'.repeat(4097) } }],
  ['header value with NUL', { ...base, headers: { h: 'a\0' } }],
  ['header value number', { ...base, headers: { h: 1 } }],
  ['own __proto__ header', { ...base, headers: JSON.parse('{"__proto__": "x", "h": "v"}') as unknown }],
  ['symbol header', { ...base, headers: symbolHeaders }],
  ['non-enumerable header', { ...base, headers: hiddenHeaders }],
  ['null-prototype headers', { ...base, headers: withProto(null, { h: 'v' }) }],
  ['class instance headers', { ...base, headers: new HeaderBag() }],
  ['array headers', { ...base, headers: ['v'] }],
  ['null headers', { ...base, headers: null }],
];

describe('createEnvelope - agrees with envelopeInputSchema', () => {
  it.each(edgeInputs)('%s', (_name, input) => {
    const expected = envelopeInputSchema.safeParse(input);
    let actual: ReturnType<typeof createEnvelope> | undefined;
    let caught: unknown;
    try {
      actual = createEnvelope(input, deps);
    } catch (err) {
      caught = err;
    }
    if (!expected.success) {
      // A symbol header key makes the issue path unprintable: that one fails with a TypeError.
      expect(caught).toBeInstanceOf(Error);
      return;
    }
    const v = expected.data;
    const { id, ...rest } = actual ?? { id: undefined };
    expect(rest).toStrictEqual({
      from: v.from,
      to: v.to,
      type: v.type,
      priority: v.priority ?? 'normal',
      headers: v.headers ?? {},
      body: v.body ?? '',
      createdAt: v.createdAt ?? clock.now(),
      attempt: 0,
      ...(v.thread === undefined ? {} : { thread: v.thread }),
    });
    expect(Object.keys(rest.headers ?? {})).toEqual(Object.keys(v.headers ?? {}));
    if (v.id !== undefined) expect(id).toBe(v.id);
  });

  it('copies the headers instead of keeping the caller object', () => {
    const headers = { 'x-a': '1' };
    const e = createEnvelope({ ...base, headers }, deps);
    headers['x-a'] = '2';
    expect(e.headers).toEqual({ 'x-a': '1' });
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
