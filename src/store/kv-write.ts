import { MusubiError } from '../core/errors.js';
import type { KvWriteOptions } from './store.js';

/** Serialises a KV value; a value JSON cannot represent is a programming error, not a store failure. */
export function kvValueText(value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined)
    throw new TypeError('kv values must be JSON-serialisable (got undefined or a function)');
  return text;
}

/** Throws STORE_CONFLICT unless `current` matches the expected revision (0: must not exist). */
export function checkRevision(
  key: string,
  current: number | undefined,
  options: KvWriteOptions | undefined,
): void {
  const expected = options?.expectedRevision;
  if (expected === undefined || expected === (current ?? 0)) return;
  throw new MusubiError('STORE_CONFLICT', `key ${key} is at revision ${current ?? 0}, expected ${expected}`, {
    details: { key, expectedRevision: expected, revision: current ?? 0 },
  });
}
