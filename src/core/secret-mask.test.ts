import { describe, expect, it } from 'vitest';
import { SecretMask } from './secret-mask.js';

const KEY = 'sk-ant-FAKE1234567890abcdef';
const TOKEN = 'gh0-secret-token-value';

describe('secret mask', () => {
  it('masks every occurrence, keeping only a public vendor prefix', () => {
    const mask = new SecretMask([KEY, TOKEN]);
    expect(mask.mask(`401 invalid x-api-key ${KEY} (again: ${KEY})`)).toBe(
      '401 invalid x-api-key sk-ant-…[masked] (again: sk-ant-…[masked])',
    );
    expect(mask.mask(`token=${TOKEN}`)).toBe('token=…[masked]');
    expect(new SecretMask(['ghp_abcdefghijklmnop']).mask('use ghp_abcdefghijklmnop')).toBe(
      'use ghp_…[masked]',
    );
    expect(new SecretMask(['AIzaSyFAKEFAKEFAKE']).mask('key=AIzaSyFAKEFAKEFAKE')).toBe('key=AIza…[masked]');
  });

  it('leaves values shorter than 8 characters and texts without a secret alone', () => {
    const mask = new SecretMask(['1', 'true', 'abc1234']);
    expect(mask.isEmpty).toBe(true);
    expect(mask.mask('1 is true, abc1234')).toBe('1 is true, abc1234');
    const text = 'nothing secret here';
    expect(new SecretMask([KEY]).mask(text)).toBe(text);
  });

  it('masks overlapping secrets as one stretch, so no part of either stays', () => {
    const mask = new SecretMask(['AAAA-BBBB', 'BBBB-CCCC', 'AAAA-BBBB-CCCC-DDDD']);
    expect(mask.mask('x AAAA-BBBB-CCCC y')).toBe('x …[masked] y');
    expect(mask.mask('x AAAA-BBBB-CCCC-DDDD y')).toBe('x …[masked] y');
    expect(mask.mask('AAAA-BBBBAAAA-BBBB')).toBe('…[masked]…[masked]');
  });

  it('masks the piece of a secret left at a cut: a tail, a cut line, a cut text', () => {
    const mask = new SecretMask([KEY]);
    // A stderr tail whose first bytes are the end of the key.
    expect(mask.mask('567890abcdef\nerror: 401')).toBe('…[masked]\nerror: 401');
    // A text cut after the start of the key.
    expect(mask.mask('x-api-key sk-ant-FAKE1234… [9 more characters]')).toBe(
      'x-api-key sk-ant-…[masked]… [9 more characters]',
    );
    expect(mask.mask('x-api-key sk-ant-FAKE123')).toBe('x-api-key sk-ant-…[masked]');
    expect(mask.mask('…4567890abcdef rest')).toBe('……[masked] rest');
    // The public prefix alone, or a few characters past it, say nothing of the key.
    expect(mask.mask('keys look like sk-ant-FAK')).toBe('keys look like sk-ant-FAK');
    expect(mask.mask('cdef and more')).toBe('cdef and more');
  });

  it('changes nothing in a masked text', () => {
    const mask = new SecretMask([KEY, TOKEN]);
    const once = mask.mask(`${KEY} / ${TOKEN} / sk-ant-FAKE12345…`);
    expect(mask.mask(once)).toBe(once);
  });

  it('masks every string inside a JSON-like value and shares what has no secret', () => {
    const mask = new SecretMask([KEY]);
    const clean = { usage: { inputTokens: 1, outputTokens: 2, costUsd: 0 } };
    const value = { text: `said ${KEY}`, argv: ['claude', KEY], exitCode: 1, isError: true, ...clean };
    const result = mask.maskDeep(value);
    expect(result).toEqual({
      ...value,
      text: 'said sk-ant-…[masked]',
      argv: ['claude', 'sk-ant-…[masked]'],
    });
    expect(result.usage).toBe(value.usage);
    expect(value.text).toBe(`said ${KEY}`);
    expect(mask.maskDeep(clean)).toBe(clean);
  });
});
