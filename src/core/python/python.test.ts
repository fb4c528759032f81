import { describe, expect, it } from 'vitest';
import { RawJson, pyJson } from './json-dumps.js';
import { JsonNumber, isJsonArray, parseJson, type JsonValue } from './json-loads.js';
import { parsePyFloat, parsePyInt, pyFloatRepr, pyIntOf } from './numbers.js';
import { isTruthy, pyRepr, pyStr, pyTuple, pyTypeName } from './repr.js';
import { firstCodePoints, hasMoreCodePoints, pySplitLines, pyStrip } from './text.js';

// Every expected value in these tables is what CPython 3.11.7 printed for the row's input, pasted in
// once; the test runs without Python. Rows read `[input, Python's output, ...]`.

/** Where parseJson deliberately differs from json.loads (docs of parseJson). */
type Deviation = 'refused' | 'out of range';

// [JSON text, str(json.loads(text)) or the exception it raises, musubi's deliberate deviation]
// prettier-ignore
const LOADS: ReadonlyArray<readonly [string, string, Deviation?]> = [
  ['[1, 1.0, 1e2, 1E2, -0, -0.0, 12345678901234567890]', '[1, 1.0, 100.0, 100.0, 0, -0.0, 12345678901234567890]'],
  ['{"b": 1, "a": 2, "b": 3, "__proto__": 4}', "{'b': 3, 'a': 2, '__proto__': 4}"],
  // Flat objects (what parseJson reads natively, recovering number tokens from the text) and near misses.
  ['{"cmd": "listen", "agent": "a", "timeout": 5}', "{'cmd': 'listen', 'agent': 'a', 'timeout': 5}"],
  ['{"a": 1, "b": -0, "c": 12345678901234567890, "d": 1.0, "e": 2E1}', "{'a': 1, 'b': 0, 'c': 12345678901234567890, 'd': 1.0, 'e': 20.0}"],
  ['{"b": -0, "x": -5, "y": 0, "z": 123456789012345, "w": 1234567890123456}', "{'b': 0, 'x': -5, 'y': 0, 'z': 123456789012345, 'w': 1234567890123456}"],
  ['{"2": "x", "1": "y", "a": 3}', "{'2': 'x', '1': 'y', 'a': 3}"], ['{"a": "x", "b": 2, "a": 1}', "{'a': 1, 'b': 2}"],
  ['{"t": true, "f": false, "n": null, "s": "\\u00e9\\n"}', "{'t': True, 'f': False, 'n': None, 's': 'é\\n'}"],
  ['{"x": "1: 2", "y": 3, "z": "\\"4:"}', `{'x': '1: 2', 'y': 3, 'z': '"4:'}`], [' \t{"a": 1}\r ', "{'a': 1}"],
  ['{"a": [1], "b": 2}', "{'a': [1], 'b': 2}"], ['{"a":"b"\t,"c"\t:\t-0}', "{'a': 'b', 'c': 0}"],
  ['{"a"  :  "日本" , "b":null}', "{'a': '日本', 'b': None}"], ['{"a": 01}', 'JSONDecodeError'],
  ['{"a": 1.}', 'JSONDecodeError'], ['{"a": truex}', 'JSONDecodeError'], ['{"a": "x",}', 'JSONDecodeError'],
  ['{"a": "x"} y', 'JSONDecodeError'], ['{"a": "x\\u0001"}', "{'a': 'x\\x01'}"], ['{"a": "x\u0001"}', 'JSONDecodeError'],
  [' \t{"a": "\\ud800"}\r\n', "{'a': '\\ud800'}"], ['"\\ud83d\\ude00 \\u00e9\\/"', '😀 é/'],
  ['[1.5e300, 1e-400, 2.5e-7, 1e16, 0.1, 5e-324, 1.7976931348623157e308]', '[1.5e+300, 0.0, 2.5e-07, 1e+16, 0.1, 5e-324, 1.7976931348623157e+308]'],
  ['[]', '[]'], ['{}', '{}'], ['{"a": [1, "x"]}', "{'a': [1, 'x']}"],
  ['[1, 2.5, null, true, {"k": "v"}]', "[1, 2.5, None, True, {'k': 'v'}]"],
  ['12345678901234567890', '12345678901234567890'], ['-0', '0'], ['1E2', '100.0'], ['1.5e300', '1.5e+300'],
  ["'a'", 'JSONDecodeError'], ['', 'JSONDecodeError'], [' ', 'JSONDecodeError'], ['{', 'JSONDecodeError'],
  ['{"a":1,}', 'JSONDecodeError'], ['[1 2]', 'JSONDecodeError'], ['"a\u0001"', 'JSONDecodeError'],
  ['01', 'JSONDecodeError'], ['1.', 'JSONDecodeError'], ['{} x', 'JSONDecodeError'],
  ['\ufeff{}', 'JSONDecodeError'], ['[1,', 'JSONDecodeError'], ['NaN', 'nan', 'refused'],
  ['[NaN]', '[nan]', 'refused'], ['Infinity', 'inf', 'refused'], ['-Infinity', '-inf', 'refused'],
  ['1e400', 'inf', 'out of range'], ['{"a": -2.5E+999}', "{'a': -inf}", 'out of range'],
  [`-${'1'.repeat(4300)}`, `-${'1'.repeat(4300)}`], [`[${'1'.repeat(4301)}]`, 'ValueError'],
  [`-${'1'.repeat(4301)}`, 'ValueError'], [`1.${'0'.repeat(5000)}`, '1.0'],
  ['['.repeat(60_000) + ']'.repeat(60_000), 'RecursionError'],
];

// [JSON text, repr(json.loads(text)), str(...), JSON.parse gives a value Python's rules see alike]
// prettier-ignore
const REPR: ReadonlyArray<readonly [string, string, string, boolean]> = [
  ['"it\'s"', '"it\'s"', "it's", true], ['"say \\"hi\\""', '\'say "hi"\'', 'say "hi"', true],
  ['"both \' and \\""', '\'both \\\' and "\'', 'both \' and "', true],
  ['"tab\\there\\nnew\\r"', "'tab\\there\\nnew\\r'", 'tab\there\nnew\r', true],
  ['"\\u0000\\u001f\\u007f"', "'\\x00\\x1f\\x7f'", '\u0000\u001f\u007f', true],
  ['"é日本\\u00a0\\u2028\\ud83d\\udd14"', "'é日本\\xa0\\u2028🔔'", 'é日本\u00a0\u2028🔔', true],
  ['"back\\\\slash"', "'back\\\\slash'", 'back\\slash', true], ['"\\ud800"', "'\\ud800'", '\ud800', true],
  ['"plain"', "'plain'", 'plain', true],
  ['"\\u0085\\u00ad\\u200b\\ufeff\\u3000 x"', "'\\x85\\xad\\u200b\\ufeff\\u3000 x'", '\u0085\u00ad\u200b\ufeff\u3000 x', true],
  ['"\\u0301\\u1680\\u00ff\\u0100"', "'\u0301\\u1680ÿĀ'", '\u0301\u1680ÿĀ', true],
  ['"\\ud83d\\ude00\\udb40\\udc01"', "'😀\\U000e0001'", '😀\u{e0001}', true], ['null', 'None', 'None', true],
  ['true', 'True', 'True', true], ['false', 'False', 'False', true],
  ['[1, "a"]', "[1, 'a']", "[1, 'a']", true], ['{"k": null}', "{'k': None}", "{'k': None}", true],
  ['[[], {}, [{"x": ["y", false]}]]', "[[], {}, [{'x': ['y', False]}]]", "[[], {}, [{'x': ['y', False]}]]", true],
  ['{"it\'s": "a\\"b"}', '{"it\'s": \'a"b\'}', '{"it\'s": \'a"b\'}', true],
  ['{"2": 1, "b": 2}', "{'2': 1, 'b': 2}", "{'2': 1, 'b': 2}", false], ['3', '3', '3', true],
  ['-7', '-7', '-7', true], ['1.5', '1.5', '1.5', true], ['1.0', '1.0', '1.0', false],
  ['-0.0', '-0.0', '-0.0', false], ['1e-5', '1e-05', '1e-05', true],
  ['9007199254740993', '9007199254740993', '9007199254740993', false],
];

// [JSON text, type(json.loads(text)).__name__, bool(...), JSON.parse gives a value Python sees alike]
// prettier-ignore
const TYPES: ReadonlyArray<readonly [string, string, boolean, boolean]> = [
  ['"x"', 'str', true, true], ['""', 'str', false, true], ['null', 'NoneType', false, true],
  ['true', 'bool', true, true], ['false', 'bool', false, true], ['0', 'int', false, true],
  ['7', 'int', true, true], ['0.0', 'float', false, false], ['-0.0', 'float', false, false],
  ['1e-400', 'float', false, false], ['2.5', 'float', true, true], ['[]', 'list', false, true],
  ['[0]', 'list', true, true], ['{}', 'dict', false, true], ['{"a": 0}', 'dict', true, true],
  ['1.0', 'float', true, false], ['0e5', 'float', false, false],
  ['123456789012345678901234567890', 'int', true, false],
];

// [JSON text, json.dumps(json.loads(text), ensure_ascii=False), ... ensure_ascii=True,
//  JSON.parse gives a value Python sees alike]
// prettier-ignore
const DUMPS: ReadonlyArray<readonly [string, string, string, boolean]> = [
  ['{"a": "日本\\u007f", "b": [1, 2.0, null], "c": {}}', '{"a": "日本\u007f", "b": [1, 2.0, null], "c": {}}', '{"a": "\\u65e5\\u672c\\u007f", "b": [1, 2.0, null], "c": {}}', false],
  ['{"a": "日本\\ud83d\\udd14\\u007f", "b": "\\u0001"}', '{"a": "日本🔔\u007f", "b": "\\u0001"}', '{"a": "\\u65e5\\u672c\\ud83d\\udd14\\u007f", "b": "\\u0001"}', true],
  ['{"a": [1, {"b": []}], "c": {}}', '{"a": [1, {"b": []}], "c": {}}', '{"a": [1, {"b": []}], "c": {}}', true],
  ['[1e16, 0.1, 1.0, -0.0, 5e-324, 1e-5, 123456789012345678901234567890, 1E+2, 2.50]', '[1e+16, 0.1, 1.0, -0.0, 5e-324, 1e-05, 123456789012345678901234567890, 100.0, 2.5]', '[1e+16, 0.1, 1.0, -0.0, 5e-324, 1e-05, 123456789012345678901234567890, 100.0, 2.5]', false],
  ['"q\\"b\\\\ \\b\\f\\n\\r\\t \\u001f \\u2028 é"', '"q\\"b\\\\ \\b\\f\\n\\r\\t \\u001f \u2028 é"', '"q\\"b\\\\ \\b\\f\\n\\r\\t \\u001f \\u2028 \\u00e9"', true],
  ['[true, false, null, "", []]', '[true, false, null, "", []]', '[true, false, null, "", []]', true],
  ['{"k": {"n": [1, [2, {"m": null}]]}}', '{"k": {"n": [1, [2, {"m": null}]]}}', '{"k": {"n": [1, [2, {"m": null}]]}}', true],
  ['"\\ud83d\\ude00"', '"😀"', '"\\ud83d\\ude00"', true],
  ['{"type": "error", "from": "yadon-1", "message": "日本語\\n\\"q\\"", "n": [1, null, true]}', '{"type": "error", "from": "yadon-1", "message": "日本語\\n\\"q\\"", "n": [1, null, true]}', '{"type": "error", "from": "yadon-1", "message": "\\u65e5\\u672c\\u8a9e\\n\\"q\\"", "n": [1, null, true]}', true],
];

// [JSON text, json.dumps(json.loads(text), ensure_ascii=False, indent=2)]
// prettier-ignore
const INDENTED: ReadonlyArray<readonly [string, string]> = [
  ['{"a": [1, {"b": []}], "c": {}}', '{\n  "a": [\n    1,\n    {\n      "b": []\n    }\n  ],\n  "c": {}\n}'],
  ['[{"é": [null, 2.0]}, []]', '[\n  {\n    "é": [\n      null,\n      2.0\n    ]\n  },\n  []\n]'],
];

// [a JS value, the Python value it stands for, str() of that, json.dumps() of that]
// prettier-ignore
const PLAIN: ReadonlyArray<readonly [unknown, string, string, string]> = [
  [1e21, '1e21', '1e+21', '1e+21'], [2 ** 53 + 2, '2**53+2', '9007199254740994', '9007199254740994'],
  [2 ** 53, '2**53', '9007199254740992', '9007199254740992'], [-0, 'int(-0.0)', '0', '0'],
  [0.1, '0.1', '0.1', '0.1'], [1e-7, '1e-7', '1e-07', '1e-07'], [5e-324, '5e-324', '5e-324', '5e-324'],
  [1.5, '1.5', '1.5', '1.5'], [3, '3', '3', '3'], [2.5e-5, '2.5e-5', '2.5e-05', '2.5e-05'],
  [123456789.125, '123456789.125', '123456789.125', '123456789.125'], [NaN, "float('nan')", 'nan', 'NaN'],
  [Infinity, "float('inf')", 'inf', 'Infinity'], [-Infinity, "float('-inf')", '-inf', '-Infinity'],
  [undefined, 'None', 'None', 'null'], [[undefined, 1], '[None, 1]', '[None, 1]', '[null, 1]'],
  [{ a: undefined, b: 'x' }, "{'b': 'x'}", "{'b': 'x'}", '{"b": "x"}'],
  [new Map([['k', null]]), "{'k': None}", "{'k': None}", '{"k": null}'],
  [{ k: null, l: [1, 'a'], s: "it's" }, '{\'k\': None, \'l\': [1, \'a\'], \'s\': "it\'s"}', '{\'k\': None, \'l\': [1, \'a\'], \'s\': "it\'s"}', '{"k": null, "l": [1, "a"], "s": "it\'s"}'],
];

// [x, repr(x)]
// prettier-ignore
const FLOAT_REPR: ReadonlyArray<readonly [number, string]> = [
  [1795975449.2908957, '1795975449.2908957'], [5.0, '5.0'], [1e+16, '1e+16'],
  [1000000000000000.0, '1000000000000000.0'], [1e-05, '1e-05'], [0.0001, '0.0001'], [2.5e-05, '2.5e-05'],
  [-0.0, '-0.0'], [0.1, '0.1'], [123456789012345.6, '123456789012345.6'], [Infinity, 'inf'],
  [-Infinity, '-inf'], [NaN, 'nan'], [5e-324, '5e-324'], [1e+22, '1e+22'],
  [1.7976931348623157e+308, '1.7976931348623157e+308'], [-1.5e-07, '-1.5e-07'],
  [0.30000000000000004, '0.30000000000000004'], [9007199254740992.0, '9007199254740992.0'],
  [0.00030000000000000003, '0.00030000000000000003'],
];

// [s, s.strip()]
// prettier-ignore
const STRIP: ReadonlyArray<readonly [string, string]> = [
  ['\u001c\u0085\u00a0\u3000 x \t\n', 'x'], ['\ufeffx', '\ufeffx'],
  ['\u001f\u001e\u001d\u001cx\u000b\u000c', 'x'], ['\u200bx\u200b', '\u200bx\u200b'], ['\u180ex', '\u180ex'],
  ['\u2000\u200a\u2028\u2029\u202f\u205fx\u1680', 'x'], ['  ', ''], ['', ''], ['a b', 'a b'],
];

// [s, s.splitlines()]
// prettier-ignore
const SPLITLINES: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['a\r\nb\rc\nd', ['a', 'b', 'c', 'd']], ['a\n', ['a']], ['a\n\n', ['a', '']], ['', []], ['\n', ['']],
  ['x\u000by\u000cz\u001c1\u001d2\u001e3\u001f4\u00855\u20286\u20297', ['x', 'y', 'z', '1', '2', '3\u001f4', '5', '6', '7']],
  ['a\r', ['a']], ['a\r\n\r\nb', ['a', '', 'b']], ['no break', ['no break']],
];

// [s, int(s) (undefined: ValueError); past 2 ** 53 a JS number keeps only the magnitude, here Infinity]
// prettier-ignore
const INT: ReadonlyArray<readonly [string, number | undefined]> = [
  [' 3 ', 3], ['+7', 7], ['-2', -2], ['1_000', 1000], ['007', 7], ['3.0', undefined], ['abc', undefined],
  ['', undefined], ['_1', undefined], ['1__0', undefined], ['1_', undefined], [' -3 ', -3],
  ['\u001c5', undefined], ['5\u001f', undefined], ['\u00a05\u3000', 5], ['\u00855', 5],
  ['\ufeff5', undefined], ['３', 3], ['٣_٣', 33], ['𝟗𝟘', 90], ['-0', 0], ['+', undefined], ['- 1', undefined],
  ['1e3', undefined], ['0x10', undefined], ['1'.repeat(4300), Number('1'.repeat(4300))],
  ['0'.repeat(4300) + '1', undefined], ['1_'.repeat(4299) + '1', Number('1'.repeat(4300))],
  ['1_'.repeat(4300) + '1', undefined],
];

// [s, float(s) (undefined: ValueError)]
// prettier-ignore
const FLOAT: ReadonlyArray<readonly [string, number | undefined]> = [
  [' 2.5 ', 2.5], ['1e3', 1000.0], ['1_0.5', 10.5], ['.5', 0.5], ['5.', 5.0], ['1.e5', 100000.0],
  ['1_e5', undefined], ['1e1_0', 10000000000.0], ['-0', -0.0], ['inf', Infinity], [' -Infinity ', -Infinity],
  ['nAn', NaN], ['-nan', NaN], ['0x10', undefined], ['', undefined], ['.', undefined], ['e5', undefined],
  ['１.５', 1.5], ['\u001c1.5', undefined], ['1e400', Infinity], ['+1.5E-3', 0.0015], ['1__0', undefined],
  ['in f', undefined],
];

// [JSON text, int(json.loads(text)) (undefined: ValueError or TypeError)]
// prettier-ignore
const INT_OF: ReadonlyArray<readonly [string, number | undefined]> = [
  ['2.9', 2], ['-2.9', -2], ['true', 1], ['false', 0], ['"2500"', 2500], ['" 2_500 "', 2500],
  ['"abc"', undefined], ['null', undefined], ['{}', undefined], ['[1]', undefined], ['"2.5"', undefined],
  ['-0.5', 0], ['7', 7],
];

// [names, repr(tuple(names))]
// prettier-ignore
const TUPLE: ReadonlyArray<readonly [readonly string[], string]> = [
  [['agent-a', 'agent-b'], "('agent-a', 'agent-b')"], [['solo'], "('solo',)"], [[], '()'],
  [["it's"], '("it\'s",)'],
];

// [s, n, s[:n], len(s) > n]
// prettier-ignore
const CODE_POINTS: ReadonlyArray<readonly [string, number, string, boolean]> = [
  ['😀😀😀', 2, '😀😀', true], ['😀😀', 2, '😀😀', false], ['ab', 5, 'ab', false], ['a😀b', 2, 'a😀', true],
  ['', 0, '', false],
];

// What json.loads raising each exception means for parseJson.
const LOADS_ERRORS: Readonly<Record<string, Deviation>> = {
  JSONDecodeError: 'refused',
  RecursionError: 'refused',
  ValueError: 'out of range',
};

function loads(text: string): JsonValue {
  const parsed = parseJson(text);
  if (!parsed.ok) throw new Error(`not JSON: ${text}`);
  return parsed.value;
}

/** The parsed value of `text`, and its JSON.parse value too when Python's rules see that one alike. */
function values(text: string, isPlain: boolean): unknown[] {
  const plain: unknown = JSON.parse(text);
  return isPlain ? [loads(text), plain] : [loads(text)];
}

function label(input: unknown): string {
  return (typeof input === 'string' ? JSON.stringify(input) : String(input)).slice(0, 80);
}

describe('python compatibility', () => {
  it('parses like json.loads, keeping number tokens, refusing NaN, Infinity and unreadable numbers', () => {
    for (const [text, python, deviation] of LOADS) {
      const outcome = deviation ?? LOADS_ERRORS[python];
      const parsed = parseJson(text);
      if (outcome === undefined) expect(parsed.ok && pyStr(parsed.value), label(text)).toBe(python);
      else
        expect(parsed, label(text)).toEqual({
          ok: false,
          ...(outcome === 'out of range' && { isNumberOutOfRange: true }),
        });
    }
    const tokens = loads('[1, 1.0, 1e2, -0, 12345678901234567890]');
    expect(
      isJsonArray(tokens) && tokens.map((n) => n instanceof JsonNumber && [n.token, n.isInteger]),
    ).toEqual([
      ['1', true],
      ['1.0', false],
      ['1e2', false],
      ['-0', true],
      ['12345678901234567890', true],
    ]);
  });

  it('renders repr(), str(), type names and truthiness of parsed and plain values', () => {
    for (const [text, repr, str, isPlain] of REPR) {
      for (const v of values(text, isPlain)) expect([pyRepr(v), pyStr(v)], label(text)).toEqual([repr, str]);
    }
    for (const [text, typeName, truth, isPlain] of TYPES) {
      expect([pyTypeName(loads(text)), isTruthy(loads(text))], label(text)).toEqual([typeName, truth]);
      const plain: unknown = JSON.parse(text);
      expect(isTruthy(plain), label(text)).toBe(truth);
      if (isPlain) expect(pyTypeName(plain), label(text)).toBe(typeName);
    }
    for (const [names, repr] of TUPLE) expect(pyTuple(names)).toBe(repr);
  });

  it('serialises like json.dumps, raw or ASCII-escaped, compact or indented', () => {
    for (const [text, raw, ascii, isPlain] of DUMPS) {
      for (const v of values(text, isPlain)) {
        expect([pyJson(v), pyJson(v, { ensureAscii: true })], label(text)).toEqual([raw, ascii]);
      }
    }
    for (const [text, indented] of INDENTED) expect(pyJson(loads(text), { indent: 2 })).toBe(indented);
    // Deviation: a lone surrogate is escaped even raw, so the text stays valid UTF-8 (Python writes it raw).
    expect(pyJson({ lone: 'x\udc00y', pair: '\u{1F514}' })).toBe(
      '{"lone": "x\\udc00y", "pair": "\u{1F514}"}',
    );
    expect(pyJson({ raw: new RawJson('{"x": 1}'), ts: JsonNumber.float(1795975449) })).toBe(
      '{"raw": {"x": 1}, "ts": 1795975449.0}',
    );
  });

  it('escapes every UTF-16 code unit of a raw (ensure_ascii=False) string as json.dumps does', () => {
    // json.dumps(ensure_ascii=False) escapes `"` and `\\`, \b \f \n \r \t by their short forms and other
    // C0 controls as \u00xx; musubi also escapes lone surrogates (Python cannot encode them).
    const short: Record<string, string> = {
      '"': '\\"',
      '\\': '\\\\',
      '\b': '\\b',
      '\f': '\\f',
      '\n': '\\n',
      '\r': '\\r',
      '\t': '\\t',
    };
    const hex = (c: number): string => `\\u${c.toString(16).padStart(4, '0')}`;
    for (let code = 0; code < 0x10000; code++) {
      const ch = String.fromCharCode(code);
      const isSurrogate = code >= 0xd800 && code <= 0xdfff;
      const escaped = short[ch] ?? (code < 0x20 || isSurrogate ? hex(code) : ch);
      expect(pyJson(`a${ch}b`), hex(code)).toBe(`"a${escaped}b"`);
    }
    expect(pyJson('\ud83d\ude00 é')).toBe('"\ud83d\ude00 é"');
  });

  it('renders plain JS values as the Python values they stand for', () => {
    for (const [value, python, str, dumps] of PLAIN) {
      expect([pyStr(value), pyJson(value)], python).toEqual([str, dumps]);
    }
    // The yadon wire keeps JSON.stringify's null for non-finite numbers (docs of PyJsonOptions).
    expect(pyJson([NaN, Infinity, -Infinity], { nonFinite: 'null' })).toBe('[null, null, null]');
    for (const [x, repr] of FLOAT_REPR) expect(pyFloatRepr(x), repr).toBe(repr);
  });

  it('strips, splits lines and counts code points like Python str', () => {
    for (const [s, stripped] of STRIP) expect(pyStrip(s), label(s)).toBe(stripped);
    for (const [s, lines] of SPLITLINES) expect(pySplitLines(s), label(s)).toEqual(lines);
    for (const [s, n, first, hasMore] of CODE_POINTS) {
      expect([firstCodePoints(s, n), hasMoreCodePoints(s, n)], label(s)).toEqual([first, hasMore]);
    }
  });

  it('reads numbers like int() and float(), within the int digit limit', () => {
    for (const [s, n] of INT) expect(parsePyInt(s), label(s)).toBe(n);
    for (const [s, x] of FLOAT) expect(parsePyFloat(s), label(s)).toBe(x);
    for (const [text, n] of INT_OF) expect(pyIntOf(JSON.parse(text)), text).toBe(n);
  });
});
