import { describe, expect, it } from 'vitest';
import { promiseTry } from './promise-try.js';

describe('promiseTry', () => {
  it('resolves a value, hands back a promise as it is and turns a throw into a rejection', async () => {
    await expect(promiseTry(() => 7)).resolves.toBe(7);
    const pending = Promise.resolve('same');
    expect(promiseTry(() => pending)).toBe(pending);
    const thrown = new Error('bad argument');
    let result: Promise<never> | undefined;
    expect(() => {
      result = promiseTry(() => {
        throw thrown;
      });
    }).not.toThrow();
    await expect(result).rejects.toBe(thrown);
  });
});
