import { describe, expect, it } from 'vitest';
import { pyJson } from '../../core/python/json-dumps.js';
import { JsonNumber, parseJson, type JsonValue } from '../../core/python/json-loads.js';
import { envelopeItem, ITEM_HEADER, renderItem, seconds } from './mail-item.js';

function parsed(text: string): JsonValue {
  const result = parseJson(text);
  if (!result.ok) throw new Error(`bad JSON in test: ${text}`);
  return result.value;
}

const values: JsonValue[] = [
  'user',
  '',
  'héllo wörld 🎉',
  'quote " backslash \\ newline \n tab \t nul \u0000 del \u007f',
  '\ud800 lone and pair \ud83d\ude00',
  null,
  true,
  new JsonNumber('5'),
  new JsonNumber('12345678901234567890'),
  new JsonNumber('1.50'),
  new JsonNumber('-0.0'),
  new JsonNumber('1e400'),
  parsed('[1, "a", {"k": [null, false]}]'),
  parsed('{"nested": {"é": "x"}, "n": 2.5e-7}'),
];
const times = [0, -0, 1, 1_700_000_000_123, 1_700_000_000_100, 8.64e15, 1e20, -5, NaN, Infinity, -Infinity];

describe('renderItem', () => {
  it('renders exactly as pyJson of {from, type, text, ts}', () => {
    for (const v of values) {
      for (const tsMs of times) {
        const item = { from: v, type: 'message', text: v, tsMs };
        const expected = pyJson({ from: item.from, type: item.type, text: item.text, ts: seconds(tsMs) });
        const rendered = renderItem(item);
        expect(rendered.json).toBe(expected);
        expect(rendered.bytes).toBe(Buffer.byteLength(expected, 'utf8'));
      }
    }
  });
});

describe('envelopeItem', () => {
  const envelope = (body: string) => ({
    id: 'e1',
    from: 'mcp-agent',
    to: 'agent-b',
    type: 'note',
    priority: 'normal' as const,
    headers: { [ITEM_HEADER]: 'json' },
    body,
    createdAt: 0,
    attempt: 0,
  });

  it('puts an item sent as pretty-printed JSON on one line, so it cannot split the NDJSON reply', () => {
    const item = envelopeItem(envelope('{\n  "from": "x",\r\n  "text": "two\\nlines"\n}'));
    expect(item.json).toBe('{"from": "x", "text": "two\\nlines"}');
    expect(item.bytes).toBe(Buffer.byteLength(item.json, 'utf8'));
  });

  it('keeps a one-line item as it was stored', () => {
    const body = '{"from": 5, "type": "message", "text": [1], "ts": 1.5}';
    expect(envelopeItem(envelope(body)).json).toBe(body);
  });
});
