import { pyJson, type PyJsonInput } from '../../core/python/json-dumps.js';

/** The exact error texts of the wire contract (spec sections 3 and 5). */
export const WireErrors = {
  invalidJson: 'Invalid JSON',
  /** musubi's deviation (docs/agent-sync.md): numbers no Python or strict JSON client could read back. */
  numberOutOfRange: 'Invalid JSON: number out of range (integers up to 4300 digits, finite floats)',
  notAnObject: 'Invalid request: expected a JSON object',
  invalidUtf8: 'Invalid UTF-8',
  tooLong: 'Request too long (max 65536 bytes)',
  messageTooLarge: 'Message too large (max 61000 bytes)',
  testResultTooLarge: 'Test result too large (max 61000 bytes)',
  invalidOffset: 'Invalid offset',
  invalidLimit: 'Invalid limit',
} as const;

// The reply of most commands (every send), rendered once.
const PLAIN_OK = pyJson({ ok: true });

/** `{"ok": true, ...fields}` with Python separators, `ok` first, fields in the given order. */
export function okReply(fields?: { readonly [key: string]: PyJsonInput | undefined }): string {
  return fields === undefined ? PLAIN_OK : pyJson({ ok: true, ...fields });
}

/** `{"ok": false, "error": "<text>"}`. */
export function errorReply(error: string): string {
  return pyJson({ ok: false, error });
}

/** `unhashable type: 'list'` / `'dict'`: an array or object used as a name. */
export function unhashableReply(type: 'list' | 'dict'): string {
  return errorReply(`unhashable type: '${type}'`);
}
