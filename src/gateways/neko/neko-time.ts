/** ISO 8601 UTC with microseconds and `Z` (`2025-01-01T00:00:00.123000Z`), the wire's time format. */
export function isoMicros(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '000Z');
}
