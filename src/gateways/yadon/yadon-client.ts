import { connect } from 'node:net';
import type { Clock } from '../../core/clock.js';
import { pyJson } from '../../core/python/json-dumps.js';
import { pyErrorText, TIMED_OUT_TEXT } from './os-error-text.js';

/** Largest reply a client reads (replies up to 64 MiB must work). */
const MAX_REPLY_BYTES = 80 * 1024 * 1024;
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * The outcome of one agent-socket exchange. Failures carry the Python-style text of spec yadon.md 2.6
 * and the stage they happened in: `connect` (socket missing, refused — the agent is not there),
 * `io` (the connection broke), `parse` (the reply is not JSON), `timeout`.
 */
export type AgentExchange =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly stage: 'connect' | 'io' | 'parse' | 'timeout'; readonly text: string };

/** Options of {@link exchangeWithAgent} and {@link sendPetMessage}. */
export interface ClientOptions {
  /** Deadline of the whole exchange (connect, send, reply). */
  readonly timeoutMs: number;
  readonly clock: Clock;
  readonly signal?: AbortSignal;
}

function parseReply(bytes: Buffer): AgentExchange {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return { ok: false, stage: 'parse', text: "'utf-8' codec can't decode the reply" };
  }
  if (text.trim() === '')
    return { ok: false, stage: 'parse', text: 'Expecting value: line 1 column 1 (char 0)' };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, stage: 'parse', text: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * Sends one request to an agent socket the yadon way (spec yadon.md 2.3): connect, write the JSON,
 * half-close, read to end of stream, parse. Never rejects; an abort reads as a timeout.
 */
export function exchangeWithAgent(
  path: string,
  request: unknown,
  options: ClientOptions,
): Promise<AgentExchange> {
  return new Promise((resolve) => {
    const socket = connect({ path, allowHalfOpen: true });
    const chunks: Buffer[] = [];
    let size = 0;
    let isConnected = false;
    let isSettled = false;
    const finish = (outcome: AgentExchange): void => {
      if (isSettled) return;
      isSettled = true;
      timer.cancel();
      options.signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve(outcome);
    };
    const onAbort = (): void => finish({ ok: false, stage: 'timeout', text: TIMED_OUT_TEXT });
    const timer = options.clock.setTimer(onAbort, options.timeoutMs);
    if (options.signal?.aborted === true) return onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => {
      isConnected = true;
      socket.end(pyJson(request, { nonFinite: 'null' }));
    });
    socket.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REPLY_BYTES) finish({ ok: false, stage: 'parse', text: 'reply too large' });
      else chunks.push(chunk);
    });
    socket.once('end', () => finish(parseReply(Buffer.concat(chunks, size))));
    socket.once('error', (err) =>
      finish({ ok: false, stage: isConnected ? 'io' : 'connect', text: pyErrorText(err) }),
    );
    socket.once('close', () => finish(parseReply(Buffer.concat(chunks, size))));
  });
}

/**
 * Sends one bubble message to a pet socket (spec yadon.md 2.4): connect, write, close; the pet never
 * replies. Resolves null on success, else the error text (`timed out` on timeout). Never rejects.
 */
export function sendPetMessage(
  path: string,
  message: unknown,
  options: ClientOptions,
): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = connect({ path });
    let isSettled = false;
    const finish = (error: string | null): void => {
      if (isSettled) return;
      isSettled = true;
      timer.cancel();
      socket.destroy();
      resolve(error);
    };
    const timer = options.clock.setTimer(() => finish(TIMED_OUT_TEXT), options.timeoutMs);
    socket.once('connect', () => socket.end(pyJson(message, { nonFinite: 'null' }), () => finish(null)));
    socket.once('error', (err) => finish(pyErrorText(err)));
  });
}
