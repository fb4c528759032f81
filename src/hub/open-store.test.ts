import { describe, expect, it } from 'vitest';
import { isMusubiError } from '../core/errors.js';
import { parseStoreUrl } from './open-store.js';

describe('parseStoreUrl', () => {
  it('never repeats credentials of a URL it does not support', () => {
    for (const url of [
      'nat://bob:s3cret-pass@h:4222',
      'natss://h:1?token=s3cret-pass',
      'redis://:s3cret-pass@h',
    ]) {
      let err: unknown;
      try {
        parseStoreUrl(url, '/tmp');
      } catch (e) {
        err = e;
      }
      expect(isMusubiError(err, 'STORE_URL_INVALID'), url).toBe(true);
      expect(String((err as Error).message)).not.toContain('s3cret-pass');
      expect(String((err as Error).message)).toContain('unsupported store URL');
    }
  });
});
