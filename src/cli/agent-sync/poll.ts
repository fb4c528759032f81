import { pyJson, type PyJsonInput } from '../../core/python/json-dumps.js';
import { isJsonObject, parseJson, type JsonObject } from '../../core/python/json-loads.js';
import { requestLine } from '../../gateways/agent-sync/agent-sync-client.js';

/** How long the monitor and notifier wait for one reply. */
const POLL_TIMEOUT_MS = 5_000;

/** Sends one request (connect, line, reply, close); resolves the reply object or null on any failure. */
export async function ask(
  target: { readonly host: string; readonly port: number },
  request: { readonly [key: string]: PyJsonInput | undefined },
): Promise<JsonObject | null> {
  const result = await requestLine({ ...target, line: pyJson(request), timeoutMs: POLL_TIMEOUT_MS });
  if (!result.ok) return null;
  const parsed = parseJson(result.line);
  return parsed.ok && isJsonObject(parsed.value) ? parsed.value : null;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
