import { z } from 'zod';
import { pyStr, pyTypeName } from '../../core/python/repr.js';

/** A request an agent socket accepts (spec yadon.md 3). */
export type AgentRequest =
  | {
      readonly kind: 'task';
      /** Absent or null on the wire: the receiver generates one. */
      readonly id: string | undefined;
      readonly instruction: string;
      /** Absent or null on the wire: the agent's default directory. */
      readonly projectDir: string | undefined;
    }
  | { readonly kind: 'status' }
  | { readonly kind: 'get_result'; readonly id: string };

/** The outcome of parsing: a request, or the `message` of the error reply (prefix included). */
export type ParsedAgentRequest =
  { readonly ok: true; readonly request: AgentRequest } | { readonly ok: false; readonly message: string };

/** Error-reply prefixes of spec yadon.md 5; clients match on them. */
const JSON_ERROR_PREFIX = 'JSONパースエラー: ';
const UNKNOWN_TYPE_PREFIX = '不明なメッセージタイプ: ';
export const CONNECTION_ERROR_PREFIX = '接続処理エラー: ';

const objectSchema = z.record(z.string(), z.unknown());
const decoder = new TextDecoder('utf-8', { fatal: true });

function notAnObject(value: unknown): ParsedAgentRequest {
  return {
    ok: false,
    message: `${CONNECTION_ERROR_PREFIX}'${pyTypeName(value)}' object has no attribute 'get'`,
  };
}

/** `Expecting value: line L column C (char N)` for a body that is empty or only whitespace. */
function emptyBodyDetail(text: string): string {
  const lines = text.split('\n');
  const column = (lines.at(-1) ?? '').length + 1;
  return `Expecting value: line ${lines.length} column ${column} (char ${text.length})`;
}

function parseTask(root: Record<string, unknown>): ParsedAgentRequest {
  const rawPayload = Object.hasOwn(root, 'payload') ? root['payload'] : {};
  const payload = objectSchema.safeParse(rawPayload);
  if (!payload.success || Array.isArray(rawPayload)) return notAnObject(rawPayload);
  const rawId = root['id'];
  const rawInstruction = payload.data['instruction'];
  const rawDir = payload.data['project_dir'];
  if (rawDir !== undefined && rawDir !== null && typeof rawDir !== 'string') {
    return { ok: false, message: `${CONNECTION_ERROR_PREFIX}project_dir must be a string` };
  }
  return {
    ok: true,
    request: {
      kind: 'task',
      id: rawId === undefined || rawId === null ? undefined : pyStr(rawId),
      instruction: rawInstruction === undefined ? '' : pyStr(rawInstruction),
      projectDir: rawDir === undefined || rawDir === null || rawDir === '' ? undefined : rawDir,
    },
  };
}

/**
 * Decodes one agent-socket request: strict UTF-8, then JSON (surrounding whitespace allowed), then the
 * `type` dispatch of spec yadon.md 3 and 5. Never throws; bad input yields the exact error message.
 */
export function parseAgentRequest(bytes: Uint8Array): ParsedAgentRequest {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return { ok: false, message: `${CONNECTION_ERROR_PREFIX}'utf-8' codec can't decode the request` };
  }
  if (text.trim() === '') return { ok: false, message: `${JSON_ERROR_PREFIX}${emptyBodyDetail(text)}` };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, message: `${JSON_ERROR_PREFIX}${err instanceof Error ? err.message : String(err)}` };
  }
  const root = objectSchema.safeParse(value);
  if (!root.success || Array.isArray(value)) return notAnObject(value);
  const type = Object.hasOwn(root.data, 'type') ? pyStr(root.data['type']) : '';
  switch (type) {
    case 'task':
      return parseTask(root.data);
    case 'status':
      return { ok: true, request: { kind: 'status' } };
    case 'get_result':
      return { ok: true, request: { kind: 'get_result', id: pyStr(root.data['id']) } };
    default:
      return { ok: false, message: `${UNKNOWN_TYPE_PREFIX}${type}` };
  }
}
