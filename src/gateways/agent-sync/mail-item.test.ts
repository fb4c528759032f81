import { describe, expect, it } from 'vitest';
import { JsonNumber, parseJson, type JsonValue } from './json-value.js';
import { renderItem, seconds } from './mail-item.js';
import { pyJson } from './py-json.js';

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
