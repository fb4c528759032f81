import { MusubiError } from '../core/errors.js';

/** Parses a non-negative integer flag value (milliseconds, counts, cursors); USAGE_INVALID otherwise. */
export function parseNonNegativeInt(flag: string): (value: string) => number {
  return (value) => {
    if (!/^\d{1,15}$/.test(value)) {
      throw new MusubiError(
        'USAGE_INVALID',
        `${flag} must be a non-negative integer, got ${JSON.stringify(value)}`,
      );
    }
    return Number(value);
  };
}

/** Collects repeated `--header key=value` flags into a record. */
export function collectHeader(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const index = value.indexOf('=');
  if (index <= 0)
    throw new MusubiError('USAGE_INVALID', `--header needs key=value, got ${JSON.stringify(value)}`);
  return { ...previous, [value.slice(0, index)]: value.slice(index + 1) };
}
