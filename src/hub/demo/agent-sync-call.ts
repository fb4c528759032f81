import { connect } from 'node:net';
import { z } from 'zod';
import { MusubiError } from '../../core/errors.js';

/** Where the agent_sync gateway listens. */
export interface AgentSyncTarget {
  readonly host: string;
  readonly port: number;
}

/** A reply larger than this is not an agent_sync reply (listen replies stay under 60 KiB). */
const MAX_REPLY_BYTES = 1024 * 1024;
const replySchema = z.record(z.string(), z.unknown());

function parseReply(line: string, cmd: unknown): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    throw new MusubiError('GATEWAY_FRAME_INVALID', 'agent_sync reply is not JSON', { cause: err });
  }
  const reply = replySchema.safeParse(value);
  if (!reply.success) throw new MusubiError('GATEWAY_FRAME_INVALID', 'agent_sync reply is not an object');
  if (reply.data['ok'] !== true) {
    const error = typeof reply.data['error'] === 'string' ? reply.data['error'] : 'no error text';
    throw new MusubiError('INTERNAL', `agent_sync refused ${String(cmd)}: ${error}`, {
      details: { cmd: String(cmd), error },
    });
  }
  return reply.data;
}

/**
 * Sends one agent_sync request the way the v6 client does: one connection, one JSON line, one reply
 * line, close. Resolves the reply object when it says `ok: true`. Rejects with GATEWAY_UNAVAILABLE
 * (cannot connect, connection lost, no reply within `timeoutMs`), GATEWAY_FRAME_INVALID (a reply that
 * is not a JSON object), INTERNAL (an `ok: false` reply, its text in the message), or the reason of
 * `signal` when it aborts. The socket is always closed when the promise settles.
 */
export function callAgentSync(
  target: AgentSyncTarget,
  request: Readonly<Record<string, unknown>>,
  options: { readonly timeoutMs: number; readonly signal?: AbortSignal },
): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    options.signal?.throwIfAborted();
    const socket = connect({ host: target.host, port: target.port });
    const chunks: Buffer[] = [];
    let size = 0;
    let isSettled = false;
    const finish = (outcome: { error: unknown } | { line: string }): void => {
      if (isSettled) return;
      isSettled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      if ('error' in outcome) reject(outcome.error);
      else {
        try {
          resolve(parseReply(outcome.line, request['cmd']));
        } catch (err) {
          reject(err);
        }
      }
    };
    const unavailable = (message: string, cause?: unknown): { error: MusubiError } => ({
      error: new MusubiError('GATEWAY_UNAVAILABLE', `agent_sync ${String(request['cmd'])}: ${message}`, {
        ...(cause !== undefined && { cause }),
      }),
    });
    const onAbort = (): void => finish({ error: options.signal?.reason });
    const timer = setTimeout(() => finish(unavailable('no reply in time')), options.timeoutMs);
    timer.unref();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => socket.write(`${JSON.stringify(request)}\n`));
    socket.on('data', (chunk: Buffer) => {
      const nl = chunk.indexOf(0x0a);
      chunks.push(nl < 0 ? chunk : chunk.subarray(0, nl));
      size += nl < 0 ? chunk.length : nl;
      if (nl >= 0) finish({ line: Buffer.concat(chunks).toString('utf8') });
      else if (size > MAX_REPLY_BYTES) finish(unavailable('reply too large'));
    });
    socket.once('error', (err) => finish(unavailable(err.message, err)));
    socket.once('close', () => finish(unavailable('connection closed without a reply')));
  });
}
