import { isJsonArray, isJsonObject, type JsonValue } from '../../core/python/json-loads.js';
import type { RenderedItem } from './mail-item.js';

/** Node timers cannot wait longer; a listen timeout beyond it means "no limit". */
const MAX_TIMER_MS = 2 ** 31 - 1;
const DEFAULT_LISTEN_TIMEOUT_MS = 60_000;

/**
 * A listen's `timeout` in milliseconds: absent 60 s, `null` no limit (Infinity), `true` 1 s, `false`
 * and numbers <= 0 no wait. Strings, arrays and objects give Python's comparison TypeError text.
 */
export function listenTimeoutMs(
  v: JsonValue | undefined,
): { readonly ms: number } | { readonly error: string } {
  if (v === undefined) return { ms: DEFAULT_LISTEN_TIMEOUT_MS };
  if (v === null) return { ms: Infinity };
  if (typeof v === 'boolean') return { ms: v ? 1000 : 0 };
  const unordered = (type: string): { error: string } => ({
    error: `'<=' not supported between instances of '${type}' and 'int'`,
  });
  if (typeof v === 'string') return unordered('str');
  if (isJsonArray(v)) return unordered('list');
  if (isJsonObject(v)) return unordered('dict');
  const ms = v.value * 1000;
  if (!(ms > 0)) return { ms: 0 };
  return { ms: ms > MAX_TIMER_MS ? Infinity : ms };
}

/**
 * A listen reply from pre-rendered items. `isTimeout` undefined (immediate path) omits the `timeout`
 * key; the wait path always carries it.
 */
export function listenReply(items: readonly RenderedItem[], isTimeout?: boolean): string {
  const messages = items.map((i) => i.json).join(', ');
  const tail = isTimeout === undefined ? '' : `, "timeout": ${isTimeout ? 'true' : 'false'}`;
  return `{"ok": true, "messages": [${messages}]${tail}}`;
}
