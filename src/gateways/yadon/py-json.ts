/**
 * Serialises a JSON value the way Python's `json.dumps(value, ensure_ascii=False)` does: `", "` and
 * `": "` separators, keys in insertion order, non-ASCII raw. Strings are escaped exactly as Python does
 * (`\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`, other controls as `\u00xx`), which JSON.stringify matches.
 */
export function pyDumps(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : 'null';
  if (Array.isArray(value)) return `[${value.map((v: unknown) => pyDumps(v)).join(', ')}]`;
  if (typeof value === 'object') {
    const parts = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${JSON.stringify(k)}: ${pyDumps(v)}`);
    return `{${parts.join(', ')}}`;
  }
  return 'null';
}
