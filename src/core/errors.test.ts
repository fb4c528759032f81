import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, MusubiError, isMusubiError } from './errors.js';

describe('errors', () => {
  it('documents every code in docs/errors.md', () => {
    const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    const missing = Object.values(ErrorCodes).filter((code) => !doc.includes(`| \`${code}\` |`));
    expect(missing).toEqual([]);
  });

  it('uses each code string as its own key so codes cannot drift', () => {
    for (const [key, value] of Object.entries(ErrorCodes)) expect(value).toBe(key);
  });

  it('renders the wire shape without a stack when serialised', () => {
    const err = new MusubiError('NOT_FOUND', 'no such delivery', { details: { id: 'x' } });
    expect(JSON.parse(JSON.stringify(err))).toEqual({
      code: 'NOT_FOUND',
      message: 'no such delivery',
      details: { id: 'x' },
    });
    expect(isMusubiError(err, 'NOT_FOUND')).toBe(true);
    expect(isMusubiError(err, 'STORE_CLOSED')).toBe(false);
    expect(isMusubiError(new Error('x'))).toBe(false);
  });
});
