import { describe, expect, it } from 'vitest';
import { JsonNumber, parseJson, type JsonValue } from './json-value.js';
import { pyFloatRepr } from './py-float.js';
import { RawJson, pyJson } from './py-json.js';
import { pyRepr, pyStr, pyTuple } from './py-render.js';

function value(json: string): JsonValue {
  const parsed = parseJson(json);
  if (!parsed.ok) throw new Error(`not JSON: ${json}`);
  return parsed.value;
}

// Expected texts were produced by CPython 3 (str(), repr(), json.dumps()).
describe('python renderings', () => {
  it('renders str() and repr() of strings with Python quoting and escapes', () => {
    expect(pyRepr("it's")).toBe('"it\'s"');
    expect(pyRepr('say "hi"')).toBe('\'say "hi"\'');
    expect(pyRepr('both \' and "')).toBe("'both \\' and \"'");
    expect(pyRepr('tab\there\nnew\r')).toBe("'tab\\there\\nnew\\r'");
    expect(pyRepr('\u0000\u001f\u007f')).toBe("'\\x00\\x1f\\x7f'");
    expect(pyRepr('é日本\u00a0\u2028\u{1F514}')).toBe("'é日本\\xa0\\u2028\u{1F514}'");
    expect(pyRepr('back\\slash')).toBe("'back\\\\slash'");
    expect(pyRepr('\ud800')).toBe("'\\ud800'");
    expect(pyStr('plain')).toBe('plain');
  });

  it('renders scalars, lists and dicts like str()', () => {
    expect(pyStr(null)).toBe('None');
    expect(pyStr(true)).toBe('True');
    expect(pyStr(value('[1, 2.5, null, true, {"k": "v"}]'))).toBe("[1, 2.5, None, True, {'k': 'v'}]");
    expect(pyStr(value('{"a": [1, "x"]}'))).toBe("{'a': [1, 'x']}");
    expect(pyStr(value('[]'))).toBe('[]');
    expect(pyStr(value('{}'))).toBe('{}');
    expect(pyStr(value('12345678901234567890'))).toBe('12345678901234567890');
    expect(pyStr(value('-0'))).toBe('0');
    expect(pyStr(value('1E2'))).toBe('100.0');
    expect(pyStr(value('1.5e300'))).toBe('1.5e+300');
  });

  it('renders floats exactly like repr(float)', () => {
    const cases: Array<[number, string]> = [
      [1795975449.2908957, '1795975449.2908957'],
      [5, '5.0'],
      [1e16, '1e+16'],
      [1e15, '1000000000000000.0'],
      [1e-5, '1e-05'],
      [0.0001, '0.0001'],
      [2.5e-5, '2.5e-05'],
      [-0, '-0.0'],
      [0.1, '0.1'],
      [123456789012345.6, '123456789012345.6'],
      [Infinity, 'inf'],
    ];
    for (const [x, text] of cases) expect(pyFloatRepr(x)).toBe(text);
  });

  it('renders tuples of names with the one-element comma', () => {
    expect(pyTuple(['agent-a', 'agent-b'])).toBe("('agent-a', 'agent-b')");
    expect(pyTuple(['solo'])).toBe("('solo',)");
    expect(pyTuple([])).toBe('()');
  });

  it('serialises like json.dumps, raw or ASCII-escaped, compact or indented', () => {
    expect(pyJson(value('{"a": "日本\u007f", "b": [1, 2.0, null], "c": {}}'))).toBe(
      '{"a": "日本\u007f", "b": [1, 2.0, null], "c": {}}',
    );
    expect(pyJson({ a: '日本\u{1F514}\u007f', b: '\u0001' }, { ensureAscii: true })).toBe(
      '{"a": "\\u65e5\\u672c\\ud83d\\udd14\\u007f", "b": "\\u0001"}',
    );
    expect(pyJson(value('{"a": [1, {"b": []}], "c": {}}'), { indent: 2 })).toBe(
      '{\n  "a": [\n    1,\n    {\n      "b": []\n    }\n  ],\n  "c": {}\n}',
    );
    expect(pyJson({ lone: 'x\udc00y', pair: '\u{1F514}' })).toBe(
      '{"lone": "x\\udc00y", "pair": "\u{1F514}"}',
    );
    expect(pyJson({ raw: new RawJson('{"x": 1}'), ts: JsonNumber.float(1795975449) })).toBe(
      '{"raw": {"x": 1}, "ts": 1795975449.0}',
    );
  });
});
