import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { Clock, Timer } from '../../core/clock.js';
import { MusubiError } from '../../core/errors.js';

/** One server-sent event. `data` may span lines; `event` and `id` may not. */
export interface SseMessage {
  readonly data: string;
  readonly event?: string;
  readonly id?: string;
  /** Reconnection delay the client should use, in milliseconds. */
  readonly retryMs?: number;
}

const LINE_BREAK = /\r\n|\r|\n/;

/**
 * Renders one event in the text/event-stream format. A CR or LF in `event` or `id` would let a value
 * start a new field, so it is refused (USAGE_INVALID); `data` is split into one `data:` line per line.
 */
export function formatSseMessage(message: SseMessage): string {
  for (const field of ['event', 'id'] as const) {
    const value = message[field];
    if (value !== undefined && /[\r\n]/.test(value)) {
      throw new MusubiError('USAGE_INVALID', `SSE ${field} must not contain CR or LF`);
    }
  }
  let text = '';
  if (message.event !== undefined) text += `event: ${message.event}\n`;
  if (message.id !== undefined) text += `id: ${message.id}\n`;
  if (message.retryMs !== undefined) text += `retry: ${Math.max(0, Math.trunc(message.retryMs))}\n`;
  for (const line of message.data.split(LINE_BREAK)) text += `data: ${line}\n`;
  return `${text}\n`;
}

/** Options of {@link SseStream}. */
export interface SseStreamOptions {
  readonly response: ServerResponse;
  readonly clock: Clock;
  /** A comment line is sent this often so proxies and browsers keep the connection. */
  readonly heartbeatMs: number;
  /** A client that does not drain its buffer for this long is dropped (it resumes with Last-Event-ID). */
  readonly slowClientMs: number;
}

/**
 * A server-sent event stream on a raw response. `signal` aborts when the client leaves or `close()` is
 * called, so the producer can stop. Writes respect backpressure: `send` waits for `drain`, and a client
 * slower than `slowClientMs` is disconnected. `close()` is idempotent and ends the response.
 */
export class SseStream {
  readonly #options: SseStreamOptions;
  readonly #controller = new AbortController();
  #heartbeat: Timer | undefined;

  constructor(options: SseStreamOptions) {
    this.#options = options;
    const res = options.response;
    res.on('close', this.#onClientGone);
    res.on('error', this.#onClientGone);
  }

  /** Aborts when the stream ends for any reason. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Writes the status line and headers (fixed values only) and starts the heartbeat. */
  open(): void {
    this.#options.response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'x-content-type-options': 'nosniff',
    });
    this.#options.response.flushHeaders();
    this.#armHeartbeat();
  }

  /** Sends one event; resolves once it is handed to the socket (after `drain` when the buffer is full). */
  async send(message: SseMessage): Promise<void> {
    await this.#write(formatSseMessage(message));
  }

  /** Ends the stream. Idempotent. */
  close(): void {
    if (this.#controller.signal.aborted) return;
    this.#controller.abort(new MusubiError('ABORTED', 'event stream closed'));
    this.#heartbeat?.cancel();
    const res = this.#options.response;
    res.off('close', this.#onClientGone);
    res.off('error', this.#onClientGone);
    if (!res.writableEnded) res.end();
  }

  readonly #onClientGone = (): void => this.close();

  async #write(text: string): Promise<void> {
    const signal = this.#controller.signal;
    if (signal.aborted) return;
    if (this.#options.response.write(text)) return;
    // A client that does not drain in time is dropped; it resumes from its last id. (A clock timer, not
    // AbortSignal.timeout inside AbortSignal.any: that composite can be collected before it fires.)
    const slow = this.#options.clock.setTimer(() => this.close(), this.#options.slowClientMs);
    try {
      await once(this.#options.response, 'drain', { signal });
    } catch {
      this.close(); // the client left or was too slow: the stream is over either way
    } finally {
      slow.cancel();
    }
  }

  #armHeartbeat(): void {
    if (this.#controller.signal.aborted) return;
    this.#heartbeat = this.#options.clock.setTimer(() => {
      if (this.#controller.signal.aborted) return;
      void this.#write(': keep-alive\n\n').then(() => this.#armHeartbeat());
    }, this.#options.heartbeatMs);
  }
}
